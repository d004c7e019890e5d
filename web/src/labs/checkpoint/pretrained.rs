//! A pretrained Hugging Face checkpoint folder in the checkpoint lab: the files of a
//! folder as published (config.json, model.safetensors, tokenizer.json for a BERT-family
//! text encoder; preprocessor_config.json for ViT / DINOv2), loaded by the same core code as
//! `prh-native embed --hf` (`prh_core::tasks::pretrained`) on the CPU backend compiled to
//! WebAssembly. A text encoder embeds the text box, an image encoder the picked images;
//! the result shows in the lab's neighbour card like an exported bundle's.

use super::backends::Which;
use super::compute::Embedded;
use crate::widgets::clock::now_ms;
use crate::widgets::files::file_bytes;
use prh_core::backend::Cpu;
use prh_core::tasks::pretrained::{Input, Pretrained, PretrainedFiles};
use std::sync::Arc;
use wasm_bindgen::JsValue;

/// A loaded checkpoint folder.
pub struct HfLoaded {
    /// The folder's name (or "picked files").
    pub name: String,
    /// The encoder on the CPU backend.
    pub model: Pretrained<Cpu>,
    /// Its shape in words.
    pub describe: String,
}

/// The path of a picked file inside its folder: `webkitRelativePath` without the folder's
/// own name (`minilm/1_Pooling/config.json` -> `1_Pooling/config.json`), else its name.
fn relative_path(file: &web_sys::File) -> (Option<String>, String) {
    let rel = js_sys::Reflect::get(file, &JsValue::from_str("webkitRelativePath"))
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default();
    match rel.split_once('/') {
        Some((folder, rest)) if !rest.is_empty() => (Some(folder.to_string()), rest.to_string()),
        _ => (None, file.name()),
    }
}

/// Reads the picked files of a folder (a folder picker or several files) into the core's
/// [`PretrainedFiles`]; files it does not read are skipped.
pub async fn read_files(list: web_sys::FileList) -> Result<PretrainedFiles, String> {
    let mut files = PretrainedFiles {
        folder: "picked files".to_string(),
        ..Default::default()
    };
    for i in 0..list.length() {
        let Some(file) = list.get(i) else { continue };
        let (folder, rel) = relative_path(&file);
        if let Some(f) = folder {
            files.folder = f;
        }
        let known = prh_core::tasks::pretrained::KNOWN_FILES.contains(&rel.as_str())
            || rel.ends_with("/config.json");
        if known {
            files.files.insert(rel, file_bytes(&file).await?);
        }
    }
    if files.files.is_empty() {
        return Err(format!(
            "{}: none of the files a checkpoint folder needs (config.json, model.safetensors, \
             tokenizer.json or preprocessor_config.json)",
            files.folder
        ));
    }
    Ok(files)
}

/// Loads a picked folder on the CPU backend.
pub fn load(files: &PretrainedFiles) -> Result<Arc<HfLoaded>, String> {
    let model =
        Pretrained::<Cpu>::load(files, None, &Default::default()).map_err(|e| e.to_string())?;
    Ok(Arc::new(HfLoaded {
        name: files.folder.clone(),
        describe: model.describe(),
        model,
    }))
}

/// Embeds texts (a text encoder) or images (`images`: name and bytes) into the lab's
/// result; `source_text` is the text box as it was.
pub fn embed(hf: &HfLoaded, texts: &str, images: &[(String, Vec<u8>)]) -> Result<Embedded, String> {
    let lines = super::compute::texts_of(texts);
    let (labels, inputs): (Vec<String>, Vec<Input>) = if hf.model.is_text() {
        (
            lines.clone(),
            lines.iter().map(|t| Input::Text(t)).collect(),
        )
    } else {
        if images.is_empty() {
            return Err(format!(
                "{}: an image encoder: pick PNG or JPEG images to embed",
                hf.name
            ));
        }
        (
            images.iter().map(|(n, _)| n.clone()).collect(),
            images.iter().map(|(n, b)| Input::Image(n, b)).collect(),
        )
    };
    if inputs.is_empty() {
        return Err("no texts to embed: type at least one line".to_string());
    }
    let t0 = now_ms();
    let z = hf
        .model
        .embed(&inputs, 16, &mut |_| {})
        .map_err(|e| e.to_string())?;
    Ok(Embedded {
        texts: labels,
        rows: z.data.iter().map(|&x| x as f32).collect(),
        d: z.d,
        ms: now_ms() - t0,
        which: Which::Cpu,
        note: "a Hugging Face checkpoint runs on the CPU backend (WebAssembly)".to_string(),
        encoder: hf.name.clone(),
        model: hf.describe.clone(),
        bundle_load: 0,
        source_text: texts.to_string(),
        cut: Vec::new(),
        cap: 0,
    })
}
