//! GELU, `x Φ(x)` with Φ the standard normal CDF, computed with a branch-free erfc that
//! the compiler vectorises, for burn-flex.
//!
//! Why not burn's `gelu`: burn-flex evaluates it with scalar libm `erff` per element, in
//! the forward and again (with `expf`) in the backward: about 15 % of a bert-s training
//! step (docs/benchmarks.md, "Training throughput"). Here the forward and the backward
//! are each one vectorised pass, run as a custom autodiff op on burn-flex
//! ([`crate::backend::flex_ops`]). Other backends keep burn's own `gelu`.

use burn::tensor::{Tensor, activation, backend::Backend};

/// `GELU(x) = x Φ(x)`, elementwise, any rank, with the exact derivative
/// `GELU'(x) = Φ(x) + x φ(x)` in the backward. On burn-flex (f32) both come from
/// [`gelu_forward`] / [`gelu_backward`] (within 4e-7 relative of the exact values; the
/// tests check against f64); elsewhere this is burn's `gelu`.
///
/// # Shapes
/// `x` any shape -> the same shape.
pub fn gelu<B: Backend, const D: usize>(x: Tensor<B, D>) -> Tensor<B, D> {
    #[cfg(all(feature = "flex", not(target_arch = "wasm32")))]
    let x = match crate::backend::flex_ops::gelu(x) {
        Ok(y) => return y,
        Err(x) => x,
    };
    activation::gelu(x)
}

/// `y_i = x_i Φ(x_i)`.
///
/// # Shapes
/// `x`, `y` both `[n]` (`y` may be longer; the rest is left alone).
pub fn gelu_forward(x: &[f32], y: &mut [f32]) {
    chunked(x, y, |x, y| dispatch(Kernel::Forward { x, y }));
}

/// `g_i <- g_i (Φ(x_i) + x_i φ(x_i))`: the incoming gradient times GELU'(x), in place.
///
/// # Shapes
/// `x`, `g` both `[n]`.
pub fn gelu_backward(x: &[f32], g: &mut [f32]) {
    chunked(x, g, |x, g| dispatch(Kernel::Backward { x, g }));
}

/// `f` on matching chunks of `x` and `out`: on every core with `cpu-fast` (rayon), for
/// inputs large enough to pay for it; else once on the whole slices.
fn chunked(x: &[f32], out: &mut [f32], f: impl Fn(&[f32], &mut [f32]) + Sync) {
    #[cfg(feature = "cpu-fast")]
    {
        use rayon::prelude::*;
        const CHUNK: usize = 1 << 14;
        if x.len() > 2 * CHUNK {
            x.par_chunks(CHUNK)
                .zip(out.par_chunks_mut(CHUNK))
                .for_each(|(x, o)| f(x, o));
            return;
        }
    }
    f(x, out)
}

fn dispatch(kernel: Kernel<'_>) {
    #[cfg(all(feature = "flex", not(target_arch = "wasm32")))]
    pulp::Arch::new().dispatch(kernel);
    #[cfg(not(all(feature = "flex", not(target_arch = "wasm32"))))]
    kernel.run();
}

/// The loops, written branch-free so that LLVM vectorises them. pulp calls `with_simd`
/// from functions compiled for AVX-512 / AVX2+FMA / baseline and picks one by CPU
/// detection at run time; everything below is `#[inline(always)]` so the loop is compiled
/// inside each (a closure would be compiled once, for the baseline's SSE: measured 4x
/// slower).
enum Kernel<'a> {
    Forward { x: &'a [f32], y: &'a mut [f32] },
    Backward { x: &'a [f32], g: &'a mut [f32] },
}

impl Kernel<'_> {
    #[inline(always)]
    fn run(self) {
        match self {
            Kernel::Forward { x, y } => {
                for (&x, y) in x.iter().zip(y.iter_mut()) {
                    let (cdf, _) = normal_cdf_pdf(x);
                    *y = x * cdf;
                }
            }
            Kernel::Backward { x, g } => {
                for (&x, g) in x.iter().zip(g.iter_mut()) {
                    let (cdf, pdf) = normal_cdf_pdf(x);
                    *g *= cdf + x * pdf;
                }
            }
        }
    }
}

#[cfg(all(feature = "flex", not(target_arch = "wasm32")))]
impl pulp::WithSimd for Kernel<'_> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        self.run()
    }
}

/// `(Φ(x), φ(x))`: `Φ(x) = erfc(−x/√2)/2`, with erfc from Numerical Recipes' Chebyshev
/// fit (`erfc(z) = t exp(−z² + P(t))`, `t = 1/(1 + |z|/2)`, fractional error < 1.2e-7
/// for every z), and `φ(x) = exp(−x²/2)/√(2π)`.
#[inline(always)]
fn normal_cdf_pdf(x: f32) -> (f32, f32) {
    // exp(−x²/2) loses ~x² ulps if x²/2 is rounded before the exp (1e-6 relative at
    // x = −5), so x² goes in as an exact head plus a small tail: x = xh + xl with xh's
    // low 12 mantissa bits cleared, xh² exact in f32.
    // Beyond |x| = 14, φ(x) < 1e-43 and Φ(x) is 0 or 1 in f32: clamping keeps infinities
    // out of the arithmetic (an infinite x then gives what libm's erf gives), and the
    // Gaussian is set to exactly 0 where it underflows, so that x φ(x) is 0 for any
    // finite x, however large.
    let x = x.clamp(-14.0, 14.0);
    let xh = f32::from_bits(x.to_bits() & 0xFFFF_F000);
    let xl = x - xh;
    let hi = -0.5 * (xh * xh);
    let gauss = exp_split(hi, -0.5 * (xl * (xh + x)));
    let gauss = if hi < -87.0 { 0.0 } else { gauss };
    let t = 1.0 / (1.0 + 0.5 * core::f32::consts::FRAC_1_SQRT_2 * x.abs());
    let p = horner(
        t,
        [
            -1.265_512_2,
            1.000_023_7,
            0.374_091_96,
            0.096_784_18,
            -0.186_288_06,
            0.278_868_07,
            -1.135_204,
            1.488_515_9,
            -0.822_152_23,
            0.170_872_77,
        ],
    );
    // erfc(|z|) with z = −x/√2; Φ(x) = erfc(z)/2, and erfc(z) = 2 − erfc(|z|) for z < 0.
    let erfc_abs = t * gauss * exp_split(p, 0.0);
    let erfc = if x <= 0.0 { erfc_abs } else { 2.0 - erfc_abs };
    const FRAC_1_SQRT_2PI: f32 = 0.398_942_3;
    (0.5 * erfc, FRAC_1_SQRT_2PI * gauss)
}

/// `e^(hi + lo)` for f32 with `|lo|` small against `|hi|`, branch-free: `hi = n ln2 + r`
/// with `|r| <= ln2/2` (Cody-Waite, two-part ln2; `lo` joins r), `e^r` by its degree-7
/// Taylor polynomial (truncation < 5e-9 relative), `2^n` by writing the exponent bits.
/// The argument is clamped to [−87, 88], so results stay normal floats (e^−87 ≈ 1.6e-38
/// stands for anything smaller).
#[inline(always)]
fn exp_split(hi: f32, lo: f32) -> f32 {
    // 1.5 * 2^23: adding it rounds to the nearest integer, which lands in the low mantissa
    // bits, so n is read off as an integer without a float-to-int conversion.
    const ROUND: f32 = 12_582_912.0;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let hi = hi.clamp(-87.0, 88.0);
    let k = hi * core::f32::consts::LOG2_E + ROUND;
    let n = k - ROUND;
    let r = ((hi - n * LN2_HI) + lo) - n * LN2_LO;
    const TAYLOR: [f32; 8] = [
        1.0,
        1.0,
        0.5,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5040.0,
    ];
    let p = horner(r, TAYLOR);
    let n_int = k.to_bits() as i32 - ROUND.to_bits() as i32;
    p * f32::from_bits(((n_int + 127) << 23) as u32)
}

/// `c[0] + t (c[1] + t (c[2] + ...))` by fused multiply-adds. The kernel's AVX2 and
/// AVX-512 builds have FMA instructions (one instruction, one rounding per step); the
/// baseline build (CPUs without AVX2) calls libm's `fmaf` instead: correct, slower.
#[inline(always)]
fn horner<const N: usize>(t: f32, c: [f32; N]) -> f32 {
    let mut acc = c[N - 1];
    for &ci in c[..N - 1].iter().rev() {
        acc = acc.mul_add(t, ci);
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Φ in f64 from libm's erfc: the reference.
    fn cdf64(x: f64) -> f64 {
        0.5 * erfc64(-x / core::f64::consts::SQRT_2)
    }

    /// erfc in f64 by the continued fraction / series, precise to ~1e-15 (enough to judge
    /// an f32 kernel); std has no erfc.
    fn erfc64(z: f64) -> f64 {
        if z < 0.0 {
            return 2.0 - erfc64(-z);
        }
        if z < 3.0 {
            // erf series: erf z = 2/√π Σ (-1)^n z^(2n+1) / (n! (2n+1))
            let mut sum = 0.0;
            let mut term = z;
            let mut n = 0.0;
            while term.abs() > 1e-18 {
                sum += term / (2.0 * n + 1.0);
                n += 1.0;
                term *= -z * z / n;
            }
            return 1.0 - sum * 2.0 / core::f64::consts::PI.sqrt();
        }
        // Lentz continued fraction for erfc, z >= 3.
        let mut f = 0.0;
        for k in (1..200).rev() {
            f = (k as f64 / 2.0) / (z + f);
        }
        (-z * z).exp() / core::f64::consts::PI.sqrt() / (z + f)
    }

    #[test]
    fn exp_matches_std_to_two_ulp_over_its_range() {
        let mut worst = 0.0f64;
        for i in -8700..=8800 {
            let a = i as f32 * 0.01;
            let got = exp_split(a, 0.0) as f64;
            let want = (a as f64).exp();
            worst = worst.max(((got - want) / want).abs());
        }
        assert!(worst < 2.5e-7, "worst relative error {worst}");
    }

    #[test]
    fn forward_and_backward_match_f64_reference() {
        let xs: Vec<f32> = (-1200..=1200).map(|i| i as f32 * 0.01).collect();
        let mut y = vec![0.0; xs.len()];
        let mut s = vec![1.0; xs.len()];
        gelu_forward(&xs, &mut y);
        gelu_backward(&xs, &mut s);
        for ((&x, &y), &s) in xs.iter().zip(&y).zip(&s) {
            let x64 = x as f64;
            let cdf = cdf64(x64);
            let pdf = (-x64 * x64 / 2.0).exp() / (2.0 * core::f64::consts::PI).sqrt();
            let (want_y, want_s) = (x64 * cdf, cdf + x64 * pdf);
            // Relative to the value, with an absolute floor for values near zero.
            let tol = |w: f64| 4e-7 * w.abs().max(1e-6);
            assert!(
                (y as f64 - want_y).abs() <= tol(want_y),
                "GELU({x}) = {y}, want {want_y}"
            );
            assert!(
                (s as f64 - want_s).abs() <= tol(want_s).max(1e-7),
                "GELU'({x}) = {s}, want {want_s}"
            );
        }
    }

    /// Large inputs (split into chunks, on every core with `cpu-fast`) give exactly the
    /// per-element results.
    #[test]
    fn chunked_inputs_match_single_elements() {
        let xs: Vec<f32> = (0..100_003)
            .map(|i| (i as f32 * 0.37).sin() * 6.0)
            .collect();
        let mut y = vec![0.0; xs.len()];
        let mut g = vec![1.5; xs.len()];
        gelu_forward(&xs, &mut y);
        gelu_backward(&xs, &mut g);
        for (i, &x) in xs.iter().enumerate().step_by(997) {
            let (mut y1, mut g1) = ([0.0], [1.5]);
            gelu_forward(&[x], &mut y1);
            gelu_backward(&[x], &mut g1);
            assert_eq!((y[i], g[i]), (y1[0], g1[0]), "element {i}");
        }
    }

    /// A strided incoming gradient (the backward of a transpose after the GELU) takes the
    /// copying branch of the backward; the result equals burn-flex's own GELU gradient.
    #[cfg(feature = "flex")]
    #[test]
    fn tensor_gelu_on_flex_with_a_strided_gradient() {
        use burn::backend::{Autodiff, Flex};
        use burn::tensor::Distribution;
        type B = Autodiff<Flex>;
        let device = Default::default();
        let x = Tensor::<B, 2>::random([37, 23], Distribution::Normal(0.0, 2.0), &device)
            .require_grad();
        let w = Tensor::<B, 2>::random([23, 37], Distribution::Normal(0.0, 1.0), &device);
        let g_ours = (gelu(x.clone()).transpose() * w.clone()).sum().backward();
        let g_burn = (activation::gelu(x.clone()).transpose() * w)
            .sum()
            .backward();
        let (a, b) = (x.grad(&g_ours).unwrap(), x.grad(&g_burn).unwrap());
        let diff = (a.clone() - b).abs().max().into_scalar();
        assert!(diff < 2e-6, "max difference {diff}");
        assert!(a.abs().max().into_scalar() > 0.1);
    }

    #[test]
    fn limits_are_the_identity_and_zero() {
        let xs = [-200.0f32, -30.0, 0.0, 30.0, 200.0];
        let mut y = [0.0; 5];
        let mut s = [1.0; 5];
        gelu_forward(&xs, &mut y);
        gelu_backward(&xs, &mut s);
        assert!(y[0] == 0.0 && y[1] == 0.0, "{y:?}");
        assert_eq!((y[2], s[2]), (0.0, 0.5));
        assert_eq!((y[3], y[4]), (30.0, 200.0));
        assert_eq!((s[3], s[4]), (1.0, 1.0));
        let mut nan = [0.0];
        gelu_forward(&[f32::NAN], &mut nan);
        assert!(nan[0].is_nan());
        // As 0.5 x (1 + erf(x/√2)) with libm: +inf -> +inf, -inf -> -inf * 0 = NaN.
        let mut inf = [0.0; 2];
        gelu_forward(&[f32::INFINITY, f32::NEG_INFINITY], &mut inf);
        assert!(inf[0] == f32::INFINITY && inf[1].is_nan(), "{inf:?}");
        // The slope stays 1 for huge finite x (x φ(x) is exactly 0, not x * 1e-38).
        let mut s = [1.0; 2];
        gelu_backward(&[3e38, -3e38], &mut s);
        assert_eq!(s, [1.0, 0.0]);
    }

    /// The tensor function on burn-flex's training backend: values against burn's
    /// `gelu` (libm erf), and the input gradient of `sum(w ⊙ GELU(x))` against
    /// `w ⊙ GELU'(x)` in f64, for a contiguous input and a transposed (strided) one.
    #[cfg(feature = "flex")]
    #[test]
    fn tensor_gelu_on_flex_matches_burn_and_exact_gradient() {
        use burn::backend::{Autodiff, Flex};
        use burn::tensor::{Distribution, TensorData};
        type B = Autodiff<Flex>;
        let device = Default::default();
        for strided in [false, true] {
            let x = Tensor::<B, 3>::random([3, 17, 29], Distribution::Normal(0.0, 3.0), &device)
                .require_grad();
            let w = Tensor::<B, 3>::random([3, 29, 17], Distribution::Normal(0.0, 1.0), &device);
            let xin = if strided {
                x.clone().swap_dims(1, 2)
            } else {
                x.clone().reshape([3, 29, 17])
            };
            let ours = gelu(xin.clone());
            let grads = (ours.clone() * w.clone()).sum().backward();
            let vec = |t: TensorData| t.to_vec::<f32>().unwrap();
            let close = |a: &[f32], b: &[f64], what: &str| {
                assert_eq!(a.len(), b.len());
                for (a, b) in a.iter().zip(b) {
                    let err = (*a as f64 - b).abs();
                    assert!(err <= 2e-6 * b.abs().max(1.0), "{what}: {a} vs {b}");
                }
            };
            let theirs: Vec<f64> = vec(activation::gelu(xin.clone()).into_data())
                .iter()
                .map(|&v| v as f64)
                .collect();
            close(&vec(ours.into_data()), &theirs, "values");
            // d/dx of sum(w ⊙ GELU(xin)): w mapped back through the reshape / transpose.
            let w_x = if strided {
                w.clone().swap_dims(1, 2)
            } else {
                w.clone().reshape([3, 17, 29])
            };
            let want: Vec<f64> = vec(x.clone().into_data())
                .iter()
                .zip(vec(w_x.into_data()))
                .map(|(&x, w)| {
                    let x = x as f64;
                    let pdf = (-x * x / 2.0).exp() / (2.0 * core::f64::consts::PI).sqrt();
                    w as f64 * (cdf64(x) + x * pdf)
                })
                .collect();
            close(
                &vec(x.grad(&grads).unwrap().into_data()),
                &want,
                "input gradients",
            );
            // Inference (the inner backend) takes the plain kernel.
            close(&vec(gelu(xin.inner()).into_data()), &theirs, "inference");
        }
    }
}
