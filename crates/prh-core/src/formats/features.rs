//! Embedding files: the representations f_m(g_m(z)) whose alignment the paper measures
//! (§5). Reads `.npy`, `.npz` and `.safetensors` holding an `[N, D]` or `[N, L, D]`
//! array (N samples, L layers, D features) in f32, f64, f16 or bf16, and writes `.npy`.
//!
//! Parsing takes bytes so the browser can use it; [`load`] and [`write_npy`] are the
//! native file-path wrappers. Every error names the file, the field and what was expected.

use crate::formats::npy::{io_fmt, read_npy};
use crate::formats::tensors;
use crate::{Error, Result};
use std::io::Cursor;

#[cfg(not(target_arch = "wasm32"))]
pub use crate::formats::npy::write_npy;
pub use crate::formats::npy::{NpyElement, npy_bytes};

/// An embedding array `[n, layers, d]`, row-major, as f64.
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    /// File (or name) the array came from, for error messages.
    pub source: String,
    /// Number of samples N (rows).
    pub n: usize,
    /// Number of layers L (1 for an `[N, D]` file).
    pub layers: usize,
    /// Feature width D.
    pub d: usize,
    /// Values, index `(i * layers + l) * d + j`.
    pub data: Vec<f64>,
}

impl Features {
    /// Wraps a row-major `[n, layers, d]` buffer, checking its size and that every value is
    /// finite (a NaN or Inf row is named).
    ///
    /// # Shapes
    /// `data [n * layers * d]` -> `Features [n, layers, d]`
    pub fn new(source: &str, n: usize, layers: usize, d: usize, data: Vec<f64>) -> Result<Self> {
        if n == 0 || layers == 0 || d == 0 {
            return Err(Error::format(
                source,
                "shape",
                format!(
                    "empty array [{n}, {layers}, {d}]: expected N >= 1 samples of D >= 1 features"
                ),
            ));
        }
        if data.len() != n * layers * d {
            return Err(Error::format(
                source,
                "data",
                format!("{} values, expected N*L*D = {}", data.len(), n * layers * d),
            ));
        }
        if let Some(pos) = data.iter().position(|x| !x.is_finite()) {
            let (row, rem) = (pos / (layers * d), pos % (layers * d));
            return Err(Error::format(
                source,
                format!("row {row}"),
                format!(
                    "non-finite value {} at layer {}, column {}: expected finite numbers",
                    data[pos],
                    rem / d,
                    rem % d
                ),
            ));
        }
        Ok(Features {
            source: source.to_string(),
            n,
            layers,
            d,
            data,
        })
    }

    /// Layer `l` as a row-major `[n, d]` buffer.
    ///
    /// # Shapes
    /// `[n, layers, d]`, `l < layers` -> `[n * d]`
    pub fn layer(&self, l: usize) -> Result<Vec<f64>> {
        if l >= self.layers {
            return Err(Error::invalid(format!(
                "{}: layer {l} out of range 0..{}",
                self.source, self.layers
            )));
        }
        let mut out = Vec::with_capacity(self.n * self.d);
        for i in 0..self.n {
            let start = (i * self.layers + l) * self.d;
            out.extend_from_slice(&self.data[start..start + self.d]);
        }
        Ok(out)
    }

    /// Splits into the first `count` samples and the remaining ones (e.g. fit / held-out).
    ///
    /// # Shapes
    /// `[n, layers, d]` -> `[count, layers, d]` or `[n - count, layers, d]`
    pub fn split_rows(&self, count: usize) -> Result<(Features, Features)> {
        if count == 0 || count >= self.n {
            return Err(Error::invalid(format!(
                "{}: cannot split {} rows at {count}: need 0 < count < N",
                self.source, self.n
            )));
        }
        let row = self.layers * self.d;
        let head = Features::new(
            &self.source,
            count,
            self.layers,
            self.d,
            self.data[..count * row].to_vec(),
        )?;
        let tail = Features::new(
            &self.source,
            self.n - count,
            self.layers,
            self.d,
            self.data[count * row..].to_vec(),
        )?;
        Ok((head, tail))
    }

    /// Parses `.npy`, `.npz` or `.safetensors` bytes (recognised by their magic bytes), or
    /// the Embedding Projector's `vectors.tsv` (recognised by a `source` name ending in
    /// `.tsv`: text has no magic bytes; see [`crate::formats::tsv`]). `array` picks a named array in an `.npz`/`.safetensors` file; without it the file must
    /// hold exactly one.
    ///
    /// # Shapes
    /// file `[N, D]` -> `[N, 1, D]`; file `[N, L, D]` -> `[N, L, D]`
    pub fn from_bytes(source: &str, bytes: &[u8], array: Option<&str>) -> Result<Self> {
        if bytes.is_empty() {
            return Err(Error::format(
                source,
                "file",
                "file is empty: expected .npy, .npz, .safetensors or vectors.tsv",
            ));
        }
        if bytes.starts_with(b"\x93NUMPY") {
            let (shape, data) = read_npy(source, "array", bytes)?;
            from_shape(source, &shape, data)
        } else if bytes.starts_with(b"PK") {
            read_npz(source, bytes, array)
        } else if looks_like_safetensors(bytes) {
            read_safetensors(source, bytes, array)
        } else if source.to_ascii_lowercase().ends_with(".tsv") {
            let (n, d, data) = crate::formats::tsv::parse_vectors(source, bytes)?;
            Features::new(source, n, 1, d, data)
        } else {
            Err(Error::format(
                source,
                "magic",
                "unrecognised format: expected .npy (\\x93NUMPY), .npz (zip), .safetensors, \
                 or tab-separated numbers in a file named *.tsv",
            ))
        }
    }
}

/// Requires two feature sets to describe the same N samples (row i of one pairs with
/// row i of the other).
pub fn check_same_n(a: &Features, b: &Features) -> Result<()> {
    if a.n != b.n {
        return Err(Error::format(
            &b.source,
            "shape[0]",
            format!(
                "{} has N = {} rows but {} has N = {}: expected the same samples",
                b.source, b.n, a.source, a.n
            ),
        ));
    }
    Ok(())
}

fn from_shape(source: &str, shape: &[usize], data: Vec<f64>) -> Result<Features> {
    match *shape {
        [n, d] => Features::new(source, n, 1, d, data),
        [n, l, d] => Features::new(source, n, l, d, data),
        _ => Err(Error::format(
            source,
            "shape",
            format!(
                "rank-{} array {shape:?}: expected [N, D] or [N, L, D]",
                shape.len()
            ),
        )),
    }
}

fn pick<'a>(source: &str, names: &[&'a str], array: Option<&str>) -> Result<&'a str> {
    match array {
        Some(want) => names.iter().copied().find(|n| *n == want).ok_or_else(|| {
            Error::format(
                source,
                want,
                format!("no array named {want:?}; the file holds {names:?}"),
            )
        }),
        None if names.len() == 1 => Ok(names[0]),
        None => Err(Error::format(
            source,
            "arrays",
            format!(
                "{} arrays {names:?}: name the one to use (e.g. --array-a NAME)",
                names.len()
            ),
        )),
    }
}

fn read_npz(source: &str, bytes: &[u8], array: Option<&str>) -> Result<Features> {
    let mut npz =
        npyz::npz::NpzArchive::new(Cursor::new(bytes)).map_err(|e| io_fmt(source, "zip", e))?;
    let owned: Vec<String> = npz.array_names().map(str::to_string).collect();
    let names: Vec<&str> = owned.iter().map(String::as_str).collect();
    let name = pick(source, &names, array)?.to_string();
    // Through the npy module's guarded reader: a crafted inner header must not hang npyz.
    let (shape, data) = crate::formats::npy::read_npz_array(source, &mut npz, &name)?;
    from_shape(source, &shape, data)
}

fn looks_like_safetensors(bytes: &[u8]) -> bool {
    bytes.len() >= 9 && bytes[8] == b'{'
}

fn read_safetensors(source: &str, bytes: &[u8], array: Option<&str>) -> Result<Features> {
    let st =
        safetensors::SafeTensors::deserialize(bytes).map_err(|e| io_fmt(source, "header", e))?;
    let mut names = st.names();
    names.sort();
    let name = pick(source, &names, array)?;
    let view = st.tensor(name).map_err(|e| io_fmt(source, name, e))?;
    let data = tensors::floats(source, name, &view)?;
    from_shape(source, view.shape(), data)
}

/// Reads an embedding file from disk (native only); see [`Features::from_bytes`].
///
/// # Shapes
/// file `[N, D]` or `[N, L, D]` -> `Features [N, L, D]`
///
/// Memory: a `.npy` file is streamed from disk, so the only transient copy is the file's
/// own dtype buffer (e.g. 4 bytes a value for f32) beside the f64 result; `.npz` and
/// `.safetensors` files are read whole first (one more copy of the file's bytes).
#[cfg(not(target_arch = "wasm32"))]
pub fn load(path: &std::path::Path, array: Option<&str>) -> Result<Features> {
    use std::io::{BufReader, Read, Seek, SeekFrom};
    let source = path.display().to_string();
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut magic = [0u8; 6];
    let npy = file.read_exact(&mut magic).is_ok() && &magic == b"\x93NUMPY";
    if npy {
        file.seek(SeekFrom::Start(0))
            .map_err(|e| Error::io(path, e))?;
        let (shape, data) = read_npy(&source, "array", BufReader::new(file))?;
        return from_shape(&source, &shape, data);
    }
    drop(file);
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    Features::from_bytes(&source, &bytes, array)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::npy::npy_bytes;

    #[test]
    fn errors_name_the_problem() {
        let v = vec![1.0f64; 8];
        let bytes = npy_bytes(&[8], &v).unwrap();
        let e = Features::from_bytes("r.npy", &bytes, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("r.npy") && e.contains("expected [N, D]"), "{e}");
        let full = npy_bytes(&[4, 2], &v).unwrap();
        let e = Features::from_bytes("t.npy", &full[..full.len() - 3], None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.npy") && e.contains("truncated"), "{e}");
        let mut bad = v.clone();
        bad[5] = f64::NAN;
        let e = Features::from_bytes("n.npy", &npy_bytes(&[4, 2], &bad).unwrap(), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 2") && e.contains("NaN"), "{e}");
        assert!(
            Features::from_bytes("e.npy", &[], None)
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
    }

    #[test]
    fn safetensors_half_types() {
        use safetensors::{Dtype, tensor::TensorView};
        let vals = [1.0f32, -2.5, 0.25, 4.0, 8.0, -0.5];
        let f16b: Vec<u8> = vals
            .iter()
            .flat_map(|&x| half::f16::from_f32(x).to_le_bytes())
            .collect();
        let bf16b: Vec<u8> = vals
            .iter()
            .flat_map(|&x| half::bf16::from_f32(x).to_le_bytes())
            .collect();
        let t1 = TensorView::new(Dtype::F16, vec![3, 2], &f16b).unwrap();
        let t2 = TensorView::new(Dtype::BF16, vec![3, 2], &bf16b).unwrap();
        let bytes = safetensors::serialize(vec![("a", t1), ("b", t2)], None).unwrap();
        for name in ["a", "b"] {
            let f = Features::from_bytes("x.safetensors", &bytes, Some(name)).unwrap();
            let want: Vec<f64> = vals.iter().map(|&x| x as f64).collect();
            assert_eq!(f.data, want);
        }
        let e = Features::from_bytes("x.safetensors", &bytes, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("2 arrays"), "{e}");
    }
}
