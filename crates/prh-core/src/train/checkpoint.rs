//! Training checkpoints: model, optimizer state, step, RNG scheme and config in one
//! checksummed file, written atomically (nanoGPT's "bundle everything so `--resume`
//! continues exactly").
//!
//! Layout (`.ckpt`):
//!
//! ```text
//! b"PRHCKPT1" | u64 LE header length | header JSON | model record | optimizer record
//! ```
//!
//! The header ([`CheckpointMeta`]) stores the byte lengths and a CRC-32 of the two
//! records; [`Checkpoint::from_bytes`] refuses a file whose checksum does not match, so a
//! torn or corrupted file is never silently loaded. Records are burn's full-precision
//! binary records, so a round trip is bit-exact.
//!
//! The RNG needs no state: every draw is `f(seed, stream, step)` (see [`crate::rng`]).

use burn::module::Module;
use burn::prelude::Backend;
use burn::record::{BinBytesRecorder, FullPrecisionSettings, Record, Recorder};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

const MAGIC: &[u8; 8] = b"PRHCKPT1";
/// Format version written into each header.
pub const CHECKPOINT_VERSION: u32 = 1;

/// What a checkpoint says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    /// Format version ([`CHECKPOINT_VERSION`]).
    pub version: u32,
    /// Optimiser steps already taken; training resumes at this step.
    pub step: usize,
    /// The run seed; with `step` it determines every later random draw.
    pub seed: u64,
    /// How random draws are derived (documentation for readers of the file).
    pub rng: String,
    /// The resolved run config (TOML).
    pub config: String,
    /// Best evaluation score so far, if any.
    pub best: Option<f64>,
    /// The plateau rule's state (`run.plateau_window`), so a resumed run stops where an
    /// uninterrupted one would (absent in files written before it existed).
    #[serde(default)]
    pub plateau: Plateau,
    /// Byte length of the model record.
    pub model_len: usize,
    /// Byte length of the optimizer record.
    pub optim_len: usize,
    /// CRC-32 of model record followed by optimizer record.
    pub crc32: u32,
}

/// Training stops on a plateau of its own loss (`run.plateau_window = w > 0`): the loss is
/// averaged over windows of `w` steps, and the run has converged when the last `patience`
/// windows together lowered the best window mean by less than `run.plateau_tol` times the
/// whole drop since the first window (scale-free: the loss may be negative, as the
/// spectral loss is). Comparing best means over `patience` windows, not two neighbours,
/// keeps one noisy window from ending a run whose loss still falls slowly (measured: with
/// neighbours, bad-view runs stopped at 200-250 steps with sin-theta 0.54-0.77 to F, and
/// reach 0.11 by 2000).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    /// Mean loss of each finished window, in order.
    pub windows: Vec<f64>,
    /// Sum of the losses of the window in progress.
    pub partial: f64,
    /// Steps in the window in progress.
    pub count: usize,
    /// The step at which the rule stopped the run, once it has.
    pub stopped_at: Option<usize>,
}

impl Plateau {
    /// Adds the loss of step `done` (1-based) with windows of `window` steps, `patience`
    /// windows and tolerance `tol`; returns true when the run has converged (and records
    /// `done`). `window = 0` turns the rule off.
    pub fn push(
        &mut self,
        done: usize,
        loss: f64,
        window: usize,
        patience: usize,
        tol: f64,
    ) -> bool {
        if window == 0 || self.stopped_at.is_some() {
            return self.stopped_at.is_some();
        }
        self.partial += loss;
        self.count += 1;
        if self.count < window {
            return false;
        }
        self.windows.push(self.partial / window as f64);
        (self.partial, self.count) = (0.0, 0);
        let (w, p) = (&self.windows, patience.max(1));
        if w.len() < p + 2 {
            return false;
        }
        let split = w.len() - p;
        let min = |xs: &[f64]| xs.iter().copied().fold(f64::INFINITY, f64::min);
        let (before, recent) = (min(&w[..split]), min(&w[split..]));
        let total = w[0] - before.min(recent);
        if total > 0.0 && before - recent < tol * total {
            self.stopped_at = Some(done);
            return true;
        }
        false
    }
}

/// A checkpoint in memory.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    /// Header.
    pub meta: CheckpointMeta,
    /// Model record bytes (see [`record_to_bytes`]).
    pub model: Vec<u8>,
    /// Optimizer record bytes.
    pub optim: Vec<u8>,
}

fn crc(parts: &[&[u8]]) -> u32 {
    let mut c = flate2::Crc::new();
    for p in parts {
        c.update(p);
    }
    c.sum()
}

impl Checkpoint {
    /// Bundles records and bookkeeping, computing lengths and checksum.
    pub fn new(
        step: usize,
        seed: u64,
        config: String,
        best: Option<f64>,
        model: Vec<u8>,
        optim: Vec<u8>,
    ) -> Self {
        let meta = CheckpointMeta {
            version: CHECKPOINT_VERSION,
            step,
            seed,
            rng: "ChaCha8(derive_seed(seed, stream, step)); no state beyond seed and step".into(),
            config,
            best,
            plateau: Plateau::default(),
            model_len: model.len(),
            optim_len: optim.len(),
            crc32: crc(&[&model, &optim]),
        };
        Self { meta, model, optim }
    }

    /// Serialises to the `.ckpt` layout.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let header = serde_json::to_vec(&self.meta)
            .map_err(|e| Error::invalid(format!("checkpoint header: {e}")))?;
        let mut out = Vec::with_capacity(16 + header.len() + self.model.len() + self.optim.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(header.len() as u64).to_le_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(&self.model);
        out.extend_from_slice(&self.optim);
        Ok(out)
    }

    /// Parses the `.ckpt` layout and verifies lengths and checksum (`source` names the
    /// file in errors).
    pub fn from_bytes(source: &str, bytes: &[u8]) -> Result<Self> {
        if bytes.len() < 16 || &bytes[..8] != MAGIC {
            return Err(Error::format(
                source,
                "magic",
                "not a prh checkpoint (expected PRHCKPT1)",
            ));
        }
        let mut len = [0u8; 8];
        len.copy_from_slice(&bytes[8..16]);
        let hlen = u64::from_le_bytes(len) as usize;
        let body = bytes.get(16..).unwrap_or_default();
        let header = body
            .get(..hlen)
            .ok_or_else(|| Error::format(source, "header", "file truncated"))?;
        let meta: CheckpointMeta = serde_json::from_slice(header)
            .map_err(|e| Error::format(source, "header", e.to_string()))?;
        if meta.version != CHECKPOINT_VERSION {
            return Err(Error::format(
                source,
                "version",
                format!("expected {CHECKPOINT_VERSION}, got {}", meta.version),
            ));
        }
        let rest = &body[hlen..];
        // The lengths come from the file: add them without overflow.
        let want = meta.model_len.checked_add(meta.optim_len);
        if want != Some(rest.len()) {
            return Err(Error::format(
                source,
                "records",
                format!(
                    "header says {} + {} bytes, found {} (truncated?)",
                    meta.model_len,
                    meta.optim_len,
                    rest.len()
                ),
            ));
        }
        let (model, optim) = rest.split_at(meta.model_len);
        let sum = crc(&[model, optim]);
        if sum != meta.crc32 {
            return Err(Error::format(
                source,
                "crc32",
                format!(
                    "checksum mismatch (stored {:08x}, computed {sum:08x}): file is corrupted",
                    meta.crc32
                ),
            ));
        }
        Ok(Self {
            meta,
            model: model.to_vec(),
            optim: optim.to_vec(),
        })
    }

    /// Writes atomically: to `path.tmp`, flushed to disk, then renamed over `path`, so a
    /// crash leaves either the old or the new checkpoint, never a torn one.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn write(&self, path: &std::path::Path) -> Result<()> {
        write_atomic(path, &self.to_bytes()?)
    }

    /// Reads and verifies a checkpoint file.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read(path: &std::path::Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::from_bytes(&path.display().to_string(), &bytes)
    }
}

/// Writes `bytes` to `path` atomically (temp file + fsync + rename).
#[cfg(not(target_arch = "wasm32"))]
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let mut f = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
    f.write_all(bytes).map_err(|e| Error::io(&tmp, e))?;
    f.sync_all().map_err(|e| Error::io(&tmp, e))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
    // The rename itself lives in the folder's entry table: sync the folder too so a power
    // loss after we return cannot bring back the old file (a no-op for a kill).
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(dir, e))?;
    }
    Ok(())
}

/// Bytes a checkpoint of a model with `params` f32 parameters takes on disk: the weights
/// plus AdamW's two moments, 4 bytes each (`12 * params`), plus 64 KiB for the header
/// (config TOML) and burn's record framing.
pub fn estimated_size(params: usize) -> u64 {
    12 * params as u64 + 64 * 1024
}

/// Free space [`preflight`] asks for: three checkpoints (`latest`, its `.tmp` while
/// being replaced, and `best`) — `3 * estimated_size(params)`.
pub fn space_needed(params: usize) -> u64 {
    3 * estimated_size(params)
}

/// Checks that the run folder `dir` (and its `checkpoints/`) can be created and that a
/// probe file can be written, flushed to disk and removed: an unwritable folder is
/// reported before any work, not at the first checkpoint. Errors name the folder.
#[cfg(not(target_arch = "wasm32"))]
pub fn check_writable(dir: &std::path::Path) -> Result<()> {
    use std::io::Write;
    let ckdir = dir.join("checkpoints");
    std::fs::create_dir_all(&ckdir)
        .map_err(|e| Error::format(dir, "run folder", format!("cannot be created: {e}")))?;
    let probe = ckdir.join(".prh-write-probe");
    let written = std::fs::File::create(&probe).and_then(|mut f| {
        f.write_all(&[0u8; 4096])?;
        f.sync_all()
    });
    // Remove the probe even when the write failed half way (a full disk).
    let removed = std::fs::remove_file(&probe);
    written.map_err(|e| Error::format(dir, "run folder", format!("not writable: {e}")))?;
    removed.map_err(|e| Error::io(&probe, e))
}

/// [`check_writable`], then that the file system of `dir` has at least
/// [`space_needed`]`(params)` bytes free. Errors name the folder, the bytes needed and
/// the bytes available, so a full disk is reported before training starts.
#[cfg(not(target_arch = "wasm32"))]
pub fn preflight(dir: &std::path::Path, params: usize) -> Result<()> {
    check_writable(dir)?;
    let available = fs4::available_space(dir).map_err(|e| Error::io(dir, e))?;
    let needed = space_needed(params);
    if available < needed {
        return Err(Error::format(
            dir,
            "free space",
            format!(
                "{needed} bytes needed (3 checkpoints of ~{} bytes for {params} parameters: \
                 weights + 2 AdamW moments), {available} bytes available",
                estimated_size(params)
            ),
        ));
    }
    Ok(())
}

type Rec = BinBytesRecorder<FullPrecisionSettings>;

/// A module's parameters as full-precision burn record bytes.
pub fn module_to_bytes<B: Backend, M: Module<B>>(module: &M) -> Result<Vec<u8>> {
    record_to_bytes::<B, _>(module.clone().into_record())
}

/// Loads record bytes into `module` (whose structure must match).
pub fn module_from_bytes<B: Backend, M: Module<B>>(
    module: M,
    bytes: &[u8],
    device: &B::Device,
) -> Result<M> {
    let record = record_from_bytes::<B, M::Record>(bytes, device)?;
    Ok(module.load_record(record))
}

/// Any burn record (model or optimizer state) as full-precision bytes.
pub fn record_to_bytes<B: Backend, R: Record<B>>(record: R) -> Result<Vec<u8>> {
    Recorder::<B>::record(&Rec::default(), record, ())
        .map_err(|e| Error::invalid(format!("encode record: {e}")))
}

/// Decodes bytes written by [`record_to_bytes`].
pub fn record_from_bytes<B: Backend, R: Record<B>>(bytes: &[u8], device: &B::Device) -> Result<R> {
    Recorder::<B>::load(&Rec::default(), bytes.to_vec(), device).map_err(|e| {
        Error::invalid(format!(
            "decode record (architecture or config mismatch?): {e}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plateau rule: windows of 3 steps and a patience of 4 windows on a loss that
    /// falls, then flattens; it stops once 4 windows lowered the best mean by less than 10%
    /// of the drop so far, and a rule fed the same losses in two halves (a resume through
    /// the serialised state) agrees.
    #[test]
    fn the_plateau_rule_stops_when_the_loss_flattens() {
        let losses: Vec<f64> = (0..30)
            .map(|i| {
                if i < 12 {
                    -(i as f64)
                } else {
                    -11.0 - 0.01 * i as f64
                }
            })
            .collect();
        let run = |xs: &[f64], p: &mut Plateau, from: usize| {
            xs.iter()
                .enumerate()
                .find(|(i, l)| p.push(from + i + 1, **l, 3, 4, 0.1))
                .map(|(i, _)| from + i + 1)
        };
        let mut p = Plateau::default();
        let stop = run(&losses, &mut p, 0);
        // Windows -1, -4, -7, -10, -11.13, -11.16, ...: after window 9 (step 27) the last
        // four improved the best by 0.12 < 0.1 x 10.25.
        assert_eq!(stop, Some(27), "{p:?}");
        assert_eq!(p.stopped_at, Some(27));
        assert!(p.push(28, 0.0, 3, 4, 0.1), "a stopped run stays stopped");
        let mut q = Plateau::default();
        assert_eq!(run(&losses[..10], &mut q, 0), None);
        let mut q: Plateau = serde_json::from_str(&serde_json::to_string(&q).unwrap()).unwrap();
        assert_eq!(run(&losses[10..], &mut q, 10), Some(27));
        // One noisy window does not stop a run that still improves.
        let mut noisy = Plateau::default();
        let zigzag = |i: usize| -(i as f64) + if (i / 3).is_multiple_of(2) { 0.0 } else { 5.0 };
        assert!(!(0..60).any(|i| noisy.push(i + 1, zigzag(i), 3, 4, 0.1)));
        // Window 0 is off; a rising loss never counts as converged.
        let mut off = Plateau::default();
        assert!(!(1..100).any(|i| off.push(i, 1.0, 0, 4, 0.1)));
        let mut rising = Plateau::default();
        assert!(!(1..100).any(|i| rising.push(i, i as f64, 3, 4, 0.1)));
    }
    use burn::backend::NdArray;
    use burn::nn::{Linear, LinearConfig};

    #[test]
    fn round_trip_is_bit_exact_and_corruption_is_caught() {
        let device = Default::default();
        let lin: Linear<NdArray> = LinearConfig::new(3, 2).init(&device);
        // burn initialises parameters lazily, and a clone initialises on its own; read
        // once so the saved record and `lin` hold the same values.
        let _ = lin.weight.val();
        let bytes = module_to_bytes::<NdArray, _>(&lin).unwrap();
        let ck = Checkpoint::new(7, 42, "[run]\n".into(), Some(0.5), bytes, vec![1, 2, 3]);
        let file = ck.to_bytes().unwrap();
        let back = Checkpoint::from_bytes("x.ckpt", &file).unwrap();
        assert_eq!(back.meta, ck.meta);
        let fresh: Linear<NdArray> = LinearConfig::new(3, 2).init(&device);
        let loaded = module_from_bytes::<NdArray, _>(fresh, &back.model, &device).unwrap();
        let a = lin.weight.val().into_data();
        let b = loaded.weight.val().into_data();
        assert_eq!(a, b);

        let mut bad = file.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let e = Checkpoint::from_bytes("x.ckpt", &bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.ckpt") && e.contains("crc32"), "{e}");
        let e = Checkpoint::from_bytes("x.ckpt", &file[..file.len() - 2])
            .unwrap_err()
            .to_string();
        assert!(e.contains("truncated"), "{e}");
        assert!(Checkpoint::from_bytes("x.ckpt", b"hello world, not").is_err());
    }

    #[test]
    fn atomic_write_and_read() {
        let dir = std::env::temp_dir().join(format!("prh-ckpt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("latest.ckpt");
        let ck = Checkpoint::new(1, 2, String::new(), None, vec![9; 10], vec![]);
        ck.write(&p).unwrap();
        assert!(!dir.join("latest.ckpt.tmp").exists());
        assert_eq!(Checkpoint::read(&p).unwrap().model, vec![9; 10]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
