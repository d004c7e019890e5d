//! Divide and conquer for the symmetric tridiagonal eigenproblem T = U diag(lambda) U^T
//! (Cuppen 1981, with Gu & Eisenstat's 1995 recomputation of z for orthogonal vectors):
//! the second step of [`super::sym_eigen`], after [`super::tridiag`].
//!
//! This is faer 0.24's `tridiag_evd::divide_and_conquer` (MIT licence, same algorithm,
//! same deflation, same root finder), ported to f64 with one change: the secular function
//! f(mu) = 1/rho + sum_k z_k^2 / ((d_k - shift) - mu), evaluated ~20 times for each of the
//! k roots of each merge (O(k^2) divisions a merge), runs in explicit SIMD ([`Secular`]).
//! faer's loop is a serial chain of scalar divisions (a strict floating-point sum, which
//! the compiler may not reorder), and it was ~60 % of faer's divide and conquer at
//! n = 1,000 (`perf`; LAPACK's `dstedc`, whose root finder needs fewer evaluations, took
//! 0.047 s where faer took 0.075 s). The sums now run in another order, so results differ
//! from faer's in the last bits; the tests hold them to faer's within 1e-12 n.
//!
//! Leaves (at most [`LEAF`] rows) are solved by faer's implicit QR (its public
//! `tridiagonal_self_adjoint_evd` below its recursion threshold), as faer does.

use faer::linalg::evd::EvdError;
use faer::linalg::matmul::matmul;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, ColMut, ColRef, Mat, MatMut, Par};

/// Sub-problems of at most this many rows go to faer's QR algorithm (faer's default
/// recursion threshold is 128, and its public solver recurses from 128 on).
const LEAF: usize = 127;

/// Eigenvalues (ascending, into `diag`) and eigenvectors (the columns of `u`) of the
/// symmetric tridiagonal T with diagonal `diag` and subdiagonal `sub`.
///
/// # Shapes
/// `diag [n]`, `sub [n - 1]`, `u [n, n]` (overwritten)
pub(crate) fn tridiagonal_evd(
    diag: &mut [f64],
    sub: &[f64],
    u: MatMut<'_, f64>,
    par: Par,
) -> Result<(), EvdError> {
    let n = diag.len();
    assert_eq!(
        sub.len(),
        n.saturating_sub(1),
        "tridiagonal_evd: sub [n - 1]"
    );
    assert!(
        u.nrows() == n && u.ncols() == n,
        "tridiagonal_evd: u [n, n]"
    );
    if n == 0 {
        return Ok(());
    }
    if n <= LEAF {
        return leaf(diag, sub, u);
    }
    // faer's layout: an off-diagonal as long as the diagonal (the last entry unused), so
    // that the right half of every split keeps one.
    let mut offdiag = sub.to_vec();
    offdiag.push(0.0);
    let mut s = Scratch::new(n);
    recurse(diag, &mut offdiag, u, par, s.view())
}

/// faer's implicit QR on a leaf (it sorts ascending and overwrites `u`): `diag [n]`, `sub [n - 1]`.
fn leaf(diag: &mut [f64], sub: &[f64], u: MatMut<'_, f64>) -> Result<(), EvdError> {
    let values = faer_solver(diag, sub, u)?;
    diag.copy_from_slice(&values);
    Ok(())
}

/// faer's own public solver for T (`tridiagonal_self_adjoint_evd`: QR below 128 rows, its
/// divide and conquer from 128 on): eigenvalues ascending, eigenvectors into `u`. The
/// leaves' solver here, and the tests' reference.
///
/// # Shapes
/// `diag [n]`, `sub [n - 1]`, `u [n, n]` -> values `[n]`
fn faer_solver(diag: &[f64], sub: &[f64], u: MatMut<'_, f64>) -> Result<Vec<f64>, EvdError> {
    use faer::dyn_stack::{MemBuffer, MemStack};
    let n = diag.len();
    // faer's whole solver's scratch covers its tridiagonal stage's.
    let mut buf = MemBuffer::new(faer::linalg::evd::self_adjoint_evd_scratch::<f64>(
        n,
        faer::linalg::evd::ComputeEigenvectors::Yes,
        Par::Seq,
        Default::default(),
    ));
    let mut s = faer::Col::<f64>::zeros(n);
    faer::linalg::evd::tridiagonal_self_adjoint_evd(
        ColRef::from_slice(diag).as_diagonal(),
        ColRef::from_slice(sub).as_diagonal(),
        s.as_mut().as_diagonal_mut(),
        Some(u),
        Par::Seq,
        MemStack::new(&mut buf),
        Default::default(),
    )?;
    Ok(s.iter().copied().collect())
}

/// The work arrays of one merge, split between the two halves for the recursion.
struct Scratch {
    idx: Vec<usize>,
    vals: Vec<f64>,
    repaired_u: Mat<f64>,
    tmp: Mat<f64>,
}

/// [`Scratch`] as slices: `pl_before, pl_after, pr, run_info` and `z, permuted_diag,
/// permuted_z, householder, mus, shifts`, each `[n]`; `repaired_u, tmp` `[n, n]`.
struct ScratchMut<'a> {
    idx: [&'a mut [usize]; 4],
    vals: [&'a mut [f64]; 6],
    repaired_u: MatMut<'a, f64>,
    tmp: MatMut<'a, f64>,
}

impl Scratch {
    fn new(n: usize) -> Self {
        Scratch {
            idx: vec![0; 4 * n],
            vals: vec![0.0; 6 * n],
            repaired_u: Mat::zeros(n, n),
            tmp: Mat::zeros(n, n),
        }
    }

    fn view(&mut self) -> ScratchMut<'_> {
        let n = self.repaired_u.nrows();
        let mut idx = self.idx.chunks_exact_mut(n);
        let mut vals = self.vals.chunks_exact_mut(n);
        ScratchMut {
            idx: std::array::from_fn(|_| idx.next().expect("4 index arrays")),
            vals: std::array::from_fn(|_| vals.next().expect("6 value arrays")),
            repaired_u: self.repaired_u.as_mut(),
            tmp: self.tmp.as_mut(),
        }
    }
}

impl<'a> ScratchMut<'a> {
    /// The first `n1` entries (and the leading `n1 x n1` blocks) for the left half, the
    /// rest (and the trailing blocks) for the right half.
    fn split(self, n1: usize) -> (ScratchMut<'a>, ScratchMut<'a>) {
        let (left_idx, right_idx) = split_each(self.idx, n1);
        let (left_vals, right_vals) = split_each(self.vals, n1);
        let (ru0, _, _, ru1) = self.repaired_u.split_at_mut(n1, n1);
        let (t0, _, _, t1) = self.tmp.split_at_mut(n1, n1);
        (
            ScratchMut {
                idx: left_idx,
                vals: left_vals,
                repaired_u: ru0,
                tmp: t0,
            },
            ScratchMut {
                idx: right_idx,
                vals: right_vals,
                repaired_u: ru1,
                tmp: t1,
            },
        )
    }
}

/// Each slice split at `at`: the heads, then the tails.
fn split_each<'a, T, const K: usize>(
    parts: [&'a mut [T]; K],
    at: usize,
) -> ([&'a mut [T]; K], [&'a mut [T]; K]) {
    let mut heads: [&'a mut [T]; K] = std::array::from_fn(|_| Default::default());
    let mut tails: [&'a mut [T]; K] = std::array::from_fn(|_| Default::default());
    for (k, s) in parts.into_iter().enumerate() {
        (heads[k], tails[k]) = s.split_at_mut(at);
    }
    (heads, tails)
}

/// One node of the recursion: T = [T0, 0; 0, T1] + rho v v^T (v = e_{n1-1} + sign e_{n1}),
/// the halves solved recursively, then the rank-one update solved through the secular
/// equation, and U = diag(U0, U1) U_update.
fn recurse(
    diag: &mut [f64],
    offdiag: &mut [f64],
    mut u: MatMut<'_, f64>,
    par: Par,
    s: ScratchMut<'_>,
) -> Result<(), EvdError> {
    let n = diag.len();
    if n <= LEAF {
        return leaf(diag, &offdiag[..n - 1], u);
    }
    let n1 = n / 2;
    let mut rho = offdiag[n1 - 1];
    let (mut u0, _, _, mut u1) = u.rb_mut().split_at_mut(n1, n1);
    let ScratchMut {
        mut idx,
        mut vals,
        mut repaired_u,
        mut tmp,
    } = s;
    {
        let (diag0, diag1) = diag.split_at_mut(n1);
        let (offdiag0, rest) = offdiag.split_at_mut(n1 - 1);
        let offdiag1 = &mut rest[1..];
        diag0[n1 - 1] -= rho.abs();
        diag1[0] -= rho.abs();
        // The halves use the scratch's leading and trailing parts; this node's own use of
        // it starts after they return.
        let whole = ScratchMut {
            idx: idx.each_mut().map(|s| &mut **s),
            vals: vals.each_mut().map(|s| &mut **s),
            repaired_u: repaired_u.rb_mut(),
            tmp: tmp.rb_mut(),
        };
        let (s0, s1) = whole.split(n1);
        let mut r0 = Ok(());
        let mut r1 = Ok(());
        faer::utils::thread::join_raw(
            |par| r0 = recurse(diag0, offdiag0, u0.rb_mut(), par, s0),
            |par| r1 = recurse(diag1, offdiag1, u1.rb_mut(), par, s1),
            par,
        );
        r0?;
        r1?;
    }
    let [pl_before, pl_after, pr, run_info] = idx;
    let [z, permuted_diag, permuted_z, householder, mus, shifts] = vals;

    // z = (last row of U0, sign(rho) first row of U1) / sqrt 2, and rho = 2 |rho|.
    let (z0, z1) = z.split_at_mut(n1);
    for (k, x) in z0.iter_mut().enumerate() {
        *x = u0[(n1 - 1, k)];
    }
    for (k, x) in z1.iter_mut().enumerate() {
        *x = if rho < 0.0 { -u1[(0, k)] } else { u1[(0, k)] };
    }
    let inv_sqrt2 = 0.5f64.sqrt();
    for x in z.iter_mut() {
        *x *= inv_sqrt2;
    }
    rho = rho.abs() * 2.0;

    // Merge the halves' eigenvalues (each ascending) into one ascending order.
    {
        let (mut i, mut j) = (0usize, 0usize);
        for p in pl_before.iter_mut() {
            if i == n1 {
                *p = n1 + j;
                j += 1;
            } else if j == n - n1 || diag[i] < diag[n1 + j] {
                *p = i;
                i += 1;
            } else {
                *p = n1 + j;
                j += 1;
            }
        }
    }
    for (i, &p) in pl_before.iter().enumerate() {
        permuted_diag[i] = diag[p];
        permuted_z[i] = z[p];
    }
    let dmax = permuted_diag.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let zmax = permuted_z.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let tol = 8.0 * f64::EPSILON * dmax.max(zmax);
    if rho * zmax <= tol {
        // The coupling is negligible: U = diag(U0, U1), columns in merged order.
        let (mut tl, mut tr, mut bl, mut br) = tmp.rb_mut().split_at_mut(n1, n1);
        tl.copy_from(u0.rb());
        br.copy_from(u1.rb());
        tr.fill(0.0);
        bl.fill(0.0);
        for (j, &p) in pl_before.iter().enumerate() {
            u.rb_mut().col_mut(j).copy_from(tmp.rb().col(p));
        }
        diag.copy_from_slice(permuted_diag);
        return Ok(());
    }

    // Deflation: negligible z_i, and runs of (numerically) equal d_i, which a Householder
    // reflector turns into one nonzero z.
    for zi in permuted_z.iter_mut() {
        if (rho * *zi).abs() <= tol {
            *zi = 0.0;
        }
    }
    let mut applied_householder = false;
    let mut idx = 0;
    while idx < n {
        let mut run_len = 1;
        let d_prev = permuted_diag[idx];
        while idx + run_len < n {
            if permuted_diag[idx + run_len] - d_prev <= tol {
                permuted_diag[idx + run_len] = d_prev;
                run_len += 1;
            } else {
                break;
            }
        }
        run_info[idx..idx + run_len].fill(run_len);
        if run_len > 1 {
            applied_householder = true;
            let h = &mut householder[idx..idx + run_len];
            let pz = &mut permuted_z[idx..idx + run_len];
            h.copy_from_slice(pz);
            let (tail, head) = h.split_at_mut(run_len - 1);
            let info = faer::linalg::householder::make_householder_in_place(
                &mut head[0],
                ColMut::from_slice_mut(tail).reverse_rows_mut(),
            );
            pz.fill(0.0);
            pz[run_len - 1] = head[0];
            head[0] = info.tau;
        }
        idx += run_len;
    }
    let mut non_deflated = 0;
    let mut deflated = 0;
    for reader in 0..n {
        let (zr, dr) = (permuted_z[reader], permuted_diag[reader]);
        if zr == 0.0 {
            diag[deflated] = dr;
            pr[deflated] = reader;
            deflated += 1;
        } else {
            permuted_z[non_deflated] = zr;
            permuted_diag[non_deflated] = dr;
            pl_after[non_deflated] = reader;
            non_deflated += 1;
        }
    }
    permuted_diag[non_deflated..n].copy_from_slice(&diag[..deflated]);
    pl_after[non_deflated..n].copy_from_slice(&pr[..deflated]);
    compute_eigenvalues(mus, shifts, permuted_diag, permuted_z, rho, non_deflated);

    // Gu & Eisenstat: recompute z from the computed roots (Loewner), so the eigenvectors
    // below are orthogonal to working precision.
    for i in 0..non_deflated {
        let di = permuted_diag[i];
        let mut prod = mus[i] + (shifts[i] - di);
        for k in (0..i).chain(i + 1..non_deflated) {
            let numerator = mus[k] + (shifts[k] - di);
            let denominator = permuted_diag[k] - di;
            prod *= numerator / denominator;
        }
        let prod = prod.abs().sqrt();
        permuted_z[i] = if permuted_z[i] < 0.0 { -prod } else { prod };
    }
    let eigenvals = z;
    for i in 0..n {
        eigenvals[i] = mus[i] + shifts[i];
    }
    for (i, p) in pr.iter_mut().enumerate() {
        *p = i;
    }
    pr.sort_unstable_by(|&i, &j| {
        let (a, b) = (eigenvals[i], eigenvals[j]);
        a.partial_cmp(&b)
            .unwrap_or_else(|| b.is_nan().cmp(&a.is_nan()).reverse())
    });
    if !applied_householder {
        for p in pl_after.iter_mut() {
            *p = pl_before[*p];
        }
    }
    // The update's eigenvectors: (D - lambda_j)^-1 z, normalised; unit vectors for the
    // deflated ones.
    for (j, &pj) in pr.iter().enumerate() {
        let mut col = repaired_u.rb_mut().col_mut(j);
        if pj >= non_deflated {
            col.fill(0.0);
            col[pl_after[pj]] = 1.0;
        } else {
            let (mu_j, shift_j) = (mus[pj], shifts[pj]);
            for (i, &pa) in pl_after[..non_deflated].iter().enumerate() {
                col[pa] = permuted_z[i] / ((permuted_diag[i] - shift_j) - mu_j);
            }
            for &pa in &pl_after[non_deflated..non_deflated + deflated] {
                col[pa] = 0.0;
            }
            let inv_norm = col.rb().norm_l2().recip();
            for x in col.iter_mut() {
                *x *= inv_norm;
            }
        }
    }
    if applied_householder {
        let mut idx = 0;
        while idx < n {
            let run_len = run_info[idx];
            if run_len > 1 {
                let h = &mut householder[idx..idx + run_len];
                let tau_inv = h[run_len - 1].recip();
                h[run_len - 1] = 1.0;
                for j in 0..n {
                    let col = repaired_u.rb_mut().col_mut(j).subrows_mut(idx, run_len);
                    let dot: f64 = tau_inv
                        * h.iter()
                            .zip(col.rb().iter())
                            .map(|(a, b)| a * b)
                            .sum::<f64>();
                    for (x, hv) in col.iter_mut().zip(h.iter()) {
                        *x -= dot * hv;
                    }
                }
            }
            idx += run_len;
        }
        for j in 0..n {
            for (i, &p) in pl_before.iter().enumerate() {
                tmp[(p, j)] = repaired_u[(i, j)];
            }
        }
        core::mem::swap(&mut repaired_u, &mut tmp);
    }
    // U = diag(U0, U1) U_update, the two halves' products side by side.
    {
        let (top, bottom) = repaired_u.rb().split_at_row(n1);
        let (tmp_top, tmp_bottom) = tmp.rb_mut().split_at_row_mut(n1);
        let (u0, u1) = (u0.rb(), u1.rb());
        faer::utils::thread::join_raw(
            |par| matmul(tmp_top, Accum::Replace, u0, top, 1.0, par),
            |par| matmul(tmp_bottom, Accum::Replace, u1, bottom, 1.0, par),
            par,
        );
    }
    u.copy_from(tmp.rb());
    for (d, &p) in diag.iter_mut().zip(pr.iter()) {
        *d = eigenvals[p];
    }
    Ok(())
}

/// The roots of the secular equation 1/rho + sum_k z_k^2 / (d_k - lambda) = 0, one in each
/// interval (d_i, d_{i+1}) and the last in (d_k, d_k + rho |z|^2): lambda_i = shifts[i] +
/// mus[i], with the shift the nearer pole (faer's representation, accurate near the
/// poles). Deflated entries (i >= `non_deflated`) keep their d_i.
fn compute_eigenvalues(
    mus: &mut [f64],
    shifts: &mut [f64],
    d: &[f64],
    z: &[f64],
    rho: f64,
    non_deflated: usize,
) {
    let k = non_deflated;
    let rho_recip = rho.recip();
    let z_norm2: f64 = z.iter().map(|x| x * x).sum();
    let arch = pulp::Arch::new();
    let (dk, zk) = (&d[..k], &z[..k]);
    let f = |shift: f64, mu: f64| {
        arch.dispatch(Secular {
            d: dk,
            z: zk,
            shift,
            mu,
            rho_recip,
        })
    };
    for i in 0..k {
        let left = d[i];
        let last = i == k - 1;
        let right = if last { d[i] + rho * z_norm2 } else { d[i + 1] };
        let (shift, mu) = secular_eq_root_finder(&f, left, right, last);
        shifts[i] = shift;
        mus[i] = mu;
    }
    for i in k..d.len() {
        shifts[i] = 0.0;
        mus[i] = d[i];
    }
}

/// f(shift, mu) = rho_recip + sum_k z_k (z_k / ((d_k - shift) - mu)), in SIMD lanes with
/// four independent sums (the divisions are independent; only the sum was serial).
struct Secular<'a> {
    d: &'a [f64],
    z: &'a [f64],
    shift: f64,
    mu: f64,
    rho_recip: f64,
}

impl pulp::WithSimd for Secular<'_> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) -> f64 {
        let Secular {
            d,
            z,
            shift,
            mu,
            rho_recip,
        } = self;
        let (ds, dt) = S::as_simd_f64s(d);
        let (zs, zt) = S::as_simd_f64s(z);
        let sh = simd.splat_f64s(shift);
        let m = simd.splat_f64s(mu);
        // acc + z (z / ((d - shift) - mu)), lane-wise.
        let add_term = |acc, dv, zv| {
            let x = simd.sub_f64s(simd.sub_f64s(dv, sh), m);
            simd.mul_add_e_f64s(zv, simd.div_f64s(zv, x), acc)
        };
        let zero = simd.splat_f64s(0.0);
        let mut acc = [zero; 4];
        let blocks = ds.len() / 4;
        for b in 0..blocks {
            for (l, a) in acc.iter_mut().enumerate() {
                *a = add_term(*a, ds[4 * b + l], zs[4 * b + l]);
            }
        }
        for i in 4 * blocks..ds.len() {
            acc[0] = add_term(acc[0], ds[i], zs[i]);
        }
        let sum = simd.add_f64s(simd.add_f64s(acc[0], acc[1]), simd.add_f64s(acc[2], acc[3]));
        let mut res = rho_recip + simd.reduce_sum_f64s(sum);
        for (dv, zv) in dt.iter().zip(zt) {
            res += zv * (zv / ((dv - shift) - mu));
        }
        res
    }
}

/// faer's root finder for one root of the secular equation in (left, right) (its
/// `bidiag_svd::secular_eq_root_finder`, f64): pick the nearer pole as the shift, bracket
/// with a few evaluations, a few geometric bisections, then a rational secant iteration,
/// and bisection to full precision if the secant leaves the bracket. Returns (shift, mu)
/// with the root = shift + mu.
fn secular_eq_root_finder(
    secular_eq: &dyn Fn(f64, f64) -> f64,
    left: f64,
    right: f64,
    last: bool,
) -> (f64, f64) {
    let epsilon = f64::EPSILON;
    let batch = |shifts: [f64; 4], mus: [f64; 4]| -> [f64; 4] {
        std::array::from_fn(|k| secular_eq(shifts[k], mus[k]))
    };
    let mid = left + (right - left) * 0.5;
    let [mut f_mid, f_max, f_mid_left_shift, f_mid_right_shift] = batch(
        [0.0, left, left, right],
        [
            mid,
            if last {
                right - left
            } else {
                (right - left) * 0.5
            },
            (right - left) * 0.5,
            (left - right) * 0.5,
        ],
    );
    let (mut shift, mu) = if last || f_mid > 0.0 {
        (left, (right - left) * 0.5)
    } else {
        (right, (left - right) * 0.5)
    };
    if f_mid_left_shift <= 0.0 && f_mid_right_shift > 0.0 {
        return (shift, mu);
    }
    if !last {
        if shift == left {
            if f_mid_left_shift < 0.0 {
                shift = right;
                f_mid = f_mid_right_shift;
            }
        } else if f_mid_right_shift > 0.0 {
            shift = left;
            f_mid = f_mid_left_shift;
        }
    }
    // The rational secant iteration: returns (use bisection, mu, left / right bracket
    // candidates).
    let secant = |mut mu_cur: f64, mut mu_prev: f64, mut f_cur: f64, mut f_prev: f64| {
        if f_prev.abs() < f_cur.abs() {
            core::mem::swap(&mut f_prev, &mut f_cur);
            core::mem::swap(&mut mu_prev, &mut mu_cur);
        }
        let mut left_candidate = None;
        let mut right_candidate = None;
        let mut use_bisection = false;
        let same_sign = (f_prev > 0.0) == (f_cur > 0.0);
        if !same_sign {
            let (min, max) = if mu_cur < mu_prev {
                (mu_cur, mu_prev)
            } else {
                (mu_prev, mu_cur)
            };
            left_candidate = Some(min);
            right_candidate = Some(max);
        }
        while f_cur != 0.0
            && (mu_cur - mu_prev).abs() > 8.0 * epsilon * mu_cur.abs().max(mu_prev.abs())
            && (f_cur - f_prev).abs() > epsilon
            && !use_bisection
        {
            let a = (f_cur - f_prev) * (mu_prev * mu_cur) / (mu_prev - mu_cur);
            let b = f_cur - a / mu_cur;
            let mu_zero = -a / b;
            let f_zero = secular_eq(shift, mu_zero);
            if f_zero < 0.0 {
                left_candidate = Some(mu_zero);
            } else {
                right_candidate = Some(mu_zero);
            }
            mu_prev = mu_cur;
            f_prev = f_cur;
            mu_cur = mu_zero;
            f_cur = f_zero;
            if shift == left && (mu_cur < 0.0 || mu_cur > right - left) {
                use_bisection = true;
            }
            if shift == right && (mu_cur > 0.0 || mu_cur < left - right) {
                use_bisection = true;
            }
            if f_cur.abs() > f_prev.abs() {
                let mut k = 1.0;
                for _ in 0..4 {
                    let mu_opposite = -a / (k * f_zero + b);
                    let f_opposite = secular_eq(shift, mu_opposite);
                    if f_zero < 0.0 && f_opposite >= 0.0 {
                        right_candidate = Some(mu_opposite);
                        break;
                    }
                    if f_zero > 0.0 && f_opposite <= 0.0 {
                        left_candidate = Some(mu_opposite);
                        break;
                    }
                    k *= 2.0;
                }
                use_bisection = true;
            }
        }
        (use_bisection, mu_cur, left_candidate, right_candidate)
    };
    let (mut left_shifted, mut f_left, mut right_shifted, mut f_right) = if shift == left {
        (
            0.0,
            f64::NEG_INFINITY,
            if last {
                right - left
            } else {
                (right - left) * 0.5
            },
            if last { f_max } else { f_mid },
        )
    } else {
        ((left - right) * 0.5, f_mid, 0.0, f64::INFINITY)
    };
    let mut iteration_count = 0;
    let mut f_prev = f_mid;
    let (half0, half1, half2, half3) = (0.5, 0.25, 0.0625, 0.00390625);
    let base = if shift == left {
        right_shifted
    } else {
        left_shifted
    };
    let mu_values = [base * half3, base * half2, base * half1, base * half0];
    let f_values = batch([shift; 4], mu_values);
    // The four points walk away from the shift's pole: those still on the pole's side of
    // the root (f < 0 when the pole is on the left, f > 0 when on the right) move the
    // bound nearer the pole; the first one past the root becomes the far bound.
    let on_pole_side = |f: f64| if shift == left { f < 0.0 } else { f > 0.0 };
    let mut near = None;
    let mut i = 0;
    for (idx, (mu, f)) in mu_values.iter().zip(&f_values).enumerate() {
        if on_pole_side(*f) {
            near = Some((*mu, *f));
            i = idx + 1;
        }
    }
    let far = (i < f_values.len()).then(|| (mu_values[i], f_values[i]));
    let (near_bound, far_bound) = if shift == left {
        (
            (&mut left_shifted, &mut f_left),
            (&mut right_shifted, &mut f_right),
        )
    } else {
        (
            (&mut right_shifted, &mut f_right),
            (&mut left_shifted, &mut f_left),
        )
    };
    if let Some((mu, f)) = near {
        (*near_bound.0, *near_bound.1) = (mu, f);
    }
    if let Some((mu, f)) = far {
        (*far_bound.0, *far_bound.1) = (mu, f);
    }
    while right_shifted - left_shifted > 2.0 * epsilon * left_shifted.abs().max(right_shifted.abs())
    {
        let mid_arithmetic = (left_shifted + right_shifted) * 0.5;
        let mut mid_geometric = left_shifted.abs().sqrt() * right_shifted.abs().sqrt();
        if left_shifted < 0.0 {
            mid_geometric = -mid_geometric;
        }
        let mid_shifted = if mid_geometric == 0.0 {
            mid_arithmetic
        } else {
            mid_geometric
        };
        let f_mid = secular_eq(shift, mid_shifted);
        if f_mid == 0.0 {
            return (shift, mid_shifted);
        } else if f_mid > 0.0 {
            right_shifted = mid_shifted;
            f_prev = f_right;
            f_right = f_mid;
        } else {
            left_shifted = mid_shifted;
            f_prev = f_left;
            f_left = f_mid;
        }
        if iteration_count == 4 {
            break;
        }
        iteration_count += 1;
    }
    let args = if left_shifted == 0.0 {
        (right_shifted * 2.0, right_shifted, f_prev, f_right)
    } else if right_shifted == 0.0 {
        (left_shifted * 2.0, left_shifted, f_prev, f_left)
    } else {
        (left_shifted, right_shifted, f_left, f_right)
    };
    let (use_bisection, mut mu_cur, left_candidate, right_candidate) =
        secant(args.0, args.1, args.2, args.3);
    if let (Some(l), Some(r)) = (left_candidate, right_candidate)
        && l < r
    {
        if l > left_shifted {
            left_shifted = l;
        }
        if r < right_shifted {
            right_shifted = r;
        }
    }
    if use_bisection {
        while right_shifted - left_shifted
            > 2.0 * epsilon * left_shifted.abs().max(right_shifted.abs())
        {
            let mid_shifted = (left_shifted + right_shifted) * 0.5;
            let f_mid = secular_eq(shift, mid_shifted);
            if f_mid == 0.0 {
                break;
            } else if f_mid > 0.0 {
                right_shifted = mid_shifted;
            } else {
                left_shifted = mid_shifted;
            }
        }
        mu_cur = (left_shifted + right_shifted) * 0.5;
    }
    (shift, mu_cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eigenvalues equal faer's to 1e-12 n (relative to the largest), T U = U diag(values)
    /// and U^T U = I to the same bound, on random tridiagonals across the leaf size and
    /// on the cases that exercise deflation: a zero coupling (the halves decouple), equal
    /// diagonal entries (Householder runs), Wilkinson's glued matrices (close pairs of
    /// eigenvalues) and a diagonal matrix. One and two threads.
    #[test]
    fn equals_faers_divide_and_conquer() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut cases: Vec<(String, Vec<f64>, Vec<f64>)> = Vec::new();
        for n in [1usize, 2, 5, 127, 128, 129, 300, 701] {
            let d = (0..n).map(|_| rng.random::<f64>() - 0.5).collect();
            let e = (0..n.saturating_sub(1))
                .map(|_| rng.random::<f64>() - 0.5)
                .collect();
            cases.push((format!("random {n}"), d, e));
        }
        let n = 400;
        let mut e: Vec<f64> = (0..n - 1).map(|_| rng.random::<f64>()).collect();
        e[n / 2 - 1] = 0.0;
        cases.push(("zero coupling".into(), vec![1.0; n], e));
        cases.push(("constant".into(), vec![2.0; n], vec![1.0; n - 1]));
        cases.push((
            "diagonal".into(),
            (0..n).map(|i| (i % 7) as f64).collect(),
            vec![0.0; n - 1],
        ));
        // Wilkinson's W21+ glued 12 times with couplings 1e-8.
        let w: Vec<f64> = (0..21i32).map(|i| (10 - i).abs() as f64).collect();
        let mut d = Vec::new();
        let mut e = Vec::new();
        for g in 0..12 {
            d.extend_from_slice(&w);
            e.extend(std::iter::repeat_n(1.0, 20));
            if g < 11 {
                e.push(1e-8);
            }
        }
        cases.push(("glued Wilkinson".into(), d, e));
        for (name, d, e) in cases {
            let n = d.len();
            let want = faer_solver(&d, &e, Mat::<f64>::zeros(n, n).as_mut()).unwrap();
            for threads in [1, 2] {
                let par = if threads == 1 {
                    Par::Seq
                } else {
                    Par::rayon(threads)
                };
                let mut values = d.clone();
                let mut u = Mat::<f64>::zeros(n, n);
                tridiagonal_evd(&mut values, &e, u.as_mut(), par).unwrap();
                let scale = want.iter().fold(1e-300f64, |m, v| m.max(v.abs()));
                let tol = 1e-12 * scale * n as f64;
                for (i, (x, y)) in values.iter().zip(&want).enumerate() {
                    assert!((x - y).abs() <= tol, "{name}: value {i}: {x} vs faer's {y}");
                }
                let t = Mat::<f64>::from_fn(n, n, |i, j| {
                    if i == j {
                        d[i]
                    } else if i == j + 1 {
                        e[j]
                    } else if j == i + 1 {
                        e[i]
                    } else {
                        0.0
                    }
                });
                let lam = Mat::<f64>::from_fn(n, n, |i, j| if i == j { values[i] } else { 0.0 });
                let residual = (&t * &u - &u * &lam).norm_max();
                let gram = (u.transpose() * &u - Mat::<f64>::identity(n, n)).norm_max();
                assert!(residual <= tol, "{name}: |T U - U L| = {residual:e}");
                assert!(gram <= 1e-12 * n as f64, "{name}: |U^T U - I| = {gram:e}");
            }
        }
    }

    /// The SIMD secular function equals the plain sum (to rounding), tails included.
    #[test]
    fn secular_function_matches_the_plain_sum() {
        for k in [1usize, 3, 8, 31, 64, 257] {
            let d: Vec<f64> = (0..k).map(|i| i as f64 * 0.37).collect();
            let z: Vec<f64> = (0..k).map(|i| ((i * 7) as f64).sin()).collect();
            let (shift, mu, rho_recip) = (0.37 * (k / 2) as f64, 0.11, 0.5);
            let got = pulp::Arch::new().dispatch(Secular {
                d: &d,
                z: &z,
                shift,
                mu,
                rho_recip,
            });
            let want: f64 = rho_recip
                + d.iter()
                    .zip(&z)
                    .map(|(dv, zv)| zv * (zv / ((dv - shift) - mu)))
                    .sum::<f64>();
            let mag: f64 = d
                .iter()
                .zip(&z)
                .map(|(dv, zv)| (zv * zv / ((dv - shift) - mu)).abs())
                .sum::<f64>();
            assert!(
                (got - want).abs() <= 1e-14 * mag.max(1.0),
                "k = {k}: {got} vs {want}"
            );
        }
    }
}
