//! The image renderer g_image of the scene world (paper §2: x = g_m(z), injective): one
//! object on a tinted background, 32x32 RGB, drawn by hand with 4x4 supersampling (a
//! rasteriser for four shapes needs no crate).
//!
//! Per rendering (seeded by the view's `style_seed`, so two corruptions of one rendering
//! share it): the background tint is the modelled nuisance u; position jitter (+-1.5 px),
//! lighting (x0.8..1.2) and pixel noise (sd 0.03) are unmodelled nuisance. A hidden factor
//! is drawn with a marker no real value uses, which keeps views injective:
//! shape -> a ring, colour -> white, size -> radius 4.5 (between small and medium),
//! position -> the image centre (a crop centred on the object), background -> black.

use crate::scene::SceneView;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

/// Image side in pixels.
pub const IMAGE_SIZE: usize = 32;
/// Values per image, channel-major: 3 x 32 x 32.
pub const IMAGE_LEN: usize = 3 * IMAGE_SIZE * IMAGE_SIZE;

/// Object colours: red, green, blue, yellow, magenta, cyan.
const COLOURS: [[f32; 3]; 6] = [
    [0.9, 0.15, 0.1],
    [0.1, 0.75, 0.2],
    [0.15, 0.3, 0.95],
    [0.95, 0.85, 0.1],
    [0.85, 0.2, 0.8],
    [0.1, 0.8, 0.85],
];
/// Hidden colour (grey-white, outside the palette).
const HIDDEN_COLOUR: [f32; 3] = [0.92, 0.92, 0.92];
/// Background tints (the image nuisance): slate, moss, umber, plum.
const BACKGROUNDS: [[f32; 3]; 4] = [
    [0.2, 0.22, 0.32],
    [0.22, 0.3, 0.2],
    [0.36, 0.26, 0.16],
    [0.34, 0.2, 0.34],
];
/// Hidden background.
const HIDDEN_BACKGROUND: [f32; 3] = [0.0, 0.0, 0.0];
/// Object radius per size (small, medium, large), pixels.
const RADII: [f32; 3] = [3.5, 5.5, 7.5];
/// Hidden size.
const HIDDEN_RADIUS: f32 = 4.5;
/// Object centre per position (top-left, top-right, bottom-left, bottom-right), pixels.
const CENTRES: [[f32; 2]; 4] = [[8.0, 8.0], [24.0, 8.0], [8.0, 24.0], [24.0, 24.0]];
/// Hidden position: the centre of a crop around the object.
const HIDDEN_CENTRE: [f32; 2] = [16.0, 16.0];

/// Whether the point (dx, dy) from the object centre lies inside shape `shape` of radius r
/// (`None` = the hidden-shape ring). y grows downwards.
fn inside(shape: Option<usize>, dx: f32, dy: f32, r: f32) -> bool {
    let (ax, ay) = (dx.abs(), dy.abs());
    match shape {
        Some(0) => dx * dx + dy * dy <= r * r,
        Some(1) => ax <= 0.85 * r && ay <= 0.85 * r,
        // Triangle, apex up: the half-width grows linearly from 0 at y = -r to r at y = r.
        Some(2) => dy >= -r && dy <= r && ax <= 0.5 * (dy + r),
        Some(_) => (ax <= r && ay <= 0.32 * r) || (ay <= r && ax <= 0.32 * r),
        None => {
            let d2 = dx * dx + dy * dy;
            d2 <= r * r && d2 >= (0.55 * r) * (0.55 * r)
        }
    }
}

/// Renders a view as a `[3, 32, 32]` channel-major image with values in [0, 1].
///
/// `noisy = false` switches the unmodelled nuisance off (no jitter, lighting or noise):
/// the injectivity test uses it, since noise alone would make any two renderings differ.
///
/// # Shapes
/// -> `[3 * 32 * 32]`
pub fn render(view: &SceneView, noisy: bool) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(view.style_seed);
    let [shape, colour, size, position] = view.state;
    let shape = view.visible[0].then_some(shape);
    let fg = if view.visible[1] {
        COLOURS[colour % COLOURS.len()]
    } else {
        HIDDEN_COLOUR
    };
    let r = if view.visible[2] {
        RADII[size % RADII.len()]
    } else {
        HIDDEN_RADIUS
    };
    let centre = if view.visible[3] {
        CENTRES[position % CENTRES.len()]
    } else {
        HIDDEN_CENTRE
    };
    let bg = if view.nuisance_visible {
        BACKGROUNDS[view.nuisance % BACKGROUNDS.len()]
    } else {
        HIDDEN_BACKGROUND
    };
    let (jx, jy, light) = if noisy {
        (
            rng.random_range(-1.5f32..1.5),
            rng.random_range(-1.5f32..1.5),
            rng.random_range(0.8f32..1.2),
        )
    } else {
        (0.0, 0.0, 1.0)
    };
    let (cx, cy) = (centre[0] + jx, centre[1] + jy);
    let mut img = vec![0.0f32; IMAGE_LEN];
    const SS: usize = 4; // supersamples per axis: coverage gives anti-aliased edges
    let plane = IMAGE_SIZE * IMAGE_SIZE;
    // Every shape lies within radius r of its centre: pixels further out have no coverage
    // and skip the supersampling.
    let near = |p: usize, c: f32| (p as f32 + 0.5 - c).abs() <= r + 1.0;
    for y in 0..IMAGE_SIZE {
        for x in 0..IMAGE_SIZE {
            let mut hits = 0usize;
            if near(x, cx) && near(y, cy) {
                for sy in 0..SS {
                    for sx in 0..SS {
                        let px = x as f32 + (sx as f32 + 0.5) / SS as f32;
                        let py = y as f32 + (sy as f32 + 0.5) / SS as f32;
                        hits += usize::from(inside(shape, px - cx, py - cy, r));
                    }
                }
            }
            let a = hits as f32 / (SS * SS) as f32;
            for c in 0..3 {
                let mut v = (a * fg[c] + (1.0 - a) * bg[c]) * light;
                if noisy {
                    let z: f32 = rng.sample(StandardNormal);
                    v += 0.03 * z;
                }
                img[c * plane + y * IMAGE_SIZE + x] = v.clamp(0.0, 1.0);
            }
        }
    }
    img
}

/// Renders a view as 8-bit RGB, row-major `[32, 32, 3]` (for PNG/SVG export and the web).
///
/// # Shapes
/// -> `[32 * 32 * 3]`
pub fn to_rgb8(img: &[f32]) -> Vec<u8> {
    let plane = IMAGE_SIZE * IMAGE_SIZE;
    (0..plane)
        .flat_map(|p| (0..3).map(move |c| (img[c * plane + p] * 255.0).round() as u8))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{SceneConfig, SceneWorld};
    use std::collections::HashMap;

    /// Injective on states: every (z, u) of the demo world gives a distinct noise-free
    /// image, and hidden markers never coincide with a real value's image.
    #[test]
    fn renderer_is_injective_on_states_and_views() {
        let w = SceneWorld::new(SceneConfig::demo(0)).unwrap();
        let mut seen: HashMap<Vec<u8>, String> = HashMap::new();
        for i in 0..w.n_states() {
            for u in 0..w.config.nuisance[0] {
                for mask in 0..32u32 {
                    let visible = [0, 1, 2, 3].map(|b| mask & (1 << b) != 0);
                    let v = SceneView {
                        state: w.state(i),
                        visible,
                        nuisance: u,
                        nuisance_visible: mask & 16 != 0,
                        style_seed: 0,
                    };
                    // Views that hide a factor are identical whatever that factor's value:
                    // key them by what is visible.
                    let key = format!(
                        "{:?}",
                        (0..4)
                            .map(|f| visible[f].then_some(v.state[f]))
                            .collect::<Vec<_>>()
                    ) + &format!("{:?}", v.nuisance_visible.then_some(u));
                    let bytes = to_rgb8(&render(&v, false));
                    if let Some(prev) = seen.insert(bytes, key.clone()) {
                        assert_eq!(prev, key, "two different views render to the same image");
                    }
                }
            }
        }
        assert_eq!(seen.len(), 5 * 5 * 4 * 5 * 5);
    }

    #[test]
    fn rendering_is_deterministic_per_seed_and_varies_across_seeds() {
        let v = SceneView::full([1, 2, 0, 3], 1, 42);
        let a = render(&v, true);
        assert_eq!(a, render(&v, true));
        assert_eq!(a.len(), IMAGE_LEN);
        assert!(a.iter().all(|x| (0.0..=1.0).contains(x)));
        let b = render(
            &SceneView {
                style_seed: 43,
                ..v
            },
            true,
        );
        assert!(a.iter().zip(&b).map(|(x, y)| (x - y).abs()).sum::<f32>() > 1.0);
    }

    /// Closed form: a noise-free small circle's ink mass (its coverage summed over pixels)
    /// equals its area pi r^2 to the supersampling's resolution.
    #[test]
    fn circle_coverage_matches_its_area() {
        let v = SceneView::full([0, 0, 0, 0], 0, 0);
        let img = render(&v, false);
        let (fg, bg) = (COLOURS[0][0], BACKGROUNDS[0][0]);
        let ink: f32 = img[..IMAGE_SIZE * IMAGE_SIZE]
            .iter()
            .map(|x| (x - bg) / (fg - bg))
            .sum();
        let area = std::f32::consts::PI * RADII[0] * RADII[0];
        assert!((ink - area).abs() < 0.02 * area, "ink {ink} vs area {area}");
    }
}
