//! Feature preprocessing as the Platonic Representation Hypothesis benchmark does it
//! before measuring alignment (paper §5, Huh et al. 2024 `measure_alignment.py`):
//! clamp outliers at the q-quantile of |x| over the whole array, then L2-normalise rows.

use crate::formats::features::Features;
use crate::linalg::Matrix;
use crate::{Error, Result};

/// The PRH preprocessing pipeline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preprocess {
    /// Clamp every value to [-t, t], t the `q`-quantile of |x| over the whole array
    /// (PRH's `remove_outliers(exact=True)`, q = 0.95). `None` (or q = 1) skips it.
    pub outlier_q: Option<f64>,
    /// L2-normalise each row (`F.normalize(x, dim=-1)`), on by default.
    pub normalize: bool,
}

impl Default for Preprocess {
    fn default() -> Self {
        Preprocess {
            outlier_q: Some(0.95),
            normalize: true,
        }
    }
}

impl Preprocess {
    /// Rotation-equivariant preprocessing: no clamp (clamping coordinates does not commute
    /// with rotations), rows normalised. Used for Procrustes and pair-free matching.
    pub fn normalize_only() -> Self {
        Preprocess {
            outlier_q: None,
            normalize: true,
        }
    }

    /// Clamps `f` in place when `outlier_q` is set (over all layers at once, as PRH does
    /// for an `[N, L, D]` tensor); returns the threshold used, if any.
    pub fn clamp(&self, f: &mut Features) -> Result<Option<f64>> {
        match self.outlier_q {
            Some(q) if q < 1.0 => Ok(Some(clamp_outliers(&mut f.data, q)?)),
            Some(q) if q > 1.0 || q.is_nan() => Err(Error::invalid(format!(
                "outlier quantile {q} outside (0, 1]"
            ))),
            _ => Ok(None),
        }
    }

    /// The clamp threshold [`Preprocess::clamp`] would apply, without changing `f` (so the
    /// caller needs no clamped copy of the whole array; the clamp is then applied per layer
    /// by [`Preprocess::layer_matrix_clamped`]). Holds one `|x|` buffer while it selects.
    pub fn threshold(&self, f: &Features) -> Result<Option<f64>> {
        match self.outlier_q {
            Some(q) if q < 1.0 => {
                let t = outlier_threshold(&f.data, q)?;
                if t == 0.0 && f.data.iter().any(|&x| x != 0.0) {
                    // Sparse features (a bag of words): the clamp would zero every value and
                    // every score would come from ties, a silently wrong number.
                    return Err(Error::format(
                        &f.source,
                        "values",
                        format!(
                            "the outlier clamp's quantile {q} of |x| is 0 (more than {:.0} % of \
                             the values are zero, as in sparse features), so clamping would \
                             zero every value; turn the clamp off (--no-clamp)",
                            q * 100.0
                        ),
                    ));
                }
                Ok(Some(t))
            }
            Some(q) if q > 1.0 || q.is_nan() => Err(Error::invalid(format!(
                "outlier quantile {q} outside (0, 1]"
            ))),
            _ => Ok(None),
        }
    }

    /// One layer of already-clamped features as an `[n, d]` matrix, row-normalised when
    /// `normalize` is set.
    ///
    /// # Shapes
    /// `f [n, layers, d]` -> `[n, d]`
    pub fn layer_matrix(&self, f: &Features, layer: usize) -> Result<Matrix> {
        self.layer_matrix_clamped(f, layer, None)
    }

    /// One layer clamped to [-t, t] (when `clamp = Some(t)`) then row-normalised when
    /// `normalize` is set, built straight from `f` without an intermediate copy.
    ///
    /// # Shapes
    /// `f [n, layers, d]` -> `[n, d]`
    pub fn layer_matrix_clamped(
        &self,
        f: &Features,
        layer: usize,
        clamp: Option<f64>,
    ) -> Result<Matrix> {
        if layer >= f.layers {
            return Err(Error::invalid(format!(
                "{}: layer {layer} out of range 0..{}",
                f.source, f.layers
            )));
        }
        let t = clamp.unwrap_or(f64::INFINITY);
        let mut m = Matrix::zeros(f.n, f.d);
        // Row-major source, column-major target: copy 64-row tiles so both stay in cache.
        for i0 in (0..f.n).step_by(64) {
            let rows = i0..(i0 + 64).min(f.n);
            for j in 0..f.d {
                let col = m.col_as_slice_mut(j);
                for i in rows.clone() {
                    col[i] = f.data[(i * f.layers + layer) * f.d + j].clamp(-t, t);
                }
            }
        }
        if self.normalize {
            l2_normalize_rows(&mut m);
        }
        Ok(m)
    }
}

/// Clamps every value of `data` to [-t, t] with t = sorted(|x|)[floor(q * len)], the
/// exact quantile of PRH's `remove_outliers(feats, q, exact=True)`; returns t.
///
/// Uses `select_nth_unstable` (O(len)) instead of a full sort.
///
/// # Shapes
/// `data [len]` -> `data [len]` (in place)
pub fn clamp_outliers(data: &mut [f64], q: f64) -> Result<f64> {
    let t = outlier_threshold(data, q)?;
    for x in data.iter_mut() {
        *x = x.clamp(-t, t);
    }
    Ok(t)
}

/// The threshold t = sorted(|x|)[floor(q * len)] of [`clamp_outliers`], leaving `data` as is.
///
/// # Shapes
/// `data [len]` -> scalar
pub fn outlier_threshold(data: &[f64], q: f64) -> Result<f64> {
    if !(q > 0.0 && q <= 1.0) {
        return Err(Error::invalid(format!(
            "outlier quantile {q} outside (0, 1]"
        )));
    }
    if data.is_empty() {
        return Err(Error::invalid("cannot clamp an empty array"));
    }
    let mut abs: Vec<f64> = data.iter().map(|x| x.abs()).collect();
    let idx = ((q * abs.len() as f64) as usize).min(abs.len() - 1);
    let (_, t, _) = abs.select_nth_unstable_by(idx, f64::total_cmp);
    Ok(*t)
}

/// Row L2 normalisation x_i <- x_i / max(||x_i||, 1e-12) (torch's `F.normalize`).
///
/// # Shapes
/// `m [n, d]` -> `m [n, d]` (in place)
pub fn l2_normalize_rows(m: &mut Matrix) {
    // Column by column (faer is column-major); each row's sum still runs over j in order.
    let mut sq = vec![0.0; m.nrows()];
    for j in 0..m.ncols() {
        for (s, &v) in sq.iter_mut().zip(m.col_as_slice(j)) {
            *s += v * v;
        }
    }
    let norms: Vec<f64> = sq.iter().map(|s| s.sqrt().max(1e-12)).collect();
    for j in 0..m.ncols() {
        for (v, nrm) in m.col_as_slice_mut(j).iter_mut().zip(&norms) {
            *v /= nrm;
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_clamp_that_would_zero_sparse_features_is_an_error() {
        // 96 % zeros: the 0.95 quantile of |x| is 0.
        let mut data = vec![0.0; 100];
        data[..4].copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
        let f = Features::new("tfidf.npy", 10, 1, 10, data).unwrap();
        let err = Preprocess::default().threshold(&f).unwrap_err().to_string();
        assert!(
            err.contains("tfidf.npy") && err.contains("--no-clamp"),
            "{err}"
        );
        let off = Preprocess {
            outlier_q: None,
            ..Preprocess::default()
        };
        assert_eq!(off.threshold(&f).unwrap(), None);
        // All-zero input is left to the degeneracy warnings (nothing to lose by clamping).
        let zero = Features::new("z", 10, 1, 10, vec![0.0; 100]).unwrap();
        assert_eq!(Preprocess::default().threshold(&zero).unwrap(), Some(0.0));
    }

    use super::*;

    #[test]
    fn clamp_matches_exact_quantile() {
        // |x| sorted = 0..19; floor(0.95 * 20) = 19 -> t = 19 (nothing clamped);
        // with q = 0.5 -> index 10 -> t = 10.
        let mut v: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { i as f64 } else { -(i as f64) })
            .collect();
        assert_eq!(clamp_outliers(&mut v.clone(), 0.95).unwrap(), 19.0);
        assert_eq!(clamp_outliers(&mut v, 0.5).unwrap(), 10.0);
        assert_eq!(v[19], -10.0);
        assert_eq!(v[18], 10.0);
        assert_eq!(v[3], -3.0);
        assert!(clamp_outliers(&mut v, 1.5).is_err());
    }

    #[test]
    fn rows_have_unit_norm() {
        let mut m = Matrix::from_fn(3, 2, |i, j| (i + 2 * j) as f64);
        l2_normalize_rows(&mut m);
        assert!((m[(1, 0)] - 1.0 / 10f64.sqrt()).abs() < 1e-15);
        // The zero-free rows are unit; row 0 = (0, 2) -> (0, 1).
        assert_eq!(m[(0, 1)], 1.0);
    }
}
