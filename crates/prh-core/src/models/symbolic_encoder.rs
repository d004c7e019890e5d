//! The scene world observed as symbols (`views.observation = "symbolic"`): a view is
//! coded by what it shows, one one-hot block per factor over its values plus "hidden",
//! and one over the modality's nuisance values plus "hidden". This is an injective
//! rendering g_m like the pictures and captions (paper §2), but one from which the
//! predicted representation is *linear*: E[F(s) | view] is a linear function of the code
//! (each single-factor direction reads its factor's block, 0 when hidden). An encoder of
//! symbols can therefore represent the theorem's optimum from the first step, so a run on
//! symbols tests the objective and the optimiser with the encoder's feature learning taken
//! out; the pixel and caption runs add it back.
//!
//! The encoder is the image encoder's head, `f(x) = W2 LN(gelu(W1 x))`.

use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::prelude::*;
use serde::{Deserialize, Serialize};

use crate::backend::gelu::gelu;
use crate::models::image_encoder::embed_in_chunks;
use crate::scene::{Modality, SceneView, SceneWorld};
use crate::{Error, Result};

/// Sizes of the symbol encoder (the `[symbolic]` section of a scene run's config).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SymbolicEncoderConfig {
    /// Width of the hidden layer.
    pub hidden: usize,
    /// Embedding width (0: the world's d).
    pub out_dim: usize,
}

impl Default for SymbolicEncoderConfig {
    fn default() -> Self {
        Self {
            hidden: 64,
            out_dim: 0,
        }
    }
}

/// Length of the code of modality `m`'s views: `sum_i (|values_i| + 1) + |U_m| + 1`.
pub fn code_len(world: &SceneWorld, m: Modality) -> usize {
    world
        .config
        .cardinality
        .iter()
        .map(|c| c + 1)
        .sum::<usize>()
        + world.q(m).len()
        + 1
}

/// The code of one view of modality `m` (module docs): per factor, a one-hot over its
/// values with a last slot for "hidden"; then the nuisance likewise.
///
/// # Shapes
/// -> `[code_len(world, m)]`
pub fn code(world: &SceneWorld, m: Modality, view: &SceneView) -> Vec<f32> {
    let mut x = Vec::with_capacity(code_len(world, m));
    let mut block = |n: usize, value: Option<usize>| {
        let hot = value.unwrap_or(n);
        x.extend((0..=n).map(|j| if j == hot { 1.0 } else { 0.0 }));
    };
    for (f, &c) in world.config.cardinality.iter().enumerate() {
        block(c, view.visible[f].then_some(view.state[f]));
    }
    block(
        world.q(m).len(),
        view.nuisance_visible.then_some(view.nuisance),
    );
    x
}

/// The symbol encoder: `[n, code_len]` codes -> `[n, out_dim]` embeddings.
#[derive(Module, Debug)]
pub struct SymbolicEncoder<B: Backend> {
    fc1: Linear<B>,
    norm: LayerNorm<B>,
    fc2: Linear<B>,
}

impl SymbolicEncoderConfig {
    /// Initialises the encoder for codes of length `input` (burn's default init).
    pub fn init<B: Backend>(&self, input: usize, device: &B::Device) -> Result<SymbolicEncoder<B>> {
        if self.hidden == 0 || self.out_dim == 0 || input == 0 {
            return Err(Error::invalid(format!(
                "symbolic encoder widths must be positive, got {self:?} on codes of {input} \
                 (resolve out_dim = 0 first)"
            )));
        }
        Ok(SymbolicEncoder {
            fc1: LinearConfig::new(input, self.hidden).init(device),
            norm: LayerNormConfig::new(self.hidden).init(device),
            fc2: LinearConfig::new(self.hidden, self.out_dim).init(device),
        })
    }
}

impl<B: Backend> SymbolicEncoder<B> {
    /// f(x) = W2 LN(gelu(W1 x)).
    ///
    /// # Shapes
    /// `codes [n, code_len]` -> `[n, out_dim]`
    pub fn forward(&self, codes: Tensor<B, 2>) -> Tensor<B, 2> {
        self.fc2
            .forward(self.norm.forward(gelu(self.fc1.forward(codes))))
    }
}

/// The codes of `views` as one tensor.
///
/// # Shapes
/// `views [n]` -> `[n, code_len]`
pub fn codes_tensor<B: Backend>(
    world: &SceneWorld,
    m: Modality,
    views: &[SceneView],
    device: &B::Device,
) -> Tensor<B, 2> {
    let len = code_len(world, m);
    let flat: Vec<f32> = views.iter().flat_map(|v| code(world, m, v)).collect();
    Tensor::<B, 1>::from_floats(flat.as_slice(), device).reshape([views.len(), len])
}

/// Embeds views of modality `m` in chunks of 256 (inference).
///
/// # Shapes
/// `views [n]` -> `[n, out_dim]`, row-major f64
pub fn embed_symbols<B: Backend>(
    model: &SymbolicEncoder<B>,
    world: &SceneWorld,
    m: Modality,
    views: &[SceneView],
    device: &B::Device,
) -> Result<Vec<Vec<f64>>> {
    embed_in_chunks(views, |chunk| {
        Ok(model.forward(codes_tensor::<B>(world, m, chunk, device)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::SceneConfig;

    /// The code is injective on views and has one hot entry per block.
    #[test]
    fn codes_are_one_hot_per_block_and_injective() {
        let w = SceneWorld::new(SceneConfig::quick(0)).unwrap();
        let m = Modality::Text;
        let mut rng = crate::rng::generator(1, crate::rng::Stream::Views, 0);
        let mut seen = std::collections::HashMap::new();
        for _ in 0..300 {
            for v in w.sample_views(m, crate::theory::view_kind::ViewKind::Good, 3, &mut rng) {
                let x = code(&w, m, &v);
                assert_eq!(x.len(), code_len(&w, m));
                assert_eq!(x.iter().sum::<f32>(), 5.0, "one hot entry per block");
                let shown = (
                    v.visible.map(|b| b as usize),
                    (0..4)
                        .map(|f| if v.visible[f] { v.state[f] } else { 99 })
                        .collect::<Vec<_>>(),
                    v.nuisance_visible.then_some(v.nuisance),
                );
                let key: Vec<u8> = x.iter().map(|&b| b as u8).collect();
                if let Some(prev) = seen.insert(key, shown.clone()) {
                    assert_eq!(prev, shown, "two different views share a code");
                }
            }
        }
    }
}
