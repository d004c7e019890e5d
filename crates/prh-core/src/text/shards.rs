//! Streaming, sharded corpora: training on a corpus larger than memory (issue 10.4).
//!
//! A sharded corpus is a list of JSONL files (`{"id": ..., "texts": [...]}` per line, as
//! [`crate::text::corpus::Corpus::from_jsonl`]), each plain or gzip-compressed (recognised by
//! its magic bytes `1f 8b`, whatever its name). [`ShardStream`] reads them lazily, one
//! line at a time, and shuffles through a bounded buffer (as `tf.data`'s `shuffle`):
//!
//! 1. epoch `e` visits the shards in a seeded random order (a function of `(seed, e)`);
//! 2. the buffer is filled with the first `capacity` groups; each draw takes a uniformly
//!    random slot, returns its group and refills the slot with the next group read;
//! 3. when every shard is exhausted the buffer drains in random order and epoch `e + 1`
//!    begins.
//!
//! So every group is returned exactly once per epoch, at most `capacity` groups (plus the
//! line being parsed) are in memory, and the sequence is a function of the seed alone:
//! resuming at step `s` replays the stream and skips what steps `0..s` consumed. Errors
//! name the shard file and line.
//!
//! ```text
//! [data]
//! source = "shards"
//! path = "corpus/part-*.jsonl.gz,extra.jsonl"   # comma-separated files or glob patterns
//! shuffle_buffer = 10000
//! ```

use std::io::{BufRead, BufReader, Read};

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::rng::{Stream, derive_seed, generator};
use crate::text::corpus::{Group, parse_group_line};
use crate::{Error, Result};

/// A line reader over a shard's (decompressed) bytes. `Send + Sync` so a task holding a
/// stream can be shared by the data-parallel replicas' threads.
pub type ShardReader = Box<dyn BufRead + Send + Sync>;

/// Opens a shard by index.
pub type OpenShard = Box<dyn Fn(usize) -> Result<ShardReader> + Send + Sync>;

/// Wraps `reader` in a gzip decoder when its first bytes are the gzip magic `1f 8b`.
pub fn maybe_gunzip(reader: impl Read + Send + Sync + 'static) -> std::io::Result<ShardReader> {
    let mut r = BufReader::new(reader);
    let gz = r.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    Ok(if gz {
        Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(r)))
    } else {
        Box::new(r)
    })
}

/// A seeded, lazily read, buffer-shuffled stream of groups over shards (module docs).
pub struct ShardStream {
    names: Vec<String>,
    open: OpenShard,
    capacity: usize,
    seed: u64,
    /// Current epoch (0-based) and the shard order it visits.
    epoch: u64,
    order: Vec<usize>,
    /// Position in `order`, and the open shard with its last line number.
    next_shard: usize,
    reader: Option<(usize, usize, ShardReader)>,
    buffer: Vec<Group>,
    rng: ChaCha8Rng,
    emitted_in_epoch: usize,
    peak: usize,
}

impl ShardStream {
    /// A stream over shards named `names` (used in errors), opened by `open`, shuffled
    /// through `capacity` groups, seeded by `seed`. Errors on no shards or capacity 0.
    pub fn new(names: Vec<String>, open: OpenShard, capacity: usize, seed: u64) -> Result<Self> {
        if names.is_empty() {
            return Err(Error::invalid("data.path: no shard files"));
        }
        if capacity == 0 {
            return Err(Error::invalid("data.shuffle_buffer: expected at least 1"));
        }
        let mut s = Self {
            names,
            open,
            capacity,
            seed,
            epoch: 0,
            order: Vec::new(),
            next_shard: 0,
            reader: None,
            buffer: Vec::with_capacity(capacity),
            rng: generator(seed, Stream::Views, 0),
            emitted_in_epoch: 0,
            peak: 0,
        };
        s.start_epoch(0);
        Ok(s)
    }

    /// In-memory shards `(name, bytes)`, plain or gzip (tests, the browser).
    pub fn from_memory(shards: Vec<(String, Vec<u8>)>, capacity: usize, seed: u64) -> Result<Self> {
        let names = shards.iter().map(|(n, _)| n.clone()).collect();
        let open: OpenShard = Box::new(move |i| {
            let (name, bytes) = &shards[i];
            maybe_gunzip(std::io::Cursor::new(bytes.clone())).map_err(|e| Error::io(name, e))
        });
        Self::new(names, open, capacity, seed)
    }

    /// Shard files on disk, plain or gzip.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn from_files(paths: Vec<std::path::PathBuf>, capacity: usize, seed: u64) -> Result<Self> {
        let names = paths.iter().map(|p| p.display().to_string()).collect();
        let open: OpenShard = Box::new(move |i| {
            let p = &paths[i];
            let f = std::fs::File::open(p).map_err(|e| Error::io(p, e))?;
            maybe_gunzip(f).map_err(|e| Error::io(p, e))
        });
        Self::new(names, open, capacity, seed)
    }

    /// Current epoch (0-based).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The most groups ever held in the shuffle buffer (at most the capacity).
    pub fn peak_buffered(&self) -> usize {
        self.peak
    }

    /// Shard file names, in the order given.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Rewinds to the start of epoch 0 (the state right after construction).
    pub fn reset(&mut self) {
        self.start_epoch(0);
    }

    fn start_epoch(&mut self, epoch: u64) {
        // An independent sub-stream of the view seed: shard order and buffer draws.
        let mut rng = generator(
            derive_seed(self.seed, Stream::Views, u64::MAX),
            Stream::Views,
            epoch,
        );
        let mut order: Vec<usize> = (0..self.names.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.random_range(0..=i));
        }
        self.epoch = epoch;
        self.order = order;
        self.next_shard = 0;
        self.reader = None;
        self.buffer.clear();
        self.rng = rng;
        self.emitted_in_epoch = 0;
    }

    /// The next group read from the shards in this epoch's order, `None` when all are
    /// exhausted. Errors name the shard file and line.
    fn read_next(&mut self) -> Result<Option<Group>> {
        loop {
            if self.reader.is_none() {
                let Some(&shard) = self.order.get(self.next_shard) else {
                    return Ok(None);
                };
                self.next_shard += 1;
                self.reader = Some((shard, 0, (self.open)(shard)?));
            }
            // Invariant: set just above when it was `None`.
            let Some((shard, line_no, reader)) = self.reader.as_mut() else {
                continue;
            };
            let mut line = String::new();
            *line_no += 1;
            let name = &self.names[*shard];
            let n = reader.read_line(&mut line).map_err(|e| {
                Error::format(
                    name,
                    format!("line {line_no}"),
                    format!("unreadable (gzip or UTF-8): {e}"),
                )
            })?;
            if n == 0 {
                self.reader = None;
                continue;
            }
            if let Some(g) = parse_group_line(name, *line_no, &line)? {
                return Ok(Some(g));
            }
        }
    }

    /// The next group of the stream (endless: epochs follow each other). Errors if the
    /// shards hold no group at all.
    pub fn next_group(&mut self) -> Result<Group> {
        while self.buffer.len() < self.capacity {
            match self.read_next()? {
                Some(g) => self.buffer.push(g),
                None => break,
            }
        }
        self.peak = self.peak.max(self.buffer.len());
        if self.buffer.is_empty() {
            if self.emitted_in_epoch == 0 {
                return Err(Error::format(
                    self.names.join(", "),
                    "groups",
                    "no groups found in any shard",
                ));
            }
            self.start_epoch(self.epoch + 1);
            return self.next_group();
        }
        let i = self.rng.random_range(0..self.buffer.len());
        self.emitted_in_epoch += 1;
        Ok(self.buffer.swap_remove(i))
    }
}

/// The seed of part `part` of `parts` streams (`data.stream_parts`): the run seed itself
/// for one stream (so a one-part run reads as it always has), else an independent
/// sub-seed per part, the same whichever node reads the part.
pub fn part_seed(seed: u64, parts: usize, part: usize) -> u64 {
    if parts <= 1 {
        seed
    } else {
        derive_seed(seed, Stream::Views, part as u64 + 1)
    }
}

/// The parts node `rank` of `nodes` reads of `parts` (`data.stream_parts` = P):
/// `rank P / N .. (rank + 1) P / N` when `N` (a divisor of P, checked at join) splits
/// P > 1 parts; all of them on one node, and the one stream on every node when P = 1.
pub fn node_parts(parts: usize, nodes: usize, rank: usize) -> std::ops::Range<usize> {
    if parts <= 1 || nodes <= 1 {
        return 0..parts;
    }
    let per = parts / nodes;
    rank * per..(rank + 1) * per
}

/// Part `part`'s share of `files` when `parts` streams deal them round-robin: files
/// `part, part + parts, ...` of the list (sorted by [`resolve_shards`]).
///
/// # Shapes
/// `n` files -> `ceil((n - part) / parts)` files.
pub fn deal<T: Clone>(files: &[T], parts: usize, part: usize) -> Vec<T> {
    files
        .iter()
        .skip(part)
        .step_by(parts.max(1))
        .cloned()
        .collect()
}

/// The shard files of part `part` of `parts` (`data.stream_parts`) named by `spec`
/// (`data.path`): with a `{part}` placeholder, the files `spec` names with it replaced by
/// `part` (so a node resolves, and needs, only its own parts' files); without one, the
/// part's round-robin share ([`deal`]) of every file `spec` names. Errors name the part
/// that has no file.
#[cfg(not(target_arch = "wasm32"))]
pub fn part_files(spec: &str, parts: usize, part: usize) -> Result<Vec<std::path::PathBuf>> {
    if spec.contains("{part}") {
        return resolve_shards(&spec.replace("{part}", &part.to_string()));
    }
    let all = resolve_shards(spec)?;
    let mine = deal(&all, parts, part);
    if mine.is_empty() {
        return Err(Error::format(
            "config",
            "data.stream_parts",
            format!(
                "part {part} of {parts} has no shard file: `{spec}` names {} file(s); \
                 use at most that many parts, or `{{part}}` in data.path",
                all.len()
            ),
        ));
    }
    Ok(mine)
}

/// Resolves `data.path` for `data.source = "shards"`: comma-separated file paths or glob
/// patterns (`*`, `?`, `[...]`, `**`), each pattern's matches sorted. Errors name the
/// pattern that matched nothing or was malformed.
#[cfg(not(target_arch = "wasm32"))]
pub fn resolve_shards(spec: &str) -> Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    for pat in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let mut found: Vec<_> = glob::glob(pat)
            .map_err(|e| Error::format("config", "data.path", format!("bad pattern `{pat}`: {e}")))?
            .filter_map(|p| p.ok())
            .filter(|p| p.is_file())
            .collect();
        if found.is_empty() {
            return Err(Error::format(
                "config",
                "data.path",
                format!("`{pat}` matches no shard file"),
            ));
        }
        found.sort();
        out.extend(found);
    }
    if out.is_empty() {
        return Err(Error::format(
            "config",
            "data.path",
            "expected shard files or patterns",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::io::Write;

    fn jsonl(ids: std::ops::Range<usize>) -> String {
        ids.map(|i| format!("{{\"id\": \"g{i}\", \"texts\": [\"a {i}\", \"b {i}\"]}}\n"))
            .collect()
    }

    fn gzip(text: &str) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(text.as_bytes()).unwrap();
        e.finish().unwrap()
    }

    /// 3 shards (2 gzip, 1 plain with a blank line) holding g0..g249.
    fn shards() -> Vec<(String, Vec<u8>)> {
        vec![
            ("a.jsonl.gz".into(), gzip(&jsonl(0..100))),
            (
                "b.jsonl".into(),
                format!("{}\n{}", jsonl(100..150), jsonl(150..170)).into_bytes(),
            ),
            ("c.jsonl.gz".into(), gzip(&jsonl(170..250))),
        ]
    }

    fn take(s: &mut ShardStream, n: usize) -> Vec<String> {
        (0..n).map(|_| s.next_group().unwrap().id).collect()
    }

    #[test]
    fn every_group_once_per_epoch_with_a_bounded_buffer() {
        let mut s = ShardStream::from_memory(shards(), 16, 7).unwrap();
        for epoch in 0..2 {
            let ids = take(&mut s, 250);
            let mut count: HashMap<String, usize> = HashMap::new();
            for id in &ids {
                *count.entry(id.clone()).or_default() += 1;
            }
            assert_eq!(count.len(), 250, "epoch {epoch}: distinct groups");
            assert!(
                count.values().all(|&c| c == 1),
                "epoch {epoch}: a group repeated"
            );
            assert_eq!(s.epoch(), epoch, "epoch ends exactly after 250 groups");
        }
        s.next_group().unwrap();
        assert_eq!(s.epoch(), 2);
        assert!(s.peak_buffered() <= 16, "buffer held {}", s.peak_buffered());
        assert_eq!(s.peak_buffered(), 16);
    }

    #[test]
    fn deterministic_per_seed_and_shuffled() {
        let a = take(&mut ShardStream::from_memory(shards(), 32, 3).unwrap(), 300);
        let b = take(&mut ShardStream::from_memory(shards(), 32, 3).unwrap(), 300);
        let c = take(&mut ShardStream::from_memory(shards(), 32, 4).unwrap(), 300);
        assert_eq!(a, b);
        assert_ne!(a, c);
        let in_order: Vec<String> = (0..250).map(|i| format!("g{i}")).collect();
        assert_ne!(a[..250], in_order[..], "not shuffled");
        // Two epochs differ in order (fresh shard order and draws).
        assert_ne!(a[..50], a[250..300]);
        // reset() replays the stream from the start.
        let mut s = ShardStream::from_memory(shards(), 32, 3).unwrap();
        take(&mut s, 77);
        s.reset();
        assert_eq!(take(&mut s, 300), a);
    }

    #[test]
    fn errors_name_the_shard_and_line() {
        let mut bad = shards();
        bad[1].1 = format!("{}{{\"id\": 1, \"texts\": \"oops\"}}\n", jsonl(0..2)).into_bytes();
        let mut s = ShardStream::from_memory(bad, 1000, 0).unwrap();
        let e = (0..300)
            .find_map(|_| s.next_group().err())
            .unwrap()
            .to_string();
        assert!(e.contains("b.jsonl") && e.contains("line 3"), "{e}");
        // A truncated gzip shard: the decoder's error names the shard.
        let mut cut = shards();
        let n = cut[0].1.len();
        cut[0].1.truncate(n / 2);
        let mut s = ShardStream::from_memory(cut, 1000, 0).unwrap();
        let e = (0..300)
            .find_map(|_| s.next_group().err())
            .unwrap()
            .to_string();
        assert!(e.contains("a.jsonl.gz"), "{e}");
        // Shards without any group.
        let empty = vec![("e.jsonl".to_string(), b"\n\n".to_vec())];
        let e = ShardStream::from_memory(empty, 4, 0)
            .unwrap()
            .next_group()
            .unwrap_err();
        assert!(e.to_string().contains("e.jsonl"), "{e}");
        assert!(ShardStream::from_memory(Vec::new(), 4, 0).is_err());
        assert!(ShardStream::from_memory(shards(), 0, 0).is_err());
    }

    #[test]
    fn parts_deal_every_file_once_and_name_an_empty_part() {
        let files: Vec<usize> = (0..7).collect();
        let parts: Vec<Vec<usize>> = (0..3).map(|p| deal(&files, 3, p)).collect();
        assert_eq!(parts, vec![vec![0, 3, 6], vec![1, 4], vec![2, 5]]);
        assert_eq!(deal(&files, 1, 0), files);
        assert_eq!(node_parts(8, 4, 3), 6..8);
        assert_eq!(node_parts(8, 1, 0), 0..8);
        assert_eq!(node_parts(1, 3, 2), 0..1);
        assert_eq!(part_seed(9, 1, 0), 9);
        assert_ne!(part_seed(9, 2, 0), part_seed(9, 2, 1));
        let dir = std::env::temp_dir().join(format!("prh-parts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["part-0-a.jsonl", "part-0-b.jsonl", "part-1-a.jsonl"] {
            std::fs::write(dir.join(name), "{\"id\": \"x\", \"texts\": [\"a\"]}\n").unwrap();
        }
        let spec = format!("{}/part-{{part}}-*.jsonl", dir.display());
        assert_eq!(part_files(&spec, 2, 0).unwrap().len(), 2);
        assert_eq!(part_files(&spec, 2, 1).unwrap().len(), 1);
        let e = part_files(&spec, 3, 2).unwrap_err().to_string();
        assert!(
            e.contains("part-2-*.jsonl") && e.contains("matches no shard file"),
            "{e}"
        );
        let all = format!("{}/part-*.jsonl", dir.display());
        assert_eq!(part_files(&all, 3, 2).unwrap().len(), 1);
        let e = part_files(&all, 4, 3).unwrap_err().to_string();
        assert!(
            e.contains("part 3 of 4 has no shard file") && e.contains("3 file(s)"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn files_and_globs() {
        let dir = std::env::temp_dir().join(format!("prh-shards-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in shards() {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
        let spec = format!("{}/*.jsonl.gz, {}/b.jsonl", dir.display(), dir.display());
        let paths = resolve_shards(&spec).unwrap();
        let names: Vec<_> = paths
            .iter()
            .map(|p| p.file_name().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["a.jsonl.gz", "c.jsonl.gz", "b.jsonl"]);
        let mut s = ShardStream::from_files(paths, 8, 1).unwrap();
        let mut ids = take(&mut s, 250);
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 250);
        let e = resolve_shards(&format!("{}/*.parquet", dir.display())).unwrap_err();
        assert!(e.to_string().contains("*.parquet"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
