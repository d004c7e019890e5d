//! The caption lab's numbers: the exported captioner (`prh-native caption --export`) on
//! the CPU backend, through the same core functions as the CLI — render the picture
//! ([`render`]), embed it with the image encoder, fit the map on the first N of the fit
//! pool's pairs ([`CaptionerBundle::map_row`]), condition and decode ([`write_captions`]).

use prh_core::backend::Cpu;
use prh_core::experiments::captioner::{CaptionerBundle, MapKind};
use prh_core::models::caption_decoder::{CaptionDecoder, condition};
use prh_core::scene::render_image::{render, to_rgb8};
use prh_core::scene::render_text::parse_caption;
use prh_core::scene::{SceneView, SceneWorld};
use prh_core::tasks::decoder::{DecoderTrainConfig, write_captions};
use prh_core::tasks::scene::{SceneModel, SceneTrainConfig, load_model};
use prh_core::text::tokenizer::TextTokenizer;
use prh_core::train::checkpoint::module_from_bytes;

/// A loaded captioner.
pub struct Captioner {
    /// Where it came from (the asset or file name).
    pub name: String,
    /// The bundle (pool embeddings, held-out pictures, the CLI's captions).
    pub bundle: CaptionerBundle,
    /// The world of the image run.
    pub world: SceneWorld,
    /// What the image encoder observes (`rendered` pictures or `symbolic` codes).
    pub observation: &'static str,
    image: SceneModel<Cpu>,
    decoder: CaptionDecoder<Cpu>,
    tokenizer: TextTokenizer,
}

/// Parses a bundle and builds its two networks.
pub fn load(name: &str, bytes: &[u8]) -> Result<Captioner, String> {
    let s = |e: prh_core::Error| e.to_string();
    let bundle = CaptionerBundle::from_bytes(name, bytes).map_err(s)?;
    let image_cfg =
        SceneTrainConfig::from_toml(&format!("{name} (image_config)"), &bundle.image_config, &[])
            .map_err(s)?;
    let world = image_cfg.build_world().map_err(s)?;
    let device = Default::default();
    let image =
        load_model::<Cpu>(&image_cfg, &world, None, &bundle.image_record, &device).map_err(s)?;
    let dcfg = DecoderTrainConfig::from_toml(
        &format!("{name} (decoder_config)"),
        &bundle.decoder_config,
        &[],
    )
    .map_err(s)?;
    let tokenizer =
        TextTokenizer::from_bytes(&format!("{name} (tokenizer)"), bundle.tokenizer.as_bytes())
            .map_err(s)?;
    let spec = dcfg.spec(tokenizer.vocab_size(), bundle.dim);
    let decoder = module_from_bytes::<Cpu, _>(
        spec.init::<Cpu>(&device).map_err(s)?,
        &bundle.decoder_record,
        &device,
    )
    .map_err(s)?;
    Ok(Captioner {
        name: name.to_string(),
        observation: image_cfg.views.observation.name(),
        bundle,
        world,
        image,
        decoder,
        tokenizer,
    })
}

/// One captioned picture.
#[derive(Clone, Debug, PartialEq)]
pub struct Captioned {
    /// The picture, 32 x 32 RGB bytes.
    pub rgb: Vec<u8>,
    /// The caption the decoder wrote.
    pub caption: String,
    /// What the caption says about each factor (value index), parsed.
    pub parsed: [Option<usize>; 4],
}

impl Captioner {
    /// Fit-pool size (the largest N).
    pub fn pool(&self) -> usize {
        self.bundle.pool_image.nrows()
    }

    /// Captions `view` through `kind` fitted on the first `n` pool pairs.
    pub fn caption(&self, view: &SceneView, kind: MapKind, n: usize) -> Result<Captioned, String> {
        let s = |e: prh_core::Error| e.to_string();
        let device = Default::default();
        let z = self
            .image
            .embed(std::slice::from_ref(view), &device)
            .map_err(s)?
            .remove(0);
        let row = self
            .bundle
            .map_row(&z, kind, n.clamp(1, self.pool()), 0)
            .map_err(s)?;
        let caption = write_captions(
            &self.decoder,
            &self.tokenizer,
            &condition(&[row]),
            self.bundle.beam,
            &device,
        )
        .map_err(s)?
        .remove(0);
        Ok(Captioned {
            rgb: to_rgb8(&render(view, true)),
            parsed: parse_caption(&caption),
            caption,
        })
    }
}
