//! Embedding files: the representations f_m(g_m(z)) whose alignment the paper measures
//! (§5). Reads `.npy`, `.npz` and `.safetensors` holding an `[N, D]` or `[N, L, D]`
//! array (N samples, L layers, D features) in f32, f64, f16 or bf16, and writes `.npy`.
//!
//! Parsing takes bytes so the browser can use it; [`load`] and [`write_npy`] are the
//! native file-path wrappers. Every error names the file, the field and what was expected.

use crate::{Error, Result};
use npyz::{DType, Endianness, NpyFile, Order, TypeChar};
use std::io::{Cursor, Read};

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

    /// Parses `.npy`, `.npz` or `.safetensors` bytes (recognised by their magic bytes).
    /// `array` picks a named array in an `.npz`/`.safetensors` file; without it the file must
    /// hold exactly one.
    ///
    /// # Shapes
    /// file `[N, D]` -> `[N, 1, D]`; file `[N, L, D]` -> `[N, L, D]`
    pub fn from_bytes(source: &str, bytes: &[u8], array: Option<&str>) -> Result<Self> {
        if bytes.is_empty() {
            return Err(Error::format(
                source,
                "file",
                "file is empty: expected .npy, .npz or .safetensors",
            ));
        }
        if bytes.starts_with(b"\x93NUMPY") {
            let (shape, data) = read_npy(source, "array", bytes)?;
            from_shape(source, &shape, data)
        } else if bytes.starts_with(b"PK") {
            read_npz(source, bytes, array)
        } else if looks_like_safetensors(bytes) {
            read_safetensors(source, bytes, array)
        } else {
            Err(Error::format(
                source,
                "magic",
                "unrecognised format: expected .npy (\\x93NUMPY), .npz (zip) or .safetensors",
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

fn io_fmt(source: &str, field: &str, e: impl std::fmt::Display) -> Error {
    Error::format(source, field, format!("malformed or truncated: {e}"))
}

/// Reads one `.npy` stream into its shape and row-major f64 values.
fn read_npy(source: &str, field: &str, reader: impl Read) -> Result<(Vec<usize>, Vec<f64>)> {
    let npy = NpyFile::new(reader).map_err(|e| io_fmt(source, field, e))?;
    read_npy_file(source, field, npy)
}

/// Reads the data of an opened `.npy` stream (its header already parsed).
fn read_npy_file<R: Read>(
    source: &str,
    field: &str,
    npy: NpyFile<R>,
) -> Result<(Vec<usize>, Vec<f64>)> {
    let shape: Vec<usize> = npy.shape().iter().map(|&s| s as usize).collect();
    let fortran = npy.order() == Order::Fortran;
    let ts = match npy.dtype() {
        DType::Plain(ts) if ts.type_char() == TypeChar::Float => ts,
        other => {
            return Err(Error::format(
                source,
                format!("{field}.dtype"),
                format!("{}: expected float16, float32 or float64", other.descr()),
            ));
        }
    };
    let values: Vec<f64> = match ts.size_field() {
        4 => npy
            .into_vec::<f32>()
            .map_err(|e| io_fmt(source, field, e))?
            .into_iter()
            .map(f64::from)
            .collect(),
        8 => npy
            .into_vec::<f64>()
            .map_err(|e| io_fmt(source, field, e))?,
        2 => {
            // npyz's f16 support sits behind a feature we do not enable; read the raw
            // little/big-endian halves through the `half` crate instead.
            let count: usize = shape.iter().product();
            let mut raw = Vec::new();
            npy.into_inner()
                .read_to_end(&mut raw)
                .map_err(|e| io_fmt(source, field, e))?;
            if raw.len() < 2 * count {
                return Err(io_fmt(
                    source,
                    field,
                    format!("{} data bytes, expected {}", raw.len(), 2 * count),
                ));
            }
            let big = ts.endianness() == Endianness::Big;
            raw.chunks_exact(2)
                .take(count)
                .map(|c| {
                    let bits = if big {
                        u16::from_be_bytes([c[0], c[1]])
                    } else {
                        u16::from_le_bytes([c[0], c[1]])
                    };
                    f64::from(half::f16::from_bits(bits))
                })
                .collect()
        }
        s => {
            return Err(Error::format(
                source,
                format!("{field}.dtype"),
                format!("float of {s} bytes: expected 2, 4 or 8"),
            ));
        }
    };
    if values.len() != shape.iter().product::<usize>() {
        return Err(io_fmt(
            source,
            field,
            format!("{} values for shape {shape:?}", values.len()),
        ));
    }
    let values = if fortran {
        fortran_to_c(&shape, &values)
    } else {
        values
    };
    Ok((shape, values))
}

/// Reorders a column-major (Fortran) buffer into row-major order.
fn fortran_to_c(shape: &[usize], values: &[f64]) -> Vec<f64> {
    let total = values.len();
    let mut out = vec![0.0; total];
    for (c_idx, slot) in out.iter_mut().enumerate() {
        // Decompose the row-major index, then rebuild the column-major one.
        let (mut rem, mut f_idx, mut stride) = (c_idx, 0, 1);
        let mut digits = vec![0; shape.len()];
        for (ax, &s) in shape.iter().enumerate().rev() {
            digits[ax] = rem % s;
            rem /= s;
        }
        for (ax, &s) in shape.iter().enumerate() {
            f_idx += digits[ax] * stride;
            stride *= s;
        }
        *slot = values[f_idx];
    }
    out
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
    let file = npz
        .by_name(&name)
        .map_err(|e| io_fmt(source, &name, e))?
        .ok_or_else(|| Error::format(source, &name, "listed in the archive but unreadable"))?;
    let (shape, data) = read_npy_file(source, &name, file)?;
    from_shape(source, &shape, data)
}

fn looks_like_safetensors(bytes: &[u8]) -> bool {
    bytes.len() >= 9 && bytes[8] == b'{'
}

fn read_safetensors(source: &str, bytes: &[u8], array: Option<&str>) -> Result<Features> {
    use safetensors::Dtype;
    let st =
        safetensors::SafeTensors::deserialize(bytes).map_err(|e| io_fmt(source, "header", e))?;
    let mut names = st.names();
    names.sort();
    let name = pick(source, &names, array)?;
    let view = st.tensor(name).map_err(|e| io_fmt(source, name, e))?;
    let raw = view.data();
    let data: Vec<f64> = match view.dtype() {
        Dtype::F32 => raw
            .chunks_exact(4)
            .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
        Dtype::F64 => raw
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect(),
        Dtype::F16 => raw
            .chunks_exact(2)
            .map(|c| f64::from(half::f16::from_le_bytes([c[0], c[1]])))
            .collect(),
        Dtype::BF16 => raw
            .chunks_exact(2)
            .map(|c| f64::from(half::bf16::from_le_bytes([c[0], c[1]])))
            .collect(),
        other => {
            return Err(Error::format(
                source,
                format!("{name}.dtype"),
                format!("{other:?}: expected F32, F64, F16 or BF16"),
            ));
        }
    };
    from_shape(source, view.shape(), data)
}

/// Encodes a row-major f32 or f64 array as `.npy` bytes (format 1.0, little endian, C
/// order), so the browser can offer a download and [`write_npy`] can save it.
///
/// # Shapes
/// `data [prod(shape)]` -> bytes
pub fn npy_bytes<T: NpyElement>(shape: &[usize], data: &[T]) -> Result<Vec<u8>> {
    if shape.iter().product::<usize>() != data.len() {
        return Err(Error::invalid(format!(
            "{} values do not fill shape {shape:?}",
            data.len()
        )));
    }
    let shape_txt = match shape.len() {
        1 => format!("({},)", shape[0]),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut text = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape_txt}, }}",
        T::DESCR
    )
    .into_bytes();
    // Pad so that magic (6) + version (2) + length (2) + text is a multiple of 64.
    let pad = (64 - (10 + text.len() + 1) % 64) % 64;
    text.extend(std::iter::repeat_n(b' ', pad));
    text.push(b'\n');
    let len = u16::try_from(text.len())
        .map_err(|_| Error::invalid(format!("npy header too long for shape {shape:?}")))?;
    let mut out = Vec::with_capacity(10 + text.len() + data.len() * T::SIZE);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&text);
    for x in data {
        x.put_le(&mut out);
    }
    Ok(out)
}

/// An element type [`npy_bytes`] can write.
pub trait NpyElement: Copy {
    /// numpy's dtype string.
    const DESCR: &'static str;
    /// Bytes per element.
    const SIZE: usize;
    /// Appends the little-endian bytes.
    fn put_le(self, out: &mut Vec<u8>);
}

impl NpyElement for f32 {
    const DESCR: &'static str = "<f4";
    const SIZE: usize = 4;
    fn put_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl NpyElement for f64 {
    const DESCR: &'static str = "<f8";
    const SIZE: usize = 8;
    fn put_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl NpyElement for half::f16 {
    const DESCR: &'static str = "<f2";
    const SIZE: usize = 2;
    fn put_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

/// Reads an embedding file from disk (native only); see [`Features::from_bytes`].
///
/// # Shapes
/// file `[N, D]` or `[N, L, D]` -> `Features [N, L, D]`
#[cfg(not(target_arch = "wasm32"))]
pub fn load(path: &std::path::Path, array: Option<&str>) -> Result<Features> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    Features::from_bytes(&path.display().to_string(), &bytes, array)
}

/// Writes a row-major f32 or f64 array to a `.npy` file (native only); e.g.
/// `write_npy(path, &[n, d], &values)`.
///
/// # Shapes
/// `data [prod(shape)]` -> file of shape `shape`
#[cfg(not(target_arch = "wasm32"))]
pub fn write_npy<T: NpyElement>(path: &std::path::Path, shape: &[usize], data: &[T]) -> Result<()> {
    let bytes = npy_bytes(shape, data)?;
    std::fs::write(path, bytes).map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_round_trip_f32_and_f64() {
        let v: Vec<f64> = (0..12).map(|x| x as f64 * 0.5 - 2.0).collect();
        let bytes = npy_bytes(&[4, 3], &v).unwrap();
        let f = Features::from_bytes("t.npy", &bytes, None).unwrap();
        assert_eq!((f.n, f.layers, f.d), (4, 1, 3));
        assert_eq!(f.data, v);
        let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
        let f = Features::from_bytes("t.npy", &npy_bytes(&[2, 3, 2], &v32).unwrap(), None).unwrap();
        assert_eq!((f.n, f.layers, f.d), (2, 3, 2));
        assert_eq!(f.layer(1).unwrap(), vec![-1.0, -0.5, 2.0, 2.5]);
    }

    #[test]
    fn npy_float16_round_trip() {
        let vals = [0.5f32, -1.25, 3.0, 1024.0, -0.0625, 7.5];
        let h: Vec<half::f16> = vals.iter().map(|&x| half::f16::from_f32(x)).collect();
        let f = Features::from_bytes("h.npy", &npy_bytes(&[3, 2], &h).unwrap(), None).unwrap();
        assert_eq!(f.data, vals.iter().map(|&x| x as f64).collect::<Vec<_>>());
        let e = Features::from_bytes("h.npy", &npy_bytes(&[3, 2], &h).unwrap()[..130], None)
            .unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
    }

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

    #[test]
    fn fortran_order_is_transposed() {
        // [2, 3] stored column-major: columns (1,4), (2,5), (3,6).
        let out = fortran_to_c(&[2, 3], &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        assert_eq!(out, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    }
}
