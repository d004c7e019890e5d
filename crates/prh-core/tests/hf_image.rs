//! `formats::image` against the real thing: transformers' image processors (PIL backend) and
//! Pillow's resize, through `tests/hf/image_reference.py`, which writes test images, configs
//! and reference arrays (its docstring lists them). Without python3, Pillow or transformers 5
//! the comparison is skipped with the reason printed, except under `CI=true`, where it fails.
//! The error tests need no Python.

use prh_core::formats::image::{ImageProcessor, Resample, resize_like_pil};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The reference script, relative to this crate (crates/prh-core).
const SCRIPT: &str = "../../tests/hf/image_reference.py";

/// JPEG bounds, in levels of 255 per sample. Pillow decodes JPEG with libjpeg-turbo and the
/// `image` crate with zune-jpeg: the luma IDCTs agree within 1 level, but zune-jpeg rounds
/// between the vertical and horizontal steps of its 4:2:0 chroma upsampling where
/// libjpeg-turbo rounds once, and the colour conversion amplifies that (up to 1.77x for
/// blue). Measured on the test JPEGs (quality 90, noisy chroma, the worst case for
/// upsampling): decoded samples equal for 71% and within 2 levels for 99.6%, at most 7
/// levels apart, mean 0.41 (grayscale: at most 1). After a processor the maximum reached 8
/// levels (a bicubic upscale overshoots a difference by up to a quarter), the mean 0.47.
/// The maximum bounds leave that much margin again (8 decoded, 10 processed); the mean
/// bound is the one that catches a real error (wrong colour handling moves the mean by
/// tens of levels).
const JPEG_DECODE_MAX_LEVELS: f32 = 8.0;
const JPEG_MAX_LEVELS: f32 = 10.0;
const JPEG_MEAN_LEVELS: f32 = 0.6;

fn read_npy<T: npyz::Deserialize>(path: &Path) -> (Vec<u64>, Vec<T>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec().unwrap())
}

/// Runs the reference script into a fresh folder; `None` (after printing why) when Python,
/// Pillow or transformers is missing, a panic in that case under `CI=true`.
fn reference() -> Option<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(SCRIPT);
    let out = std::env::temp_dir().join(format!("prh-hf-image-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let skip = |why: String| {
        if ci {
            panic!("hf_image: cannot run the reference under CI=true: {why}");
        }
        eprintln!("hf_image: SKIPPED the comparison with transformers: {why}");
        None
    };
    let t = std::time::Instant::now();
    let run = match Command::new("python3").arg(&script).arg(&out).output() {
        Ok(r) => r,
        Err(e) => return skip(format!("python3 cannot be started ({e})")),
    };
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    if run.status.code() == Some(3) {
        return skip(stdout.trim().to_string());
    }
    assert!(
        run.status.success(),
        "{} failed ({}):\n{stdout}\n{stderr}",
        script.display(),
        run.status
    );
    eprintln!(
        "hf_image: {} ({:.1} s)",
        stdout.trim(),
        t.elapsed().as_secs_f64()
    );
    Some(out)
}

/// The image as the processor decodes it, before any resize: a processor that only
/// converts to RGB returns the pixel values as floats.
fn decode(path: &Path) -> (Vec<u8>, usize, usize) {
    let raw = ImageProcessor::from_json(
        "raw.json",
        r#"{"image_processor_type": "BitImageProcessor", "do_resize": false,
            "do_center_crop": false, "do_rescale": false, "do_normalize": false}"#,
    )
    .unwrap();
    let bytes = std::fs::read(path).unwrap();
    let (chw, h, w) = raw.preprocess(&path.display().to_string(), &bytes).unwrap();
    let n = h * w;
    let hwc = (0..n * 3).map(|i| chw[(i % 3) * n + i / 3] as u8).collect();
    (hwc, h, w)
}

#[test]
fn matches_transformers_and_pillow() {
    let Some(dir) = reference() else { return };
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let images = manifest["images"].as_object().unwrap();

    // Decoding and RGB conversion: PNG exact, JPEG within the decoders' disagreement.
    let mut jpeg_decode = (0f32, 0f32);
    for (name, info) in images {
        let (rgb, h, w) = decode(&dir.join(info["file"].as_str().unwrap()));
        let (shape, want) = read_npy::<u8>(&dir.join(info["decoded"].as_str().unwrap()));
        assert_eq!(shape, [h as u64, w as u64, 3], "{name}: decoded shape");
        if info["jpeg"].as_bool().unwrap() {
            let d: Vec<f32> = rgb
                .iter()
                .zip(&want)
                .map(|(a, b)| a.abs_diff(*b) as f32)
                .collect();
            let (max, mean) = max_mean(&d);
            assert!(
                max <= JPEG_DECODE_MAX_LEVELS && mean <= JPEG_MEAN_LEVELS,
                "{name}: JPEG decodes differ by up to {max} levels, {mean} on average"
            );
            jpeg_decode = (jpeg_decode.0.max(max), jpeg_decode.1.max(mean));
        } else {
            assert_eq!(
                rgb, want,
                "{name} ({}): RGB conversion differs",
                info["mode"]
            );
        }
    }

    // The resize alone, on Pillow's own decode: every filter exact.
    let mut resizes = 0;
    for r in manifest["resizes"].as_array().unwrap() {
        let name = r["image"].as_str().unwrap();
        let (shape, src) = read_npy::<u8>(&dir.join(images[name]["decoded"].as_str().unwrap()));
        let (h, w) = (shape[0] as u32, shape[1] as u32);
        let (nw, nh) = (
            r["width"].as_u64().unwrap() as u32,
            r["height"].as_u64().unwrap() as u32,
        );
        let filter = Resample::from_pil(r["resample"].as_i64().unwrap()).unwrap();
        let (shape, want) = read_npy::<u8>(&dir.join(r["file"].as_str().unwrap()));
        assert_eq!(shape, [nh as u64, nw as u64, 3]);
        let got = resize_like_pil(&src, w, h, nw, nh, filter);
        let diff = got.iter().zip(&want).filter(|(a, b)| a != b).count();
        assert!(
            got == want,
            "{name} {w}x{h} -> {nw}x{nh} {filter:?}: {diff} of {} samples differ from Pillow",
            want.len()
        );
        resizes += 1;
    }

    // The whole processor: PNG within 1e-6 (in fact equal), JPEG within the bounds above
    // (differences taken back to levels: times std_c, divided by rescale_factor); where
    // transformers raises, prh refuses too.
    let (mut png_max, mut jpeg, mut compared, mut refused) = (0f32, (0f32, 0f32), 0, 0);
    for case in manifest["cases"].as_array().unwrap() {
        let (cname, name) = (
            case["config"].as_str().unwrap(),
            case["image"].as_str().unwrap(),
        );
        let cfg_path = dir.join(manifest["configs"][cname]["file"].as_str().unwrap());
        let proc = ImageProcessor::from_json(
            &cfg_path.display().to_string(),
            &std::fs::read_to_string(&cfg_path).unwrap(),
        )
        .unwrap_or_else(|e| panic!("{cname}: {e}"));
        let img_path = dir.join(images[name]["file"].as_str().unwrap());
        let got = proc.preprocess(name, &std::fs::read(&img_path).unwrap());
        if let Some(err) = case.get("error") {
            let e = got.err().unwrap_or_else(|| {
                panic!("{cname} {name}: transformers raised {err}, prh did not")
            });
            assert!(e.to_string().contains(name), "{e}");
            refused += 1;
            continue;
        }
        let (px, h, w) = got.unwrap_or_else(|e| panic!("{cname} {name}: {e}"));
        let (shape, want) = read_npy::<f32>(&dir.join(case["file"].as_str().unwrap()));
        assert_eq!(shape, [1, 3, h as u64, w as u64], "{cname} {name}: shape");
        if images[name]["jpeg"].as_bool().unwrap() {
            let n = h * w;
            let level = |c: usize| {
                let std = if proc.do_normalize {
                    proc.image_std[c]
                } else {
                    1.0
                };
                (std / if proc.do_rescale {
                    proc.rescale_factor
                } else {
                    1.0
                }) as f32
            };
            let d: Vec<f32> = px
                .iter()
                .zip(&want)
                .enumerate()
                .map(|(i, (a, b))| (a - b).abs() * level(i / n))
                .collect();
            let (max, mean) = max_mean(&d);
            // + 1e-3: the float rounding of a difference taken back to levels.
            assert!(
                max <= JPEG_MAX_LEVELS + 1e-3 && mean <= JPEG_MEAN_LEVELS,
                "{cname} {name}: differs by up to {max} levels, {mean} on average"
            );
            jpeg = (jpeg.0.max(max), jpeg.1.max(mean));
        } else {
            let (max, _) = max_mean(
                &px.iter()
                    .zip(&want)
                    .map(|(a, b)| (a - b).abs())
                    .collect::<Vec<_>>(),
            );
            assert!(max <= 1e-6, "{cname} {name}: max |diff| {max} > 1e-6");
            png_max = png_max.max(max);
        }
        compared += 1;
    }
    eprintln!(
        "hf_image: {resizes} Pillow resizes equal; {compared} processor outputs compared: PNG max \
         |diff| {png_max:e}; JPEG decodes within {} levels (mean {:.2}), outputs within {:.2} \
         levels (mean {:.2}); {refused} inputs refused as transformers refuses them",
        jpeg_decode.0, jpeg_decode.1, jpeg.0, jpeg.1
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn max_mean(d: &[f32]) -> (f32, f32) {
    let max = d.iter().copied().fold(0f32, f32::max);
    (max, d.iter().sum::<f32>() / d.len().max(1) as f32)
}

fn vit() -> ImageProcessor {
    ImageProcessor::from_json(
        "vit/preprocessor_config.json",
        r#"{"image_processor_type": "ViTImageProcessor", "size": {"height": 32, "width": 32},
            "resample": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}"#,
    )
    .unwrap()
}

/// A valid 4x3 RGB PNG.
fn png() -> Vec<u8> {
    let mut bytes = Vec::new();
    let img = image::RgbImage::from_fn(4, 3, |x, y| image::Rgb([x as u8 * 60, y as u8 * 80, 7]));
    img.write_to(
        &mut std::io::Cursor::new(&mut bytes),
        image::ImageFormat::Png,
    )
    .unwrap();
    bytes
}

#[track_caller]
fn assert_names(e: prh_core::Error, file: &str, field: &str) {
    let msg = e.to_string();
    assert!(
        msg.contains(file) && msg.contains(field),
        "{msg:?} should name {file} and {field}"
    );
}

#[test]
fn preprocess_shapes_and_corrupt_images() {
    let (px, h, w) = vit().preprocess("ok.png", &png()).unwrap();
    assert_eq!((px.len(), h, w), (3 * 32 * 32, 32, 32));
    let good = png();
    // Truncated, a flipped byte in the pixel data (CRC), not an image, empty.
    let mut flipped = good.clone();
    let at = flipped.len() - 20;
    flipped[at] ^= 0x40;
    for (bytes, field) in [
        (&good[..good.len() / 2], "pixels"),
        (&flipped[..], "pixels"),
        (&b"GIF89a not supported"[..], "header"),
        (&[][..], "header"),
        (&good[..12], "header"),
        (&[0xFF, 0xD8, 0xFF, 0xE0, 0, 2][..], "header"),
    ] {
        let e = vit().preprocess("photos/cat.png", bytes).unwrap_err();
        assert_names(e, "photos/cat.png", field);
    }
}

#[test]
fn config_errors_name_file_and_field() {
    let file = "models/vit/preprocessor_config.json";
    for (json, field) in [
        ("{not json", "json"),
        ("[1, 2]", "json"),
        (r#"{"do_resize": true}"#, "image_processor_type"),
        (
            r#"{"image_processor_type": "ConvNextImageProcessor"}"#,
            "image_processor_type",
        ),
        (
            r#"{"image_processor_type": "ViTImageProcessor", "resample": 7}"#,
            "resample",
        ),
        (
            r#"{"image_processor_type": "ViTImageProcessor", "resample": "bilinear"}"#,
            "resample",
        ),
        (
            r#"{"image_processor_type": "ViTImageProcessor", "do_resize": "yes"}"#,
            "do_resize",
        ),
        (
            r#"{"image_processor_type": "ViTImageProcessor", "size": {"height": 0, "width": 4}}"#,
            "size.height",
        ),
        (
            r#"{"image_processor_type": "ViTImageProcessor", "size": {"longest_edge": 64}}"#,
            "size",
        ),
        (
            r#"{"image_processor_type": "ViTImageProcessor", "image_mean": [0.5, 0.5]}"#,
            "image_mean",
        ),
        (
            r#"{"image_processor_type": "ViTImageProcessor", "image_std": 0}"#,
            "image_std",
        ),
        (
            r#"{"image_processor_type": "BitImageProcessor", "crop_size": {"shortest_edge": 4}}"#,
            "crop_size",
        ),
        (
            r#"{"image_processor_type": "ViTImageProcessor", "do_center_crop": true}"#,
            "crop_size",
        ),
        (
            r#"{"image_processor_type": "ViTImageProcessor", "do_pad": true}"#,
            "do_pad",
        ),
    ] {
        let e = ImageProcessor::from_json(file, json).unwrap_err();
        assert_names(e, file, field);
    }
    let e = ImageProcessor::from_json(
        file,
        r#"{"image_processor_type": "ViTImageProcessor", "resample": 7}"#,
    )
    .unwrap_err();
    assert!(e.to_string().contains("unknown resample value 7"), "{e}");
}

#[test]
fn config_defaults_follow_the_processor_class() {
    let bit =
        ImageProcessor::from_json("p.json", r#"{"image_processor_type": "BitImageProcessor"}"#)
            .unwrap();
    assert_eq!(bit.resample, Resample::Bicubic);
    assert_eq!(bit.crop_size, Some((224, 224)));
    assert!(bit.do_convert_rgb && bit.do_center_crop);
    // The legacy ViT config: int size means a square, do_convert_rgb is off.
    let vit = ImageProcessor::from_json(
        "p.json",
        r#"{"feature_extractor_type": "ViTFeatureExtractor", "size": 224, "do_center_crop": null}"#,
    )
    .unwrap();
    assert_eq!(vit.processor_type, "ViTImageProcessor");
    assert_eq!(
        vit.size,
        Some(prh_core::formats::image::Size::HeightWidth {
            height: 224,
            width: 224
        })
    );
    assert!(!vit.do_convert_rgb && !vit.do_center_crop);
    // A zero-size resize (a 1-pixel-high image to max 4x4... of a very wide image) is refused.
    let thin = ImageProcessor::from_json(
        "p.json",
        r#"{"image_processor_type": "ViTImageProcessor", "size": {"max_height": 4, "max_width": 4}}"#,
    )
    .unwrap();
    let mut bytes = Vec::new();
    image::RgbImage::new(50, 1)
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .unwrap();
    assert_names(
        thin.preprocess("wide.png", &bytes).unwrap_err(),
        "wide.png",
        "size",
    );
}
