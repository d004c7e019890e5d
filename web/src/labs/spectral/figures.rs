//! What the spectral lab's cards share: row-major copies for drawing and JSON, the
//! Fiedler order of the heatmaps, how an optional number prints. Each card is a file of
//! its own beside this one; all of them read one computed [`Lab`] and never the view.

use super::compute::Lab;
use crate::figures::numbers;
use prh_core::linalg::Matrix;

/// Observation counts up to which matrices and vectors are also printed as numbers.
pub const NUMBERS_UP_TO: usize = 24;

/// Row-major copy of a matrix, for drawing and JSON. Read column by column through slices:
/// for the 400 x 400 heatmaps, per-entry indexing (with its bounds checks) cost more in
/// the browser than the rest of the copy.
pub fn rows(m: &Matrix) -> Vec<f64> {
    let (r, c) = (m.nrows(), m.ncols());
    let mut out = vec![0.0; r * c];
    for j in 0..c {
        for (i, x) in m.col_as_slice(j).iter().enumerate() {
            out[i * c + j] = *x;
        }
    }
    out
}

/// Observation order sorted by the Fiedler vector (the first non-trivial eigenvector), so
/// that states the kernel connects sit next to each other.
pub fn fiedler_order(lab: &Lab) -> Vec<usize> {
    let j = lab.spectrum.trivial_index + 1;
    let n = lab.names.len();
    let mut order: Vec<usize> = (0..n).collect();
    if j < n {
        order.sort_by(|&a, &b| {
            lab.spectrum.vectors[(a, j)].total_cmp(&lab.spectrum.vectors[(b, j)])
        });
    }
    order
}

/// An optional number with 4 decimals, "n/a" when absent.
pub fn fmt_opt(x: Option<f64>) -> String {
    x.map_or("n/a".into(), |v| numbers::fixed(v, 4))
}
