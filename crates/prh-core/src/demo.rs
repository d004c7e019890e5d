//! The demo's experiment (paper §2–3 end to end on the scene world): what the theorem
//! predicts for good and bad views, and how close separately trained image and text
//! encoders come to it.
//!
//! ```text
//! cargo run --release -p prh-native -- demo
//! ```
//!
//! This module holds the browser-safe parts (no files, no clocks): the exact theory of
//! [`crate::scene::SceneWorld`] and the comparison of learned embeddings with it. The CLI
//! (`native/src/cmd/demo.rs`) drives training, progress and the report folder.

use crate::linalg::{Matrix, op_norm, svd, sym_eigen};
use crate::scene::{Modality, SceneWorld, ViewKind};
use crate::{Error, Result};
use serde::Serialize;

/// K = D^-1/2 Pi D^-1/2 with p = row sums of Pi (paper §2). The scene's Pi has p > 0
/// everywhere by construction (every prior weight is >= 0.6 / sum), so no state is dropped.
struct Kernel {
    k: Matrix,
    p: Vec<f64>,
}

impl Kernel {
    fn new(pi: &Matrix) -> Kernel {
        let n = pi.nrows();
        let p: Vec<f64> = (0..n).map(|i| (0..n).map(|j| pi[(i, j)]).sum()).collect();
        let r: Vec<f64> = p.iter().map(|x| 1.0 / x.sqrt()).collect();
        Kernel {
            k: Matrix::from_fn(n, n, |i, j| pi[(i, j)] * r[i] * r[j]),
            p,
        }
    }
}

/// One modality's kernel under one view kind: spectrum, gap and predicted representation.
#[derive(Debug, Clone, Serialize)]
pub struct ModalityTheory {
    /// Image or text.
    pub modality: Modality,
    /// Good or bad views.
    pub kind: ViewKind,
    /// Leading eigenvalues of K (descending, the trivial 1 first), `d + 6` of them.
    pub eigenvalues: Vec<f64>,
    /// lambda_d - lambda_{d+1} counting non-trivial eigenvalues only (paper §2: the optimum
    /// is unique up to rotation when this is positive).
    pub gap: f64,
    /// F = D^-1/2 U_d over augmented states (z, u), trivial direction skipped: `[n_m, d]`.
    #[serde(skip)]
    pub f: Matrix,
    /// U_d, the orthonormal top-d non-trivial eigenvectors: `[n_m, d]`.
    #[serde(skip)]
    pub u: Matrix,
}

/// The two-modality comparison on the joint space Z x U_image x U_text (paper §2, the
/// Davis–Kahan argument).
#[derive(Debug, Clone, Serialize)]
pub struct CrossTheory {
    /// ||sin Theta(U_image, U_text)||_op: 0 when the predicted subspaces coincide.
    pub sin_theta_op: f64,
    /// ||sin Theta||_F.
    pub sin_theta_fro: f64,
    /// Principal angles between the two predicted subspaces, in degrees, ascending.
    pub principal_angles_deg: Vec<f64>,
    /// ||(K_text - K_image) U_image||_op / (lambda_d(K_image) - lambda_{d+1}(K_text)),
    /// `None` when the denominator is not positive (the bound says nothing).
    pub davis_kahan_bound: Option<f64>,
    /// Yu–Wang–Samworth: 2 min(sqrt(d) ||E||_op, ||E||_F) / (lambda_d(K_image) - lambda_{d+1}(K_image)).
    pub yws_bound: Option<f64>,
}

/// Theory of one view kind: both modalities and their comparison.
#[derive(Debug, Clone, Serialize)]
pub struct KindTheory {
    /// Good or bad views.
    pub kind: ViewKind,
    /// Representation dimension d.
    pub d: usize,
    /// The image modality.
    pub image: ModalityTheory,
    /// The text modality.
    pub text: ModalityTheory,
    /// Image vs text.
    pub cross: CrossTheory,
}

/// K's spectrum, gap and F = D^-1/2 U_d for one modality and view kind (paper §2).
///
/// # Shapes
/// -> f, u `[|Z| |U_m|, d]`
pub fn modality_theory(
    world: &SceneWorld,
    m: Modality,
    kind: ViewKind,
    d: usize,
) -> Result<ModalityTheory> {
    let kernel = Kernel::new(&world.pi(m, kind));
    let n = kernel.p.len();
    if d + 2 > n {
        return Err(Error::invalid(format!(
            "representation dimension d = {d} needs at least d + 2 states, world has {n}"
        )));
    }
    let eig = sym_eigen(kernel.k.as_ref())?;
    // Column 0 is the trivial pair (lambda = 1, sqrt(p)): a constant after D^-1/2, which
    // centred embeddings cannot represent, so the top-d are columns 1..=d.
    let u = Matrix::from_fn(n, d, |i, j| eig.vectors[(i, j + 1)]);
    let f = Matrix::from_fn(n, d, |i, j| u[(i, j)] / kernel.p[i].sqrt());
    Ok(ModalityTheory {
        modality: m,
        kind,
        eigenvalues: eig.values.iter().take(d + 6).copied().collect(),
        gap: eig.values[d] - eig.values[d + 1],
        f,
        u,
    })
}

/// Lifts modality vectors over (z, u_m) to the joint space (z, u_i, u_t): the joint kernel
/// is K_m (x) sqrt(q_o) sqrt(q_o)^T, whose top eigenvectors are v (x) sqrt(q_o) with the
/// same eigenvalues (q_o = the other modality's nuisance prior).
fn lift(world: &SceneWorld, m: Modality, v: &Matrix) -> Matrix {
    let (ni, nt) = (
        world.q(Modality::Image).len(),
        world.q(Modality::Text).len(),
    );
    let (qi, qt) = (world.q(Modality::Image), world.q(Modality::Text));
    Matrix::from_fn(world.n_states() * ni * nt, v.ncols(), |r, c| {
        let (z, ui, ut) = (r / (ni * nt), (r / nt) % ni, r % nt);
        match m {
            Modality::Image => v[(z * ni + ui, c)] * qt[ut].sqrt(),
            Modality::Text => v[(z * nt + ut, c)] * qi[ui].sqrt(),
        }
    })
}

/// Principal angles between the column spaces of two orthonormal `[n, d]` matrices:
/// cos theta_j = sigma_j(U1^T U2); returns (||sin Theta||_op, ||sin Theta||_F, angles°).
pub fn principal_angles(u1: &Matrix, u2: &Matrix) -> Result<(f64, f64, Vec<f64>)> {
    let s = svd((u1.transpose() * u2).as_ref())?.s;
    let cos: Vec<f64> = s.iter().map(|c| c.clamp(0.0, 1.0)).collect();
    let sin2: Vec<f64> = cos.iter().map(|c| (1.0 - c * c).max(0.0)).collect();
    let op = sin2.iter().cloned().fold(0.0, f64::max).sqrt();
    let fro = sin2.iter().sum::<f64>().sqrt();
    let mut deg: Vec<f64> = cos.iter().map(|c| c.acos().to_degrees()).collect();
    deg.sort_by(|a, b| a.total_cmp(b));
    Ok((op, fro, deg))
}

/// The full theory of one view kind: both modalities' spectra and F, and the sin-theta
/// distance between their predicted subspaces next to the Davis–Kahan and Yu–Wang–Samworth
/// bounds, all on the joint space (paper §2).
pub fn kind_theory(world: &SceneWorld, kind: ViewKind, d: usize) -> Result<KindTheory> {
    let image = modality_theory(world, Modality::Image, kind, d)?;
    let text = modality_theory(world, Modality::Text, kind, d)?;
    let u1 = lift(world, Modality::Image, &image.u);
    let u2 = lift(world, Modality::Text, &text.u);
    let (sin_theta_op, sin_theta_fro, principal_angles_deg) = principal_angles(&u1, &u2)?;
    let k1 = Kernel::new(&world.pi_joint(Modality::Image, kind));
    let k2 = Kernel::new(&world.pi_joint(Modality::Text, kind));
    let e = &k2.k - &k1.k;
    // Joint spectra are the modality spectra plus zeros, and every eigenvalue here is
    // >= 0 (products of visibilities), so the order of the top d + 1 carries over.
    let (l1, l2) = (&image.eigenvalues, &text.eigenvalues);
    let dk_den = l1[d] - l2[d + 1];
    let yws_den = l1[d] - l1[d + 1];
    let e_u1 = op_norm((&e * &u1).as_ref())?;
    let e_op = sym_eigen(e.as_ref())?
        .values
        .iter()
        .fold(0.0f64, |a, v| a.max(v.abs()));
    let e_fro = e.norm_l2();
    Ok(KindTheory {
        kind,
        d,
        cross: CrossTheory {
            sin_theta_op,
            sin_theta_fro,
            principal_angles_deg,
            davis_kahan_bound: (dk_den > 0.0).then(|| e_u1 / dk_den),
            yws_bound: (yws_den > 0.0)
                .then(|| 2.0 * ((d as f64).sqrt() * e_op).min(e_fro) / yws_den),
        },
        image,
        text,
    })
}
