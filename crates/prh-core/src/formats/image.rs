//! Images as Hugging Face's image processors hand them to a ViT / DINOv2: PNG or JPEG bytes
//! decoded, converted to RGB, resized, center-cropped, rescaled and normalised exactly as
//! transformers' PIL backend (`ViTImageProcessor`, `BitImageProcessor`, ... with the
//! settings of their `preprocessor_config.json`) does, so a published checkpoint sees the
//! inputs it was trained and evaluated on.
//!
//! - The resize is a port of Pillow 13's `ImagingResample` (`src/libImaging/Resample.c`):
//!   the same filter supports and coefficients, the same 8-bit fixed-point arithmetic
//!   (22 fractional bits, round half up, clip to 0..=255) and the same order of the
//!   horizontal and vertical passes, so its `u8` output equals Pillow's bit for bit.
//!   NEAREST follows Pillow's `ImagingScaleAffine` (its separate path for that filter).
//!   LANCZOS and HAMMING coefficients call `sin`/`cos`, whose last bit can differ between
//!   C libraries (glibc natively, Rust's libm port in wasm32); a coefficient that lands
//!   on a rounding boundary of its 22-bit fixed-point value could then move by one unit.
//!   BILINEAR, BICUBIC, BOX and NEAREST use only exact arithmetic.
//! - RGB conversion follows transformers' `convert_to_rgb` (version 5): images with an
//!   alpha channel or a PNG transparency key are composited onto opaque white with
//!   Pillow's `alpha_composite` integer arithmetic; everything else goes through Pillow's
//!   `convert("RGB")`, quirks included (a 16-bit grayscale PNG is clipped to 255, not
//!   scaled; 16-bit colour keeps the high byte).
//! - Center crop, rescale and normalise follow `transformers.image_transforms`: the crop
//!   offset is `(H - h) // 2`, an image smaller than the crop is zero-padded first (pad
//!   `ceil((h - H) / 2)` before), rescale is `f32(f64(v) * rescale_factor)` and normalise
//!   `(x - f32(mean)) / f32(std)` in f32, as numpy computes them.
//!
//! PNG pixels are therefore identical to transformers' `pixel_values`. JPEG pixels are
//! not quite: Pillow decodes with libjpeg-turbo and this module with the `image` crate
//! (zune-jpeg), whose 4:2:0 chroma upsampling rounds twice where libjpeg-turbo rounds
//! once: most samples agree or differ by 1-2 levels of 255, a few at sharp colour edges
//! by up to 7 (mean about 0.4). CMYK JPEGs are refused. Neither side applies EXIF
//! orientation (Pillow's `Image.open` does not) or colour profiles.
//!
//! Pure and byte-based (no file system, no threads): it runs in the browser as well.

use crate::{Error, Result};
use serde_json::{Map, Value};

/// A resampling filter, as Pillow numbers them (`PIL.Image.Resampling`, the `resample`
/// field of `preprocessor_config.json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resample {
    /// 0: the pixel whose centre is nearest.
    Nearest,
    /// 2: triangle filter, support 1 (scaled by the reduction factor when shrinking).
    Bilinear,
    /// 3: Keys cubic with a = -0.5, support 2.
    Bicubic,
    /// 1: Lanczos-3 (sinc windowed by sinc), support 3.
    Lanczos,
    /// 4: box filter, support 0.5.
    Box,
    /// 5: sinc windowed by Hamming, support 1.
    Hamming,
}

impl Resample {
    /// The filter for Pillow's id (0 NEAREST, 1 LANCZOS, 2 BILINEAR, 3 BICUBIC, 4 BOX,
    /// 5 HAMMING); `None` for any other value.
    pub fn from_pil(id: i64) -> Option<Self> {
        Some(match id {
            0 => Resample::Nearest,
            1 => Resample::Lanczos,
            2 => Resample::Bilinear,
            3 => Resample::Bicubic,
            4 => Resample::Box,
            5 => Resample::Hamming,
            _ => return None,
        })
    }

    /// Pillow's id of this filter.
    pub fn pil_id(self) -> u8 {
        match self {
            Resample::Nearest => 0,
            Resample::Lanczos => 1,
            Resample::Bilinear => 2,
            Resample::Bicubic => 3,
            Resample::Box => 4,
            Resample::Hamming => 5,
        }
    }

    /// The filter kernel and its support (half-width, in source pixels at scale 1), as in
    /// Resample.c.
    fn kernel(self) -> (fn(f64) -> f64, f64) {
        match self {
            Resample::Nearest | Resample::Box => (box_filter, 0.5),
            Resample::Bilinear => (bilinear_filter, 1.0),
            Resample::Hamming => (hamming_filter, 1.0),
            Resample::Bicubic => (bicubic_filter, 2.0),
            Resample::Lanczos => (lanczos_filter, 3.0),
        }
    }
}

/// The `size` of a processor: what the resize produces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Size {
    /// `{"height", "width"}` (or an int / `[h, w]` list where the processor defaults to a
    /// square): exactly this size, aspect ratio not kept.
    HeightWidth { height: u32, width: u32 },
    /// `{"shortest_edge": s}`: the shorter side becomes `s`, the longer
    /// `int(s * long / short)` (truncated), as `get_resize_output_image_size(...,
    /// default_to_square=False)`.
    ShortestEdge(u32),
    /// `{"shortest_edge": s, "longest_edge": l}`: `get_size_with_aspect_ratio` — the
    /// shorter side becomes `s` unless that makes the longer side exceed `l`, in which
    /// case the shorter side becomes `round(l * short / long)` (Python's round, half to
    /// even) and the longer one is truncated from the unrounded value.
    ShortestLongestEdge {
        shortest_edge: u32,
        longest_edge: u32,
    },
    /// `{"max_height", "max_width"}`: scaled by `min(max_h / H, max_w / W)` (up or down),
    /// both sides truncated.
    MaxHeightWidth { max_height: u32, max_width: u32 },
}

impl Size {
    /// The (height, width) an `h x w` image is resized to, computed with the float
    /// operations, in the order, that transformers uses (so truncations agree).
    pub fn output_size(&self, h: u32, w: u32) -> (u64, u64) {
        let (hf, wf) = (h as f64, w as f64);
        match *self {
            Size::HeightWidth { height, width } => (height as u64, width as u64),
            Size::ShortestEdge(s) => {
                let (short, long) = if w <= h { (w, h) } else { (h, w) };
                // int(s * long / short): the product is exact, the quotient rounded once.
                let new_long = ((s as u64 * long as u64) as f64 / short as f64) as u64;
                if w <= h {
                    (new_long, s as u64)
                } else {
                    (s as u64, new_long)
                }
            }
            Size::ShortestLongestEdge {
                shortest_edge,
                longest_edge,
            } => {
                let mut size = shortest_edge as u64;
                let max_size = longest_edge as f64;
                let (min_o, max_o) = (hf.min(wf), hf.max(wf));
                let mut raw = None;
                if max_o / min_o * size as f64 > max_size {
                    let r = max_size * min_o / max_o;
                    raw = Some(r);
                    size = r.round_ties_even() as u64;
                }
                let (h64, w64) = (h as u64, w as u64);
                if (h64 <= w64 && h64 == size) || (w64 <= h64 && w64 == size) {
                    (h64, w64)
                } else if w < h {
                    let oh = match raw {
                        Some(r) => (r * hf / wf) as u64,
                        None => ((size * h64) as f64 / wf) as u64,
                    };
                    (oh, size)
                } else {
                    let ow = match raw {
                        Some(r) => (r * wf / hf) as u64,
                        None => ((size * w64) as f64 / hf) as u64,
                    };
                    (size, ow)
                }
            }
            Size::MaxHeightWidth {
                max_height,
                max_width,
            } => {
                let scale = (max_height as f64 / hf).min(max_width as f64 / wf);
                ((hf * scale) as u64, (wf * scale) as u64)
            }
        }
    }
}

/// The largest image (pixels) the resize and crop may produce: bounds the memory a
/// config or a long thin image can ask for (a `shortest_edge` resize of a 1 x 100000
/// image would otherwise allocate gigabytes).
pub const MAX_PIXELS: u64 = 1 << 26;

/// An image processor read from `preprocessor_config.json`: every field transformers'
/// `ViTImageProcessor` / `BitImageProcessor` read, with the class defaults filled in for
/// those the file leaves out (or sets to `null`, which transformers treats the same).
#[derive(Clone, Debug, PartialEq)]
pub struct ImageProcessor {
    /// The processor class, normalised: `ViTImageProcessor`, `BitImageProcessor`, ...
    /// (`...FeatureExtractor`, `...Fast` and `...Pil` names map to it).
    pub processor_type: String,
    /// Convert to RGB first (alpha composited onto white). When false, only images that
    /// are already RGB are accepted, since transformers fails on the others too.
    pub do_convert_rgb: bool,
    pub do_resize: bool,
    /// `None` only when the file has no size and the class has no default.
    pub size: Option<Size>,
    pub resample: Resample,
    pub do_center_crop: bool,
    /// (height, width) of the center crop.
    pub crop_size: Option<(u32, u32)>,
    pub do_rescale: bool,
    pub rescale_factor: f64,
    pub do_normalize: bool,
    /// Per channel (R, G, B); a single number in the file applies to all three.
    pub image_mean: [f64; 3],
    pub image_std: [f64; 3],
}

/// transformers' `IMAGENET_STANDARD_MEAN` / `_STD`.
const STANDARD: [f64; 3] = [0.5, 0.5, 0.5];
/// `OPENAI_CLIP_MEAN` / `OPENAI_CLIP_STD`.
const CLIP_MEAN: [f64; 3] = [0.48145466, 0.4578275, 0.40821073];
const CLIP_STD: [f64; 3] = [0.26862954, 0.26130258, 0.27577711];

/// A processor class's defaults (the class attributes of its `...ImageProcessorPil` in
/// transformers 5; `None` = the attribute is unset, which transformers reads as false).
struct Defaults {
    do_convert_rgb: bool,
    do_resize: bool,
    size: Option<Size>,
    default_to_square: bool,
    resample: Resample,
    do_center_crop: bool,
    crop_size: Option<(u32, u32)>,
    do_rescale: bool,
    do_normalize: bool,
    mean: [f64; 3],
    std: [f64; 3],
}

/// Processor classes whose preprocessing is exactly resize -> center crop -> rescale ->
/// normalise with the fields below (no class-specific code in transformers), and their
/// defaults. Others (ConvNext's `crop_pct`, LeViT's shortest-edge scaling, ...) compute
/// differently and are refused.
fn defaults_for(kind: &str) -> Option<Defaults> {
    let hw = |s: u32| {
        Some(Size::HeightWidth {
            height: s,
            width: s,
        })
    };
    Some(match kind {
        "ViTImageProcessor" => Defaults {
            do_convert_rgb: false,
            do_resize: true,
            size: hw(224),
            default_to_square: true,
            resample: Resample::Bilinear,
            do_center_crop: false,
            crop_size: None,
            do_rescale: true,
            do_normalize: true,
            mean: STANDARD,
            std: STANDARD,
        },
        // DINOv2 checkpoints name this class.
        "BitImageProcessor" | "CLIPImageProcessor" => Defaults {
            do_convert_rgb: true,
            do_resize: true,
            size: Some(Size::ShortestEdge(224)),
            default_to_square: false,
            resample: Resample::Bicubic,
            do_center_crop: true,
            crop_size: Some((224, 224)),
            do_rescale: true,
            do_normalize: true,
            mean: CLIP_MEAN,
            std: CLIP_STD,
        },
        "DeiTImageProcessor" => Defaults {
            do_convert_rgb: false,
            do_resize: true,
            size: hw(256),
            default_to_square: true,
            resample: Resample::Bicubic,
            do_center_crop: true,
            crop_size: Some((224, 224)),
            do_rescale: true,
            do_normalize: true,
            mean: STANDARD,
            std: STANDARD,
        },
        _ => return None,
    })
}

/// The class a `preprocessor_config.json` names, normalised as transformers'
/// `AutoImageProcessor` does: `feature_extractor_type` `XFeatureExtractor` stands for
/// `XImageProcessor`; the `Fast` (torchvision) and `Pil` variants share the base name.
fn processor_kind(source: &str, obj: &Map<String, Value>) -> Result<(String, Defaults)> {
    let (field, name) = match (
        obj.get("image_processor_type"),
        obj.get("feature_extractor_type"),
    ) {
        (Some(Value::String(s)), _) => ("image_processor_type", s.clone()),
        (_, Some(Value::String(s))) => (
            "feature_extractor_type",
            s.replace("FeatureExtractor", "ImageProcessor"),
        ),
        _ => {
            return Err(Error::format(
                source,
                "image_processor_type",
                "missing: expected the processor class, e.g. \"ViTImageProcessor\" or \
                 \"BitImageProcessor\"",
            ));
        }
    };
    let base = name
        .strip_suffix("Fast")
        .or_else(|| name.strip_suffix("Pil"))
        .unwrap_or(&name)
        .to_string();
    match defaults_for(&base) {
        Some(d) => Ok((base, d)),
        None => Err(Error::format(
            source,
            field,
            format!(
                "unsupported image processor {name:?}: expected ViTImageProcessor, \
                 BitImageProcessor (DINOv2), CLIPImageProcessor or DeiTImageProcessor \
                 (others resize or crop with different rules)"
            ),
        )),
    }
}

/// The JSON value of `key`, `None` when absent or `null` (transformers then uses the
/// class default).
fn field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

fn bool_field(source: &str, obj: &Map<String, Value>, key: &str, default: bool) -> Result<bool> {
    match field(obj, key) {
        None => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(Error::format(
            source,
            key,
            format!("{v} is not a boolean: expected true or false"),
        )),
    }
}

fn positive(source: &str, key: &str, v: &Value) -> Result<u32> {
    match v.as_u64() {
        Some(n) if (1..=1 << 16).contains(&n) => Ok(n as u32),
        _ => Err(Error::format(
            source,
            key,
            format!("{v} is not a pixel count: expected an integer from 1 to 65536"),
        )),
    }
}

fn number(source: &str, key: &str, v: &Value) -> Result<f64> {
    match v.as_f64() {
        Some(x) if x.is_finite() => Ok(x),
        _ => Err(Error::format(
            source,
            key,
            format!("{v} is not a number: expected a finite number"),
        )),
    }
}

/// `image_mean` / `image_std`: three numbers (R, G, B), or one for all channels.
fn channels(source: &str, key: &str, v: &Value) -> Result<[f64; 3]> {
    let out = match v {
        Value::Array(a) if a.len() == 3 => [
            number(source, key, &a[0])?,
            number(source, key, &a[1])?,
            number(source, key, &a[2])?,
        ],
        Value::Array(a) => {
            return Err(Error::format(
                source,
                key,
                format!(
                    "{} values: expected 3 (one per RGB channel) or a single number",
                    a.len()
                ),
            ));
        }
        v => [number(source, key, v)?; 3],
    };
    if key == "image_std" && out.contains(&0.0) {
        return Err(Error::format(
            source,
            key,
            "a standard deviation of 0: normalising would divide by zero",
        ));
    }
    Ok(out)
}

/// `size` / `crop_size` as transformers' `get_size_dict` reads them: a dict with one of
/// the allowed key sets, an int (a square, or the shortest edge when the class does not
/// default to squares), or a `[height, width]` list.
fn size_field(source: &str, key: &str, v: &Value, default_to_square: bool) -> Result<Size> {
    let bad = |what: String| Error::format(source, key, what);
    match v {
        Value::Number(_) => {
            let s = positive(source, key, v)?;
            Ok(if default_to_square {
                Size::HeightWidth {
                    height: s,
                    width: s,
                }
            } else {
                Size::ShortestEdge(s)
            })
        }
        Value::Array(a) if a.len() == 2 => Ok(Size::HeightWidth {
            height: positive(source, key, &a[0])?,
            width: positive(source, key, &a[1])?,
        }),
        Value::Object(m) => {
            let mut keys: Vec<&str> = m.keys().map(String::as_str).collect();
            keys.sort_unstable();
            let get = |k: &str| positive(source, &format!("{key}.{k}"), &m[k]);
            match keys.as_slice() {
                ["height", "width"] => Ok(Size::HeightWidth {
                    height: get("height")?,
                    width: get("width")?,
                }),
                ["shortest_edge"] => Ok(Size::ShortestEdge(get("shortest_edge")?)),
                ["longest_edge", "shortest_edge"] => Ok(Size::ShortestLongestEdge {
                    shortest_edge: get("shortest_edge")?,
                    longest_edge: get("longest_edge")?,
                }),
                ["max_height", "max_width"] => Ok(Size::MaxHeightWidth {
                    max_height: get("max_height")?,
                    max_width: get("max_width")?,
                }),
                _ => Err(bad(format!(
                    "keys {keys:?}: expected {{height, width}}, {{shortest_edge}}, \
                     {{shortest_edge, longest_edge}} or {{max_height, max_width}} (a \
                     longest_edge alone or min/max_pixels is not a plain resize)"
                ))),
            }
        }
        v => Err(bad(format!(
            "{v}: expected an integer, a [height, width] list or a dict such as \
             {{\"height\": 224, \"width\": 224}} or {{\"shortest_edge\": 256}}"
        ))),
    }
}

impl ImageProcessor {
    /// Parses `preprocessor_config.json` (`image_processor_type` ViTImageProcessor,
    /// BitImageProcessor — DINOv2's —, CLIPImageProcessor or DeiTImageProcessor, or the
    /// older `feature_extractor_type` ViTFeatureExtractor, ...); fields the file omits or
    /// sets to `null` take the class defaults, as in transformers. Other processor
    /// classes are refused: they compute their sizes differently. `source` names the file
    /// in errors, which name the field and what was expected.
    pub fn from_json(source: &str, json: &str) -> Result<Self> {
        let value: Value = serde_json::from_str(json).map_err(|e| {
            Error::format(
                source,
                "json",
                format!("not valid JSON ({e}): expected an object"),
            )
        })?;
        let Value::Object(obj) = value else {
            return Err(Error::format(
                source,
                "json",
                "not a JSON object: expected {\"image_processor_type\": ..., ...}",
            ));
        };
        let (kind, d) = processor_kind(source, &obj)?;

        // Options that change the pipeline beyond these fields are refused, not ignored.
        if bool_field(source, &obj, "do_pad", false)? {
            return Err(Error::format(
                source,
                "do_pad",
                "true: padding after normalisation is not supported (expected false or absent)",
            ));
        }
        if bool_field(source, &obj, "use_square_size", false)? {
            return Err(Error::format(
                source,
                "use_square_size",
                "true: not supported (expected false or absent; set size to \
                 {\"height\": s, \"width\": s} instead)",
            ));
        }

        let default_to_square = bool_field(source, &obj, "default_to_square", d.default_to_square)?;
        let size = match field(&obj, "size") {
            Some(v) => Some(size_field(source, "size", v, default_to_square)?),
            None => d.size,
        };
        let crop_size = match field(&obj, "crop_size") {
            // get_size_dict(crop_size) always defaults to square.
            Some(v) => match size_field(source, "crop_size", v, true)? {
                Size::HeightWidth { height, width } => Some((height, width)),
                _ => {
                    return Err(Error::format(
                        source,
                        "crop_size",
                        "expected {\"height\": h, \"width\": w}, an integer or [h, w]",
                    ));
                }
            },
            None => d.crop_size,
        };
        let resample = match field(&obj, "resample") {
            None => d.resample,
            Some(v) => v.as_i64().and_then(Resample::from_pil).ok_or_else(|| {
                Error::format(
                    source,
                    "resample",
                    format!(
                        "unknown resample value {v}: expected a Pillow filter id, 0 \
                         (NEAREST), 1 (LANCZOS), 2 (BILINEAR), 3 (BICUBIC), 4 (BOX) or 5 \
                         (HAMMING)"
                    ),
                )
            })?,
        };
        let rescale_factor = match field(&obj, "rescale_factor") {
            None => 1.0 / 255.0,
            Some(v) => number(source, "rescale_factor", v)?,
        };
        let image_mean = match field(&obj, "image_mean") {
            None => d.mean,
            Some(v) => channels(source, "image_mean", v)?,
        };
        let image_std = match field(&obj, "image_std") {
            None => d.std,
            Some(v) => channels(source, "image_std", v)?,
        };
        let p = ImageProcessor {
            processor_type: kind,
            do_convert_rgb: bool_field(source, &obj, "do_convert_rgb", d.do_convert_rgb)?,
            do_resize: bool_field(source, &obj, "do_resize", d.do_resize)?,
            size,
            resample,
            do_center_crop: bool_field(source, &obj, "do_center_crop", d.do_center_crop)?,
            crop_size,
            do_rescale: bool_field(source, &obj, "do_rescale", d.do_rescale)?,
            rescale_factor,
            do_normalize: bool_field(source, &obj, "do_normalize", d.do_normalize)?,
            image_mean,
            image_std,
        };
        // transformers' validate_preprocess_arguments.
        if p.do_resize && p.size.is_none() {
            return Err(Error::format(
                source,
                "size",
                "missing: do_resize needs a size",
            ));
        }
        if p.do_center_crop && p.crop_size.is_none() {
            return Err(Error::format(
                source,
                "crop_size",
                "missing: do_center_crop needs a crop_size",
            ));
        }
        Ok(p)
    }

    /// Decodes PNG or JPEG `bytes` and returns the model input as transformers'
    /// `pixel_values[0]`: f32 CHW `[3, h, w]` row-major, plus (h, w). Steps: RGB
    /// conversion, resize ([`resize_like_pil`] to [`Size::output_size`]), center crop
    /// (zero padding where the image is smaller), then per channel c
    /// `x = f32(f64(v) * rescale_factor)` and `(x - f32(mean_c)) / f32(std_c)`.
    /// Errors name `source`, the field (`header`, `pixels`, `size`, `do_convert_rgb`)
    /// and what was expected.
    ///
    /// # Shapes
    /// `bytes` (an H x W image) -> (`[3 * h * w]` CHW, h, w)
    pub fn preprocess(&self, source: &str, bytes: &[u8]) -> Result<(Vec<f32>, usize, usize)> {
        let (mut rgb, mut w, mut h) = decode_rgb(source, bytes, self.do_convert_rgb)?;
        if self.do_resize
            && let Some(size) = &self.size
        {
            let (nh, nw) = size.output_size(h, w);
            if nh == 0 || nw == 0 || nh.saturating_mul(nw) > MAX_PIXELS {
                return Err(Error::format(
                    source,
                    "size",
                    format!(
                        "resizing this {h}x{w} image by {size:?} gives {nh}x{nw}: \
                         expected 1 to {MAX_PIXELS} pixels"
                    ),
                ));
            }
            let (nh, nw) = (nh as u32, nw as u32);
            rgb = resize_like_pil(&rgb, w, h, nw, nh, self.resample);
            (w, h) = (nw, nh);
        }
        if self.do_center_crop
            && let Some((ch, cw)) = self.crop_size
        {
            if ch as u64 * cw as u64 > MAX_PIXELS {
                return Err(Error::format(
                    source,
                    "crop_size",
                    format!("{ch}x{cw}: expected at most {MAX_PIXELS} pixels"),
                ));
            }
            rgb = center_crop(&rgb, w, h, cw, ch);
            (w, h) = (cw, ch);
        }
        Ok((self.to_chw(&rgb), h as usize, w as usize))
    }

    /// HWC u8 -> CHW f32 with transformers' rescale (f64 product, one cast to f32) and
    /// normalise (in f32, against f32 mean and std).
    fn to_chw(&self, rgb: &[u8]) -> Vec<f32> {
        let n = rgb.len() / 3;
        let mut out = vec![0f32; rgb.len()];
        for c in 0..3 {
            // np.array(mean, dtype=float32): each value rounded to f32 once.
            let (mean, std) = (self.image_mean[c] as f32, self.image_std[c] as f32);
            let plane = &mut out[c * n..(c + 1) * n];
            for (o, px) in plane.iter_mut().zip(rgb.chunks_exact(3)) {
                let v = px[c];
                let mut x = if self.do_rescale {
                    (v as f64 * self.rescale_factor) as f32
                } else {
                    v as f32
                };
                if self.do_normalize {
                    x = (x - mean) / std;
                }
                *o = x;
            }
        }
        out
    }
}

/// transformers' numpy `center_crop` on an HWC u8 image: offsets `(H - h) // 2` and
/// `(W - w) // 2` (floor), and where the image is smaller than the crop it is first
/// placed in zeros with `ceil((h - H) / 2)` rows (columns) before it.
///
/// # Shapes
/// `[h * w * 3]` -> `[crop_h * crop_w * 3]`
fn center_crop(rgb: &[u8], w: u32, h: u32, crop_w: u32, crop_h: u32) -> Vec<u8> {
    let (w, h, cw, ch) = (w as i64, h as i64, crop_w as i64, crop_h as i64);
    let mut top = (h - ch).div_euclid(2);
    let mut left = (w - cw).div_euclid(2);
    // Zero padding (a no-op when the crop fits): new size max(crop, image), image at
    // (top_pad, left_pad), crop window shifted by the same amount.
    let (nh, nw) = (ch.max(h), cw.max(w));
    let (top_pad, left_pad) = ((nh - h + 1) / 2, (nw - w + 1) / 2);
    top += top_pad;
    left += left_pad;
    let (y0, y1) = (top.max(0), (top + ch).min(nh));
    let (x0, x1) = (left.max(0), (left + cw).min(nw));
    let mut out = vec![0u8; ((y1 - y0) * (x1 - x0) * 3) as usize];
    let row_len = ((x1 - x0) * 3) as usize;
    for y in y0..y1 {
        let out_row = &mut out[(y - y0) as usize * row_len..][..row_len];
        let sy = y - top_pad;
        if !(0..h).contains(&sy) {
            continue;
        }
        for x in x0..x1 {
            let sx = x - left_pad;
            if (0..w).contains(&sx) {
                let s = ((sy * w + sx) * 3) as usize;
                let o = ((x - x0) * 3) as usize;
                out_row[o..o + 3].copy_from_slice(&rgb[s..s + 3]);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Decoding and RGB conversion
// ---------------------------------------------------------------------------------------

/// What the file says about itself before the pixels, where it changes how Pillow (and
/// so transformers) converts it.
enum Container {
    Png {
        bit_depth: u8,
        color_type: u8,
        /// The raw tRNS chunk, if any.
        trns: Option<Vec<u8>>,
    },
    Jpeg {
        components: u8,
    },
}

fn be16(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

/// Reads the PNG IHDR and tRNS chunks (the `image` crate decodes the pixels and checks
/// the rest).
fn png_header(source: &str, bytes: &[u8]) -> Result<Container> {
    let bad = |m: &str| Error::format(source, "header", format!("{m}: expected a valid PNG"));
    let mut pos = 8;
    let mut ihdr = None;
    let mut trns = None;
    while pos + 8 <= bytes.len() {
        let len = u32::from_be_bytes([bytes[pos], bytes[pos + 1], bytes[pos + 2], bytes[pos + 3]])
            as usize;
        let kind = &bytes[pos + 4..pos + 8];
        let Some(data) = bytes.get(pos + 8..(pos + 8).saturating_add(len)) else {
            break; // truncated: left to the decoder to report
        };
        if ihdr.is_none() {
            if kind != b"IHDR" || len != 13 {
                return Err(bad("the first chunk is not a 13-byte IHDR"));
            }
            ihdr = Some((data[8], data[9]));
        } else if kind == b"tRNS" {
            trns = Some(data.to_vec());
        } else if kind == b"IDAT" {
            break;
        }
        pos = pos.saturating_add(12).saturating_add(len);
    }
    let (bit_depth, color_type) = ihdr.ok_or_else(|| bad("no IHDR chunk"))?;
    Ok(Container::Png {
        bit_depth,
        color_type,
        trns,
    })
}

/// Reads the component count of a JPEG's frame header (SOFn).
fn jpeg_header(source: &str, bytes: &[u8]) -> Result<Container> {
    let mut pos = 2;
    while pos + 4 <= bytes.len() {
        if bytes[pos] != 0xFF {
            pos += 1;
            continue;
        }
        let marker = bytes[pos + 1];
        match marker {
            0xFF => pos += 1,
            0x01 | 0xD0..=0xD8 => pos += 2,
            0xD9 | 0xDA => break,
            _ => {
                let len = be16(bytes, pos + 2) as usize;
                let is_sof = matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC);
                if is_sof {
                    if let Some(&n) = bytes.get(pos + 9) {
                        return Ok(Container::Jpeg { components: n });
                    }
                    break;
                }
                pos += 2 + len;
            }
        }
    }
    Err(Error::format(
        source,
        "header",
        "no frame header (SOF) before the scan: expected a valid JPEG",
    ))
}

/// Pillow's `alpha_composite` of one channel value with alpha `a` over opaque white
/// (AlphaComposite.c: 7 extra bits of precision, divisions by 255 rounded with the
/// `(x + (x >> 8)) >> 8` trick), which transformers' `convert_to_rgb` applies to every
/// image with an alpha channel or a transparency key.
fn over_white(c: u8, a: u8) -> u8 {
    if a == 0 {
        return 255;
    }
    let (c, a) = (c as u32, a as u32);
    let blend = 255 * (255 - a);
    let outa255 = a * 255 + blend;
    let coef1 = a * 255 * 255 * (1 << 7) / outa255;
    let coef2 = 255 * (1 << 7) - coef1;
    let tmp = c * coef1 + 255 * coef2 + (0x80 << 7);
    ((((tmp >> 8) + tmp) >> 8) >> 7) as u8
}

/// Decodes PNG or JPEG bytes to RGB u8 HWC as transformers 5 sees them: with
/// `convert_rgb`, through `convert_to_rgb` (alpha onto white, else Pillow's
/// `convert("RGB")`); without it, only images Pillow opens as RGB are accepted (for any
/// other mode transformers passes 1, 2 or 4 channels on and fails at the normalisation).
///
/// Pillow's modes, which the conversion follows: gray PNG of 1 bit -> "1", 2/4/8 bits ->
/// "L" (scaled to 0..=255), 16 bits -> "I;16" (converted to RGB by clipping at 255); RGB
/// and RGBA PNG of 16 bits keep the high byte; 16-bit gray+alpha opens as RGBA (high
/// bytes); palette PNG -> "P" (looked up, tRNS alphas applied). A tRNS key on a gray or
/// RGB PNG marks as transparent the pixels whose *converted 8-bit* value equals the key's
/// low byte (Pillow's `convert_transparent`), which for 2/4/16-bit gray and 16-bit RGB is
/// not the pixels the PNG specification means; transparent pixels become white.
///
/// # Shapes
/// bytes -> (`[h * w * 3]`, w, h)
fn decode_rgb(source: &str, bytes: &[u8], convert_rgb: bool) -> Result<(Vec<u8>, u32, u32)> {
    let (container, format) = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        (png_header(source, bytes)?, image::ImageFormat::Png)
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        (jpeg_header(source, bytes)?, image::ImageFormat::Jpeg)
    } else {
        return Err(Error::format(
            source,
            "header",
            "not a PNG or JPEG file (unknown signature): expected PNG or JPEG bytes",
        ));
    };
    if let Container::Jpeg { components } = container
        && components != 1
        && components != 3
    {
        return Err(Error::format(
            source,
            "header",
            format!(
                "a JPEG with {components} colour components (CMYK/YCCK): Pillow's CMYK \
                 conversion cannot be reproduced; expected a grayscale or colour JPEG"
            ),
        ));
    }
    let img = image::load_from_memory_with_format(bytes, format).map_err(|e| {
        Error::format(
            source,
            "pixels",
            format!("cannot decode ({e}): expected a valid {format:?} image"),
        )
    })?;
    let (w, h) = (img.width(), img.height());
    let n = w as usize * h as usize;
    let not_rgb = |mode: &str| {
        Error::format(
            source,
            "do_convert_rgb",
            format!(
                "false, but the image is {mode}, not RGB: transformers would pass it on \
                 unconverted and fail; expected an RGB image or do_convert_rgb true"
            ),
        )
    };

    // Pillow's 8-bit view of each sample: 16-bit colour keeps the high byte, 16-bit gray
    // ("I;16") clips at 255.
    let hi = |v: u16| (v >> 8) as u8;
    let clip16 = |v: u16| v.min(255) as u8;
    use image::DynamicImage as D;

    // The gray or colour key of a tRNS chunk, reduced as convert_transparent does.
    let key = |len: usize| -> Result<Option<Vec<u8>>> {
        match &container {
            Container::Png {
                trns: Some(t),
                color_type,
                bit_depth,
            } if *color_type == 0 || *color_type == 2 => {
                if t.len() < len {
                    return Err(Error::format(
                        source,
                        "header",
                        "truncated tRNS chunk: expected 2 bytes (gray) or 6 (RGB)",
                    ));
                }
                Ok(Some(
                    (0..len / 2)
                        .map(|i| {
                            let raw = be16(t, 2 * i);
                            // Mode "1" stores the key as 0 or 255.
                            if *bit_depth == 1 {
                                if raw != 0 { 255 } else { 0 }
                            } else {
                                (raw & 0xFF) as u8
                            }
                        })
                        .collect(),
                ))
            }
            _ => Ok(None),
        }
    };
    let (color_type, png) = match &container {
        Container::Png { color_type, .. } => (*color_type, true),
        Container::Jpeg { .. } => (if img.color().has_color() { 2 } else { 0 }, false),
    };

    let mut rgb = Vec::with_capacity(n * 3);
    match color_type {
        // Gray: "1", "L" or "I;16".
        0 => {
            if !convert_rgb {
                return Err(not_rgb("grayscale"));
            }
            let gray: Vec<u8> = match &img {
                D::ImageLuma8(b) => b.as_raw().clone(),
                D::ImageLumaA8(b) => b.as_raw().chunks_exact(2).map(|p| p[0]).collect(),
                D::ImageLuma16(b) => b.as_raw().iter().map(|&v| clip16(v)).collect(),
                D::ImageLumaA16(b) => b.as_raw().chunks_exact(2).map(|p| clip16(p[0])).collect(),
                _ => return Err(unexpected(source, &img)),
            };
            let key = if png { key(2)? } else { None };
            for g in gray {
                let v = match &key {
                    Some(k) if g == k[0] => 255,
                    _ => g,
                };
                rgb.extend_from_slice(&[v, v, v]);
            }
        }
        // RGB (a tRNS key makes the decoder add an alpha channel, which Pillow does not).
        2 => {
            match &img {
                D::ImageRgb8(b) => rgb.extend_from_slice(b.as_raw()),
                D::ImageRgba8(b) => {
                    rgb.extend(b.as_raw().chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]))
                }
                D::ImageRgb16(b) => rgb.extend(b.as_raw().iter().map(|&v| hi(v))),
                D::ImageRgba16(b) => rgb.extend(
                    b.as_raw()
                        .chunks_exact(4)
                        .flat_map(|p| [hi(p[0]), hi(p[1]), hi(p[2])]),
                ),
                _ => return Err(unexpected(source, &img)),
            }
            if convert_rgb
                && png
                && let Some(k) = key(6)?
            {
                for px in rgb.chunks_exact_mut(3) {
                    if px == k.as_slice() {
                        px.copy_from_slice(&[255, 255, 255]);
                    }
                }
            }
        }
        // Palette ("P"), gray+alpha ("LA"; 16-bit: "RGBA"), RGBA.
        3 | 4 | 6 => {
            if !convert_rgb {
                return Err(not_rgb(match color_type {
                    3 => "a palette image",
                    4 => "grayscale with alpha",
                    _ => "RGBA",
                }));
            }
            let mut push = |r: u8, g: u8, b: u8, a: u8| {
                rgb.extend_from_slice(&[over_white(r, a), over_white(g, a), over_white(b, a)])
            };
            match &img {
                D::ImageRgb8(b) => rgb.extend_from_slice(b.as_raw()),
                D::ImageRgba8(b) => b
                    .as_raw()
                    .chunks_exact(4)
                    .for_each(|p| push(p[0], p[1], p[2], p[3])),
                D::ImageLumaA8(b) => b
                    .as_raw()
                    .chunks_exact(2)
                    .for_each(|p| push(p[0], p[0], p[0], p[1])),
                D::ImageLumaA16(b) => b
                    .as_raw()
                    .chunks_exact(2)
                    .for_each(|p| push(hi(p[0]), hi(p[0]), hi(p[0]), hi(p[1]))),
                D::ImageRgba16(b) => b
                    .as_raw()
                    .chunks_exact(4)
                    .for_each(|p| push(hi(p[0]), hi(p[1]), hi(p[2]), hi(p[3]))),
                _ => return Err(unexpected(source, &img)),
            }
        }
        _ => {
            return Err(Error::format(
                source,
                "header",
                format!("PNG colour type {color_type}: expected 0, 2, 3, 4 or 6"),
            ));
        }
    }
    if rgb.len() != n * 3 {
        return Err(unexpected(source, &img));
    }
    Ok((rgb, w, h))
}

fn unexpected(source: &str, img: &image::DynamicImage) -> Error {
    Error::format(
        source,
        "pixels",
        format!(
            "decoded as {:?}, which does not match the header: expected 8- or 16-bit \
             gray, RGB or their alpha variants",
            img.color()
        ),
    )
}

// ---------------------------------------------------------------------------------------
// Pillow's resampler (src/libImaging/Resample.c, 8 bits per channel)
// ---------------------------------------------------------------------------------------

fn box_filter(x: f64) -> f64 {
    if x > -0.5 && x <= 0.5 { 1.0 } else { 0.0 }
}

fn bilinear_filter(x: f64) -> f64 {
    let x = x.abs();
    if x < 1.0 { 1.0 - x } else { 0.0 }
}

fn hamming_filter(x: f64) -> f64 {
    let x = x.abs();
    if x == 0.0 {
        1.0
    } else if x >= 1.0 {
        0.0
    } else {
        let x = x * std::f64::consts::PI;
        // The C source writes the window constants as floats (0.54f, 0.46f).
        x.sin() / x * (0.54f32 as f64 + 0.46f32 as f64 * x.cos())
    }
}

fn bicubic_filter(x: f64) -> f64 {
    const A: f64 = -0.5;
    let x = x.abs();
    if x < 1.0 {
        ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0
    } else if x < 2.0 {
        (((x - 5.0) * x + 8.0) * x - 4.0) * A
    } else {
        0.0
    }
}

fn sinc_filter(x: f64) -> f64 {
    if x == 0.0 {
        1.0
    } else {
        let x = x * std::f64::consts::PI;
        x.sin() / x
    }
}

fn lanczos_filter(x: f64) -> f64 {
    if (-3.0..3.0).contains(&x) {
        sinc_filter(x) * sinc_filter(x / 3.0)
    } else {
        0.0
    }
}

/// Fractional bits of the fixed-point coefficients: 32 - 8 (pixel) - 2 (headroom for
/// filters whose partial sums leave 0..=1).
const PRECISION_BITS: u32 = 32 - 8 - 2;

/// One pass's coefficients: for output index i, taps `k[i * ksize..][..len_i]` over the
/// input `start_i..start_i + len_i`.
struct Coeffs {
    ksize: usize,
    bounds: Vec<(usize, usize)>,
    k: Vec<i32>,
}

/// `precompute_coeffs` + `normalize_coeffs_8bpc`: output pixel i is centred on input
/// coordinate `in0 + (i + 0.5) * scale`, with `scale = (in1 - in0) / out` and the filter
/// widened by `max(scale, 1)` when shrinking (antialiasing); the taps within
/// `round(center -/+ support)` are normalised to sum 1, then scaled by 2^22 and rounded
/// half away from zero.
fn precompute_coeffs(
    in_size: usize,
    in0: f32,
    in1: f32,
    out_size: usize,
    filter: Resample,
) -> Coeffs {
    let (f, base_support) = filter.kernel();
    // The box is float in Pillow: (double)(in1 - in0).
    let scale = (in1 - in0) as f64 / out_size as f64;
    let filterscale = scale.max(1.0);
    let support = base_support * filterscale;
    let ksize = support.ceil() as usize * 2 + 1;
    let inv_filterscale = 1.0 / filterscale;
    let mut bounds = Vec::with_capacity(out_size);
    let mut k = vec![0i32; out_size * ksize];
    let mut w = vec![0f64; ksize];
    for xx in 0..out_size {
        let center = in0 as f64 + (xx as f64 + 0.5) * scale;
        // C's (int) truncates toward zero, as `as` does.
        // (The upper clamp of xmin only matters past 2^24 pixels, where the f32 box can
        // round above the image; Pillow has no such image in practice.)
        let xmin = ((center - support + 0.5) as i64).clamp(0, in_size as i64);
        let xmax = ((center + support + 0.5) as i64).min(in_size as i64);
        let n = (xmax - xmin).clamp(0, ksize as i64) as usize;
        let mut ww = 0.0;
        for (x, wx) in w[..n].iter_mut().enumerate() {
            *wx = f(((x as i64 + xmin) as f64 - center + 0.5) * inv_filterscale);
            ww += *wx;
        }
        let row = &mut k[xx * ksize..(xx + 1) * ksize];
        for (kx, &wx) in row.iter_mut().zip(&w[..n]) {
            let wx = if ww != 0.0 { wx / ww } else { wx };
            let scaled = wx * (1 << PRECISION_BITS) as f64;
            *kx = if wx < 0.0 {
                (-0.5 + scaled) as i32
            } else {
                (0.5 + scaled) as i32
            };
        }
        bounds.push((xmin as usize, n));
    }
    Coeffs { ksize, bounds, k }
}

/// `clip8`: drop the fraction of a fixed-point sum (arithmetic shift) and clamp to a byte.
fn clip8(ss: i32) -> u8 {
    (ss >> PRECISION_BITS).clamp(0, 255) as u8
}

/// The rounding offset every sum starts from (one half in fixed point).
const HALF: i32 = 1 << (PRECISION_BITS - 1);

/// The horizontal pass over `rows` rows of `src` (`w` pixels wide) starting at row
/// `offset`.
fn resample_horizontal(src: &[u8], w: usize, offset: usize, rows: usize, c: &Coeffs) -> Vec<u8> {
    let out_w = c.bounds.len();
    let mut out = vec![0u8; rows * out_w * 3];
    for yy in 0..rows {
        let line = &src[(yy + offset) * w * 3..][..w * 3];
        let out_line = &mut out[yy * out_w * 3..][..out_w * 3];
        for (xx, &(xmin, n)) in c.bounds.iter().enumerate() {
            let k = &c.k[xx * c.ksize..][..n];
            let (mut s0, mut s1, mut s2) = (HALF, HALF, HALF);
            for (x, &kx) in k.iter().enumerate() {
                let p = &line[(x + xmin) * 3..][..3];
                s0 += p[0] as i32 * kx;
                s1 += p[1] as i32 * kx;
                s2 += p[2] as i32 * kx;
            }
            out_line[xx * 3..xx * 3 + 3].copy_from_slice(&[clip8(s0), clip8(s1), clip8(s2)]);
        }
    }
    out
}

/// The vertical pass over `src` (`w` pixels wide); row bounds relative to `src`.
fn resample_vertical(src: &[u8], w: usize, c: &Coeffs) -> Vec<u8> {
    let out_h = c.bounds.len();
    let mut out = vec![0u8; out_h * w * 3];
    for (yy, &(ymin, n)) in c.bounds.iter().enumerate() {
        let k = &c.k[yy * c.ksize..][..n];
        let out_line = &mut out[yy * w * 3..][..w * 3];
        for xx in 0..w {
            let (mut s0, mut s1, mut s2) = (HALF, HALF, HALF);
            for (y, &ky) in k.iter().enumerate() {
                let p = &src[((y + ymin) * w + xx) * 3..][..3];
                s0 += p[0] as i32 * ky;
                s1 += p[1] as i32 * ky;
                s2 += p[2] as i32 * ky;
            }
            out_line[xx * 3..xx * 3 + 3].copy_from_slice(&[clip8(s0), clip8(s1), clip8(s2)]);
        }
    }
    out
}

/// Pillow's NEAREST resize (`ImagingScaleAffine`): source column `trunc(x0)`, with `x0`
/// starting at `scale / 2` and advanced by repeated addition of `scale = W / new_w`
/// (f64), likewise for rows.
fn resize_nearest(rgb: &[u8], w: usize, h: usize, nw: usize, nh: usize) -> Vec<u8> {
    let coord = |v: f64| if v < 0.0 { -1 } else { v as i64 };
    let a0 = (w as f32) as f64 / nw as f64;
    let a4 = (h as f32) as f64 / nh as f64;
    let mut xintab = vec![0usize; nw];
    let (mut xmin, mut xmax) = (nw, 0);
    let mut xo = 0.0 + a0 * 0.5;
    for (x, xi) in xintab.iter_mut().enumerate() {
        let xin = coord(xo);
        if (0..w as i64).contains(&xin) {
            xmax = x + 1;
            xmin = xmin.min(x);
            *xi = xin as usize;
        }
        xo += a0;
    }
    let mut out = vec![0u8; nw * nh * 3];
    let mut yo = 0.0 + a4 * 0.5;
    for y in 0..nh {
        let yi = coord(yo);
        if (0..h as i64).contains(&yi) {
            let line = &rgb[yi as usize * w * 3..][..w * 3];
            let out_line = &mut out[y * nw * 3..][..nw * 3];
            for x in xmin..xmax {
                let s = xintab[x] * 3;
                out_line[x * 3..x * 3 + 3].copy_from_slice(&line[s..s + 3]);
            }
        }
        yo += a4;
    }
    out
}

/// The resize alone: RGB u8 HWC `w x h` -> RGB u8 HWC `new_w x new_h`, equal to Pillow's
/// `Image.resize((new_w, new_h), resample)` (no `box`, `reducing_gap=None`), which is
/// what transformers calls, as of Pillow 13. Same size returns a copy (as Pillow does);
/// otherwise two separable passes, each rounding to u8, a pass skipped when its
/// dimension is unchanged: horizontal first (over only the rows the vertical pass reads)
/// unless the height shrinks by more than twice as many pixels as the width, then
/// vertical first (Pillow 13's order; Pillow 12 always started horizontally, which gives
/// results a level or two apart in that case).
///
/// Returns an empty vector when `rgb.len() != w * h * 3` or a size is 0 (Pillow raises).
///
/// # Shapes
/// `[h * w * 3]` -> `[new_h * new_w * 3]`
pub fn resize_like_pil(
    rgb: &[u8],
    w: u32,
    h: u32,
    new_w: u32,
    new_h: u32,
    resample: Resample,
) -> Vec<u8> {
    let (w, h, nw, nh) = (w as usize, h as usize, new_w as usize, new_h as usize);
    if w == 0
        || h == 0
        || nw == 0
        || nh == 0
        || w.checked_mul(h).and_then(|n| n.checked_mul(3)) != Some(rgb.len())
    {
        return Vec::new();
    }
    if (nw, nh) == (w, h) {
        return rgb.to_vec();
    }
    if resample == Resample::Nearest {
        return resize_nearest(rgb, w, h, nw, nh);
    }
    let need_horizontal = nw != w;
    let need_vertical = nh != h;
    // Pillow 13 runs the vertical pass first when the height shrinks by more than twice
    // as many pixels as the width (Pillow 12 and older always start horizontally; the
    // order changes the intermediate rounding, so results differ by a level or two).
    let (dh, dw) = (h as i64 - nh as i64, w as i64 - nw as i64);
    let horizontal_first = !(dh > 0 && dh > dw * 2);
    let mut vert = precompute_coeffs(h, 0.0, h as f32, nh, resample);
    let horiz = precompute_coeffs(w, 0.0, w as f32, nw, resample);
    if horizontal_first {
        let mut out = None;
        if need_horizontal {
            // Only the rows the vertical pass reads.
            let ybox_first = vert.bounds[0].0;
            let (last_min, last_n) = vert.bounds[nh - 1];
            let ybox_last = last_min + last_n;
            for b in &mut vert.bounds {
                b.0 -= ybox_first;
            }
            out = Some(resample_horizontal(
                rgb,
                w,
                ybox_first,
                ybox_last - ybox_first,
                &horiz,
            ));
        }
        let (cur, cur_w) = match &out {
            Some(t) => (t.as_slice(), nw),
            None => (rgb, w),
        };
        if need_vertical {
            out = Some(resample_vertical(cur, cur_w, &vert));
        }
        out.unwrap_or_else(|| rgb.to_vec())
    } else {
        // need_vertical holds here (the height shrinks).
        let tall = resample_vertical(rgb, w, &vert);
        if need_horizontal {
            resample_horizontal(&tall, w, 0, nh, &horiz)
        } else {
            tall
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn over_white_is_identity_when_opaque_and_white_when_clear() {
        for c in 0..=255u8 {
            assert_eq!(over_white(c, 255), c);
            assert_eq!(over_white(c, 0), 255);
        }
    }

    #[test]
    fn center_crop_pads_like_transformers() {
        // 1x2 image into a 3x3 crop: rows padded 1 before (ceil(2/2)), 1 after; columns
        // 1 before (ceil(1/2)), 0 after.
        let img = [10, 10, 10, 20, 20, 20];
        let out = center_crop(&img, 2, 1, 3, 3);
        let px: Vec<u8> = out.chunks(3).map(|p| p[0]).collect();
        assert_eq!(px, vec![0, 0, 0, 0, 10, 20, 0, 0, 0]);
    }

    #[test]
    fn shortest_edge_truncates() {
        // 640x480 (w x h) -> short side 256, long int(256 * 640 / 480) = 341.
        assert_eq!(Size::ShortestEdge(256).output_size(480, 640), (256, 341));
        assert_eq!(Size::ShortestEdge(256).output_size(640, 480), (341, 256));
        assert_eq!(Size::ShortestEdge(48).output_size(48, 48), (48, 48));
    }

    #[test]
    fn bad_resize_inputs_give_empty() {
        assert!(resize_like_pil(&[0; 5], 2, 1, 3, 3, Resample::Bilinear).is_empty());
        assert!(resize_like_pil(&[0; 6], 2, 1, 0, 3, Resample::Bilinear).is_empty());
    }
}
