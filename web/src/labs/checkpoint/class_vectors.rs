//! Nearest ImageNet classes of a text (paper §5: one representation across modalities).
//!
//! The experiments (`prh-native experiment views-vision`) fit a rotation between a text
//! encoder and a vision model and export, per objective, `<objective>.imagenet.safetensors`:
//! - `class_vectors` f32 `[C, d_text]`: each class's vision-side vector (EfficientNet-Lite0)
//!   mapped into the text embedding space through the fitted rotation;
//! - `text_mean` f32 `[d_text]`: the centring applied to text embeddings before the
//!   rotation was fitted;
//! - metadata `classes`: JSON array of the C class names; `fit` (optional): JSON describing
//!   the fit, shown as is.
//!
//! A text embedding e is compared with class vector c_j by
//! cos(e - m, c_j) = <e - m, c_j> / (||e - m|| ||c_j||), m = `text_mean`.
//! Hand-written reader: `safetensors` parses the container, this file checks the fields.

use prh_core::Error;
use prh_core::rng::{Stream, generator, standard_normal};
use safetensors::{Dtype, SafeTensors};

/// A loaded class-vector file, rows normalised for cosine scores.
pub struct ClassVectors {
    /// File name the vectors came from.
    pub source: String,
    /// Class names, one per row.
    pub names: Vec<String>,
    /// Row-major `[C, d]` class vectors divided by their L2 norms.
    unit: Vec<f64>,
    /// Text embedding width d.
    pub d: usize,
    /// The centring m subtracted from text embeddings, `[d]`.
    mean: Vec<f64>,
    /// The `fit` metadata (pretty JSON), or empty when absent.
    pub fit: String,
    /// The retrieval scores of the fit, when the file records them.
    pub measured: Option<MeasuredAlignment>,
}

/// How well the fitted rotation aligns this text encoder with the vision model, as the
/// experiment measured it (views-vision, `fit` metadata): text-to-image retrieval over
/// `classes` held-out classes, recall@1 and @5, beside their chance levels 1/C and 5/C.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasuredAlignment {
    /// Recall@1 of text -> class retrieval on the held-out classes.
    pub r1: f64,
    /// Recall@5.
    pub r5: f64,
    /// Number of held-out classes C ranked against each other.
    pub classes: usize,
}

impl MeasuredAlignment {
    /// Reads `r1_t2i_imagenet100` and `r5_t2i_imagenet100` (ImageNet-100: C = 100) from the
    /// `fit` JSON; `None` when the file does not record them.
    fn from_fit(fit: &serde_json::Value) -> Option<MeasuredAlignment> {
        Some(MeasuredAlignment {
            r1: fit.get("r1_t2i_imagenet100")?.as_f64()?,
            r5: fit.get("r5_t2i_imagenet100")?.as_f64()?,
            classes: 100,
        })
    }

    /// Chance recall@k: k / C (the correct class at a uniformly random rank).
    pub fn chance(&self, k: usize) -> f64 {
        k as f64 / self.classes as f64
    }
}

/// Little-endian f32 values and shape of tensor `name`, checked to be F32.
fn tensor(st: &SafeTensors<'_>, source: &str, name: &str) -> Result<(Vec<usize>, Vec<f64>), Error> {
    let view = st
        .tensor(name)
        .map_err(|_| Error::format(source, name, "missing tensor (expected f32)"))?;
    if view.dtype() != Dtype::F32 {
        return Err(Error::format(
            source,
            name,
            format!("expected F32, got {:?}", view.dtype()),
        ));
    }
    let values = view
        .data()
        .chunks_exact(4)
        .map(|b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        .collect();
    Ok((view.shape().to_vec(), values))
}

/// The `classes` names and the `fit` metadata of a class-vector file: (names, the fit as
/// pretty JSON or empty, its measured alignment when recorded).
fn metadata(
    source: &str,
    bytes: &[u8],
) -> Result<(Vec<String>, String, Option<MeasuredAlignment>), Error> {
    let (_, header) = SafeTensors::read_metadata(bytes)
        .map_err(|e| Error::format(source, "safetensors", e.to_string()))?;
    let meta = header.metadata().clone().unwrap_or_default();
    let classes = meta.get("classes").ok_or_else(|| {
        Error::format(
            source,
            "__metadata__.classes",
            "missing (expected a JSON array of class names)",
        )
    })?;
    let names: Vec<String> = serde_json::from_str(classes).map_err(|e| {
        Error::format(
            source,
            "__metadata__.classes",
            format!("expected a JSON array of strings: {e}"),
        )
    })?;
    let fit_json: serde_json::Value = match meta.get("fit") {
        Some(f) => serde_json::from_str(f).map_err(|e| {
            Error::format(source, "__metadata__.fit", format!("expected JSON: {e}"))
        })?,
        None => serde_json::Value::Null,
    };
    let fit = if fit_json.is_null() {
        String::new()
    } else {
        serde_json::to_string_pretty(&fit_json).unwrap_or_default()
    };
    let measured = MeasuredAlignment::from_fit(&fit_json);
    Ok((names, fit, measured))
}

/// Row-major `[C, d]` class vectors divided by their L2 norms; a row that is zero or not
/// finite is an error naming its class.
fn unit_rows(source: &str, rows: Vec<f64>, d: usize, names: &[String]) -> Result<Vec<f64>, Error> {
    let mut unit = rows;
    for (j, row) in unit.chunks_exact_mut(d).enumerate() {
        let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt();
        if !norm.is_finite() || norm == 0.0 {
            return Err(Error::format(
                source,
                "class_vectors",
                format!(
                    "row {j} ({}) has norm {norm}: expected a finite non-zero vector",
                    names[j]
                ),
            ));
        }
        row.iter_mut().for_each(|x| *x /= norm);
    }
    Ok(unit)
}

impl ClassVectors {
    /// Parses a class-vector file's bytes (`source` names it in errors).
    ///
    /// # Shapes
    /// `class_vectors [C, d]`, `text_mean [d]`, `classes` C names.
    pub fn from_bytes(source: &str, bytes: &[u8]) -> Result<ClassVectors, Error> {
        super::container::check_safetensors(source, bytes)
            .map_err(|e| Error::format(source, "file", e))?;
        let st = SafeTensors::deserialize(bytes)
            .map_err(|e| Error::format(source, "safetensors", e.to_string()))?;
        let (names, fit, measured) = metadata(source, bytes)?;
        let (shape, rows) = tensor(&st, source, "class_vectors")?;
        let [c, d] = shape[..] else {
            return Err(Error::format(
                source,
                "class_vectors",
                format!("expected 2 dimensions [classes, d_text], got shape {shape:?}"),
            ));
        };
        if c == 0 || d == 0 {
            return Err(Error::format(
                source,
                "class_vectors",
                format!("empty: shape {shape:?}"),
            ));
        }
        if names.len() != c {
            return Err(Error::format(
                source,
                "__metadata__.classes",
                format!("{} names for {c} class vectors", names.len()),
            ));
        }
        let (mshape, mean) = tensor(&st, source, "text_mean")?;
        if mshape != [d] {
            return Err(Error::format(
                source,
                "text_mean",
                format!("expected shape [{d}] (the width of class_vectors), got {mshape:?}"),
            ));
        }
        let unit = unit_rows(source, rows, d, &names)?;
        if mean.iter().any(|x| !x.is_finite()) {
            return Err(Error::format(source, "text_mean", "not finite"));
        }
        Ok(ClassVectors {
            source: source.to_string(),
            names,
            unit,
            d,
            mean,
            fit,
            measured,
        })
    }

    /// Chance level of the top score: the best cosine max_j cos(g, c_j) of `draws` random
    /// directions g ~ N(0, I_d) (isotropic, so any centring is irrelevant), as (mean, std)
    /// over the draws. A text whose best class scores no higher than this is placed no
    /// better than a random direction would be. Seeded (`prh_core::rng`, stream `Eval`),
    /// so the page shows the same numbers every time.
    ///
    /// # Shapes
    /// class vectors `[C, d]` -> (mean, std) of `draws` top-1 scores
    pub fn chance_top_score(&self, draws: usize) -> (f64, f64) {
        let mut rng = generator(0, Stream::Eval, self.unit.len() as u64);
        let tops: Vec<f64> = (0..draws.max(1))
            .map(|_| {
                let g: Vec<f32> = (0..self.d)
                    .map(|c| (standard_normal(&mut rng) + self.mean[c]) as f32)
                    .collect();
                self.nearest(&g, 1)
                    .ok()
                    .and_then(|v| v.first().map(|x| x.1))
                    .unwrap_or(0.0)
            })
            .collect();
        let n = tops.len() as f64;
        let mean = tops.iter().sum::<f64>() / n;
        let var = tops.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        (mean, var.sqrt())
    }

    /// The `top` classes nearest to one text embedding, by cosine after centring:
    /// s_j = <e - m, c_j> / (||e - m|| ||c_j||), largest first. All scores are 0 when
    /// e = m (no direction to compare).
    ///
    /// # Shapes
    /// `e [d]` -> `top` (class index, score)
    pub fn nearest(&self, e: &[f32], top: usize) -> Result<Vec<(usize, f64)>, String> {
        if e.len() != self.d {
            return Err(format!(
                "{}: class vectors have width {}, the encoder's embeddings {}: this file was fitted for another encoder",
                self.source,
                self.d,
                e.len()
            ));
        }
        let x: Vec<f64> = e
            .iter()
            .zip(&self.mean)
            .map(|(v, m)| f64::from(*v) - m)
            .collect();
        let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        let inv = if norm > 0.0 { 1.0 / norm } else { 0.0 };
        let mut scores: Vec<(usize, f64)> = self
            .unit
            .chunks_exact(self.d)
            .map(|c| c.iter().zip(&x).map(|(a, b)| a * b).sum::<f64>() * inv)
            .enumerate()
            .collect();
        scores.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scores.truncate(top);
        Ok(scores)
    }
}
