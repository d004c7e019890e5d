//! The floating-point tensors of a safetensors file as f64, whatever their stored dtype:
//! one decoder for embedding files ([`crate::formats::features`]) and checkpoint weights
//! ([`crate::formats::hf::TensorTable`]).

use crate::{Error, Result};
use safetensors::Dtype;
use safetensors::tensor::TensorView;

/// The values of `view` (tensor `name` of the file `source`), little-endian F32, F64, F16
/// or BF16, as f64 in row-major order; every value of those dtypes is exact in f64.
/// Another dtype is refused, naming `{name}.dtype`.
///
/// # Shapes
/// tensor of any shape -> `[numel]`
pub fn floats(source: &str, name: &str, view: &TensorView<'_>) -> Result<Vec<f64>> {
    let raw = view.data();
    Ok(match view.dtype() {
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
    })
}
