//! The `.npy` format (numpy's array files): read any float16/32/64 array into f64 and
//! write f16/f32/f64 arrays, from bytes (browser) or paths (native). Used by
//! [`crate::formats::features`] for embeddings and by other modules to save arrays.
//!
//! Reading goes through npyz (header parsing, f32/f64); float16 data is decoded here with
//! `half` because npyz's f16 support sits behind a feature the workspace does not enable.

use crate::{Error, Result};
use npyz::{DType, Endianness, NpyFile, Order, TypeChar};
use std::io::Read;

pub(crate) fn io_fmt(source: &str, field: &str, e: impl std::fmt::Display) -> Error {
    Error::format(source, field, format!("malformed or truncated: {e}"))
}

/// Reads one `.npy` stream into its shape and row-major f64 values; errors name
/// `source` (the file) and `field` (the array).
///
/// # Shapes
/// file of shape `shape` -> (`shape`, values `[prod(shape)]`)
pub fn read_npy(source: &str, field: &str, reader: impl Read) -> Result<(Vec<usize>, Vec<f64>)> {
    let reader = guard_preamble(source, field, reader)?;
    let npy = NpyFile::new(reader).map_err(|e| io_fmt(source, field, e))?;
    read_npy_file(source, field, npy)
}

/// Reads array `name` of an `.npz` archive through the same preamble checks as
/// [`read_npy`] (npyz's own `NpzArchive::by_name` parses the inner header unguarded).
///
/// # Shapes
/// array of shape `shape` -> (`shape`, values `[prod(shape)]`)
pub fn read_npz_array<R: Read + std::io::Seek>(
    source: &str,
    npz: &mut npyz::npz::NpzArchive<R>,
    name: &str,
) -> Result<(Vec<usize>, Vec<f64>)> {
    let entry = npyz::npz::file_name_from_array_name(name);
    let file = npz
        .zip_archive()
        .by_name(&entry)
        .map_err(|e| io_fmt(source, name, e))?;
    read_npy(source, name, file)
}

/// Largest `.npy` header accepted, in bytes (numpy writes about 128; its own reader
/// refuses more than 10 000 unless told otherwise).
const MAX_HEADER: usize = 1 << 16;

/// Reads the `.npy` preamble (magic, version, header length and text) ahead of npyz and
/// refuses what npyz would mishandle (both found by `fuzz/` npy target):
/// - a header length beyond [`MAX_HEADER`]: npyz allocates the stated length up front,
///   4 GiB for a 12-byte file (an abort in the browser);
/// - a shape whose element count times 8 bytes overflows 64 bits: npyz multiplies the
///   dimensions unchecked (a panic in debug builds, a wrong count in release);
/// - brackets nested more than [`MAX_DEPTH`] deep: npyz's Python-literal parser
///   backtracks exponentially in the depth (about 3x per level: 2 s at depth 10, a hang
///   at 45 for a 118-byte header).
///
/// Anything else (bad magic, unparsable header) is left for npyz to report. Returns a
/// reader that replays the bytes consumed here.
fn guard_preamble<R: Read>(
    source: &str,
    field: &str,
    mut reader: R,
) -> Result<std::io::Chain<std::io::Cursor<Vec<u8>>, R>> {
    let mut head = Vec::new();
    let mut read_to = |head: &mut Vec<u8>, len: usize| -> Result<()> {
        let want = len.saturating_sub(head.len()) as u64;
        (&mut reader)
            .take(want)
            .read_to_end(head)
            .map(|_| ())
            .map_err(|e| io_fmt(source, field, e))
    };
    read_to(&mut head, 12)?;
    let start = match head.get(6) {
        Some(1) => 10,
        Some(2 | 3) => 12,
        _ => 0,
    };
    if head.starts_with(b"\x93NUMPY") && start > 0 && head.len() >= start {
        let len = if start == 10 {
            usize::from(u16::from_le_bytes([head[8], head[9]]))
        } else {
            u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize
        };
        if len > MAX_HEADER {
            return Err(Error::format(
                source,
                format!("{field}.header"),
                format!("header length {len} bytes: expected at most {MAX_HEADER} (corrupted?)"),
            ));
        }
        read_to(&mut head, start + len)?;
        let text = &head[start.min(head.len())..];
        let depth = bracket_depth(text);
        if depth > MAX_DEPTH {
            return Err(Error::format(
                source,
                format!("{field}.header"),
                format!(
                    "brackets nested {depth} deep: expected at most {MAX_DEPTH} (a float \
                     array's header has 2)"
                ),
            ));
        }
        if let Some(dims) = header_shape(text) {
            let bytes = dims.iter().try_fold(8u64, |acc, &d| acc.checked_mul(d));
            if bytes.is_none() {
                return Err(Error::format(
                    source,
                    format!("{field}.shape"),
                    format!("{dims:?}: element count overflows 64-bit sizes (corrupted header?)"),
                ));
            }
        }
    }
    Ok(std::io::Cursor::new(head).chain(reader))
}

/// Deepest bracket nesting accepted in a `.npy` header: a float array's header is a
/// dict holding a shape tuple (2); structured dtypes, which prh refuses anyway, need more.
const MAX_DEPTH: usize = 4;

/// Deepest nesting of `{[(` brackets outside quoted strings.
fn bracket_depth(text: &[u8]) -> usize {
    let (mut depth, mut max, mut quote) = (0usize, 0usize, None);
    for &c in text {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(c),
            (None, b'{' | b'[' | b'(') => {
                depth += 1;
                max = max.max(depth);
            }
            (None, b'}' | b']' | b')') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The dimensions of the `'shape': (a, b, ...)` entry of a `.npy` header, if they parse
/// as unsigned integers (else `None`, leaving the error to npyz).
fn header_shape(header: &[u8]) -> Option<Vec<u64>> {
    let text = std::str::from_utf8(header).ok()?;
    let after = &text[text.find("shape")? + "shape".len()..];
    let open = after.find(['(', '['])?;
    let inner = &after[open + 1..];
    let close = inner.find([')', ']'])?;
    inner[..close]
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| t.trim_end_matches('L').parse::<u64>().ok())
        .collect()
}

/// Reads the data of an opened `.npy` stream (its header already parsed).
pub(crate) fn read_npy_file<R: Read>(
    source: &str,
    field: &str,
    npy: NpyFile<R>,
) -> Result<(Vec<usize>, Vec<f64>)> {
    let shape: Vec<usize> = npy.shape().iter().map(|&s| s as usize).collect();
    // Sizes come from the file: multiply without overflow (2 * count below too).
    let count = shape
        .iter()
        .try_fold(2usize, |a, &d| a.checked_mul(d))
        .map(|bytes| bytes / 2)
        .ok_or_else(|| {
            Error::format(
                source,
                format!("{field}.shape"),
                format!("{shape:?}: element count overflows (corrupted header?)"),
            )
        })?;
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
    if values.len() != count {
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
    use crate::formats::features::Features;

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
    fn fortran_order_is_transposed() {
        // [2, 3] stored column-major: columns (1,4), (2,5), (3,6).
        let out = fortran_to_c(&[2, 3], &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        assert_eq!(out, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    }
}
