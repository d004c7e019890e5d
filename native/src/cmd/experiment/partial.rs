//! The unfinished training runs of an experiment, kept on disk so that a killed
//! experiment loses at most `train.run.checkpoint_every` steps of one run (the project's
//! rule: never lost work). Before these folders existed, a kill 100,453 steps into a
//! 131,072-step run of the law test lost 2.5 hours of training.
//!
//! Each run trains in `OUT/partial/LABEL-CRC/`, CRC being the CRC-32 of the run's resolved
//! config (runs that differ in any setting, a budget or a learning rate, never share a
//! folder):
//! - `latest.ckpt`: the training state (model, AdamW moments, step, plateau windows),
//!   written atomically every `checkpoint_every` steps and at the run's end;
//! - `progress.json`: `{"step", "train_s", "last_loss"}` at that checkpoint (training
//!   seconds so far, the last logged loss);
//! - `step-NNNNNNNNN.npy`: each recorded snapshot of the probe texts, `[texts, d_model]`
//!   f32, written when it is taken (before the checkpoint of that step).
//!
//! Running the same command again continues every run from its checkpoint: same batches,
//! same optimiser state, so every number equals an uninterrupted run's
//! (`tests/experiment.rs` kills one with SIGKILL and compares), and finished runs are not
//! trained again. `OUT/partial` is removed once the experiment has written its report.

use super::Training;
use crate::progress::Progress;
use anyhow::{Context, Result, bail};
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::experiments::multilingual::{OnRecord, RecordingTask, Snapshot};
use prh_core::formats::npy::{npy_bytes, read_npy};
use prh_core::models::text_encoder::TextEncoder;
use prh_core::tasks::text::TextTask;
use prh_core::train::checkpoint::{Checkpoint, write_atomic};
use prh_core::train::{RunSink, TrainSummary, train_on_devices};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The folder of unfinished runs in report folder `out`.
pub(super) fn partial_dir(out: &Path) -> PathBuf {
    out.join("partial")
}

/// One run's folder: `root/LABEL-CRC` (label's characters outside `[A-Za-z0-9.-]` as `_`).
fn run_dir(root: &Path, label: &str, config_toml: &str) -> PathBuf {
    let mut crc = flate2::Crc::new();
    crc.update(config_toml.as_bytes());
    let slug: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    root.join(format!("{slug}-{:08x}", crc.sum()))
}

/// `progress.json`: where the run stood at its latest checkpoint.
#[derive(serde::Serialize, serde::Deserialize)]
struct Standing {
    step: usize,
    train_s: f64,
    /// `null` before the first logged loss (JSON has no NaN).
    last_loss: Option<f64>,
}

/// A run continued from its folder.
struct Resumed {
    checkpoint: Checkpoint,
    snapshots: Vec<Snapshot>,
    /// Training seconds before the interruption (those of the steps it keeps).
    train_s: f64,
    /// The last logged loss (a finished run's final loss), NaN when unknown.
    last_loss: f64,
}

/// Reads `dir`'s run back if it holds a checkpoint of `config_toml`: its checkpoint, the
/// snapshots taken up to its step (`rows` rows each) and its standing. `None` when there
/// is no checkpoint yet (the folder is then emptied: snapshots without a checkpoint are
/// retaken). A checkpoint that does not verify, or of another config, is an error naming
/// the file and the way out, never a silent restart that would hide a fault.
fn resume(dir: &Path, config_toml: &str, rows: usize) -> Result<Option<Resumed>> {
    let ckpt = dir.join("latest.ckpt");
    if !ckpt.exists() {
        if dir.exists() {
            std::fs::remove_dir_all(dir)
                .with_context(|| format!("clearing the unstarted run {}", dir.display()))?;
        }
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        return Ok(None);
    }
    let restart = || format!("delete {} to train this run from its start", dir.display());
    let checkpoint = Checkpoint::read(&ckpt).with_context(restart)?;
    if checkpoint.meta.config != config_toml {
        bail!(
            "{}: its config is not this run's (same folder name, another config); {}",
            ckpt.display(),
            restart()
        );
    }
    let step = checkpoint.meta.step;
    let mut snapshots = Vec::new();
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let Some(s) = name
            .strip_prefix("step-")
            .and_then(|n| n.strip_suffix(".npy"))
        else {
            continue;
        };
        let s: usize = s
            .parse()
            .with_context(|| format!("{}: expected step-<number>.npy", path.display()))?;
        // Snapshots after the checkpoint were taken by steps that will be redone.
        if s > step {
            continue;
        }
        let file = std::fs::File::open(&path).with_context(|| format!("{}", path.display()))?;
        let (shape, values) = read_npy(&path.display().to_string(), "snapshot", file)?;
        if shape.len() != 2 || shape[0] != rows {
            bail!(
                "{}: expected a [{rows}, d_model] snapshot, found shape {shape:?}; {}",
                path.display(),
                restart()
            );
        }
        snapshots.push(Snapshot {
            step: s,
            // f32 -> f64 -> f32 is exact.
            embeddings: values.into_iter().map(|v| v as f32).collect(),
        });
    }
    snapshots.sort_by_key(|s| s.step);
    if snapshots.first().map(|s| s.step) != Some(0) {
        bail!(
            "{}: no step-000000000.npy (the initialisation's snapshot); {}",
            dir.display(),
            restart()
        );
    }
    // The standing is written right after the checkpoint: a kill between the two leaves
    // the previous one, whose seconds undercount a little and whose loss is stale.
    let standing: Option<Standing> = std::fs::read(dir.join("progress.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let (train_s, last_loss) = match standing {
        Some(st) if st.step == step => (st.train_s, st.last_loss.unwrap_or(f64::NAN)),
        Some(st) => (st.train_s, f64::NAN),
        None => (0.0, f64::NAN),
    };
    Ok(Some(Resumed {
        checkpoint,
        snapshots,
        train_s,
        last_loss,
    }))
}

/// Writes each snapshot into `dir` as `step-NNNNNNNNN.npy`, atomically.
fn keep_snapshots(dir: PathBuf, rows: usize) -> OnRecord {
    Box::new(move |s: &Snapshot| {
        let d = s.embeddings.len() / rows.max(1);
        let bytes = npy_bytes(&[rows, d], &s.embeddings)?;
        write_atomic(&dir.join(format!("step-{:09}.npy", s.step)), &bytes)
    })
}

/// A run's sink: progress on stderr, training seconds continued across interruptions,
/// the latest checkpoint and its standing into the run's folder.
struct PartialSink {
    dir: PathBuf,
    start: Instant,
    /// Training seconds before this process.
    before: f64,
    last_loss: f64,
    progress: Progress,
}

impl RunSink for PartialSink {
    fn now(&self) -> f64 {
        self.before + self.start.elapsed().as_secs_f64()
    }
    fn log(&mut self, record: &serde_json::Value) -> prh_core::Result<()> {
        if let Some(l) = record["loss"].as_f64() {
            self.last_loss = l;
        }
        Ok(())
    }
    fn save(&mut self, name: &str, ck: &Checkpoint) -> prh_core::Result<()> {
        // Experiments select no best checkpoint; only the latest resumes.
        if name != "latest" {
            return Ok(());
        }
        ck.write(&self.dir.join("latest.ckpt"))?;
        let standing = Standing {
            step: ck.meta.step,
            train_s: self.now(),
            last_loss: Some(self.last_loss).filter(|l| l.is_finite()),
        };
        let bytes =
            serde_json::to_vec(&standing).map_err(|e| prh_core::Error::invalid(e.to_string()))?;
        write_atomic(&self.dir.join("progress.json"), &bytes)
    }
    fn progress(&mut self, step: usize, _total: usize, loss: f64) {
        self.progress.update(step, loss);
    }
}

/// One trained encoder: the task with its snapshots, the training summary, and its
/// training seconds (summed over interruptions).
pub(super) struct Recorded<B: AutodiffBackend> {
    pub task: RecordingTask,
    pub summary: TrainSummary<TextEncoder<B>>,
    pub train_s: f64,
}

/// Trains `inner` from scratch, or from its checkpoint in `training.partial` (a finished
/// run is read back, not trained again), while recording `texts`' embeddings at step 0
/// and at every evaluation step: the run every experiment does per objective, seed (and
/// language), on one device per `run.data_parallel` replica. `label` names the run in the
/// progress output and in its folder's name.
pub(super) fn train_recording<B: AutodiffBackend>(
    inner: TextTask,
    texts: Vec<String>,
    config_toml: &str,
    label: &str,
    training: Training<'_, B>,
) -> Result<Recorded<B>> {
    let (run, optim) = (inner.cfg.run.clone(), inner.cfg.optim.clone());
    let batch = inner.cfg.views.batch_size;
    let rows = texts.len();
    let dir = run_dir(training.partial, label, config_toml);
    let resumed = resume(&dir, config_toml, rows)?;
    let start = resumed.as_ref().map_or(0, |r| r.checkpoint.meta.step);
    let mut sink = PartialSink {
        dir: dir.clone(),
        start: Instant::now(),
        before: resumed.as_ref().map_or(0.0, |r| r.train_s),
        last_loss: resumed.as_ref().map_or(f64::NAN, |r| r.last_loss),
        progress: Progress::new(label, run.steps, start, batch),
    };
    let mut task = RecordingTask {
        inner,
        texts,
        snapshots: Vec::new(),
        on_record: Some(keep_snapshots(dir.clone(), rows)),
    };
    let checkpoint = match resumed {
        Some(r) => {
            crate::progress::note(&format!(
                "{label}: continuing from step {start} of {} ({})",
                run.steps,
                dir.display()
            ));
            task.snapshots = r.snapshots;
            Some(r.checkpoint)
        }
        None => {
            task.record_init::<B>(&training.devices.main())?;
            None
        }
    };
    let mut summary = train_on_devices::<B, _>(
        &mut task,
        &run,
        &optim,
        config_toml,
        checkpoint.as_ref(),
        &mut sink,
        &training.devices.replicas(run.data_parallel),
    )?;
    sink.progress.finish();
    // A run read back finished takes no step here: its loss is the one it logged last.
    if summary.last_loss.is_nan() {
        summary.last_loss = sink.last_loss;
    }
    Ok(Recorded {
        task,
        summary,
        train_s: sink.now(),
    })
}
