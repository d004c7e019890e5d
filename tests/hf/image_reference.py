#!/usr/bin/env python3
"""Reference outputs of Hugging Face's image processors (transformers 5, PIL backend) and of
Pillow's resize, for prh's `formats::image` (crates/prh-core/tests/hf_image.rs).

Usage:  python3 tests/hf/image_reference.py OUT_DIR

Needs numpy, Pillow >= 13 and transformers >= 5 (its image processors import and run without torch;
torch is not used). Exits with status 3 and a line starting "SKIP:" when one of them is missing or
older (transformers 4's `convert_to_rgb` dropped alpha instead of compositing onto white; Pillow 12's
resize ran the horizontal pass first where 13 starts vertically); the Rust test skips on that, or
fails under CI=true. Deterministic; a few seconds (mostly importing transformers).

What it writes
==============
OUT_DIR/
  manifest.json         versions, and every file below with its parameters (the test reads only this)
  images/NAME.png|jpg   test images, written with Pillow unless noted:
      rgb_64x48     RGB, smooth gradients + noise (the main downscaling case)
      rgb_17x23     RGB, odd sizes (upscaled by every config)
      rgb_301x203   RGB, large odd downscale (wide filter supports)
      rgb_23x90     RGB, tall and thin (shortest edge is the width)
      rgb_30x20     RGB, smaller than a 40x40 crop (zero padding in center_crop)
      gray_33x27    L (grayscale)
      rgba_37x29    RGBA with alpha 0..255 (composited onto white)
      la_26x31      LA (gray + alpha)
      p_31x25       P (palette, 37 colours), no transparency
      ptrns_29x22   P with a tRNS alpha per palette entry
      gray16_21x19  16-bit grayscale ("I;16": Pillow clips to 255 when converting)
      rgb16_19x22   16-bit RGB             (hand-written PNG: Pillow cannot save it)
      rgba16_18x21  16-bit RGBA            (hand-written PNG)
      graytrns_20x18 8-bit gray + tRNS key  (hand-written PNG)
      rgbtrns_22x20 8-bit RGB + tRNS key    (hand-written PNG)
      la16_17x19    16-bit gray + alpha    (hand-written PNG; Pillow opens it as RGBA, high bytes)
      gray2trns_19x17, gray4trns_21x16, gray1trns_23x18
                    2-, 4- and 1-bit gray with a tRNS key (hand-written PNG; Pillow matches the key
                    against the scaled 8-bit values)
      photo_96x72.jpg  RGB JPEG, quality 90, 4:2:0 chroma subsampling
      gray_40x30.jpg   grayscale JPEG, quality 90
  configs/NAME/preprocessor_config.json
      vit32         ViTImageProcessor 32x32, BILINEAR, mean = std = 0.5 (prh's test ViT checkpoint;
                    do_convert_rgb unset = false, so non-RGB images make transformers raise)
      dino48        BitImageProcessor shortest_edge 48, crop 40x40, BICUBIC, ImageNet mean/std,
                    do_convert_rgb (prh's test DINOv2 checkpoint)
      vit224        google/vit-base-patch16-224 as published (legacy: feature_extractor_type
                    ViTFeatureExtractor, "size": 224)
      dinov2        facebook/dinov2-* as published (shortest_edge 256, crop 224x224, BICUBIC)
      croppad       BitImageProcessor without resize, crop 40x40 (pads small images with zeros)
      edges         ViTImageProcessor {shortest_edge 30, longest_edge 40}, LANCZOS, do_convert_rgb
      maxhw         ViTImageProcessor {max_height 24, max_width 36}, HAMMING, do_convert_rgb
      bit_defaults, clip_defaults, deit_defaults
                    only image_processor_type (Bit, CLIP, DeiT): the class defaults
  decoded/NAME.npy      uint8 [H, W, 3]  transformers' convert_to_rgb(PIL.Image.open(file))
  pixel_values/CONFIG__NAME.npy  float32 [1, 3, h, w]  AutoImageProcessor.from_pretrained(dir,
                        backend="pil")(images=PIL.Image.open(file), return_tensors="np").pixel_values;
                        when transformers raises, the manifest records the error instead
  resize/NAME__WxH_FILTER.npy  uint8 [H', W', 3]  Image.open(file).resize((W', H'), filter) for every
                        Pillow filter and a set of sizes (down, up, mixed, one axis only, same size)
"""
import json
import os
import struct
import sys
import zlib


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(3)


try:
    import numpy as np
except ImportError:
    skip("numpy is not installed (pip install numpy pillow transformers)")
try:
    import PIL
    from PIL import Image
except ImportError:
    skip("Pillow is not installed (pip install pillow transformers)")
try:
    import transformers
    from transformers import AutoImageProcessor
    from transformers.image_transforms import convert_to_rgb
except Exception as e:  # ImportError, or a broken install
    skip(f"transformers cannot be imported ({e}); pip install transformers")
if int(transformers.__version__.split(".")[0]) < 5:
    skip(f"transformers {transformers.__version__} is older than 5 (its convert_to_rgb drops alpha); "
         "pip install -U transformers")
if int(PIL.__version__.split(".")[0]) < 13:
    skip(f"Pillow {PIL.__version__} is older than 13 (its resize always runs the horizontal pass first); "
         "pip install -U pillow")

FILTERS = {"NEAREST": 0, "LANCZOS": 1, "BILINEAR": 2, "BICUBIC": 3, "BOX": 4, "HAMMING": 5}


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def pack_row(row, bits):
    """Samples of 1, 2 or 4 bits packed into bytes, first sample in the high bits."""
    per = 8 // bits
    row = np.concatenate([row, np.zeros((-len(row)) % per, row.dtype)]).astype(np.uint16).reshape(-1, per)
    return (row << (8 - bits * (np.arange(per) + 1))).sum(1).astype(np.uint8).tobytes()


def write_raw_png(path, samples, color_type, bit_depth, trns=None):
    """A PNG of samples [H, W, C] (Pillow cannot save 16-bit colour, 16-bit LA, tRNS keys or 2-bit gray)."""
    h, w = samples.shape[:2]
    if bit_depth < 8:
        rows = [pack_row(samples[y].reshape(-1), bit_depth) for y in range(h)]
    else:
        rows = [samples[y].astype(">u2" if bit_depth == 16 else "u1").tobytes() for y in range(h)]
    raw = b"".join(b"\x00" + r for r in rows)
    data = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 0))
    if trns is not None:
        data += png_chunk(b"tRNS", trns)
    data += png_chunk(b"IDAT", zlib.compress(raw)) + png_chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(data)


def smooth(rng, h, w, c, scale=255):
    """Gradients, a ring and noise: varied enough that every rounding in a resize is exercised."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    planes = []
    for i in range(c):
        p = (0.5 + 0.4 * np.sin(x / (3 + 2 * i) + y / (5 + i)) * np.cos(np.hypot(x - w / 2, y - h / 2) / 4)
             + 0.1 * rng.standard_normal((h, w)))
        planes.append(np.clip(p, 0, 1) * scale)
    return np.rint(np.stack(planes, -1)).astype(np.uint16 if scale > 255 else np.uint8)


def pil(arr, mode):
    """A Pillow image from an array [H, W(, C)] (frombytes: Image.fromarray's mode argument is deprecated)."""
    data = arr.astype("<u2").tobytes() if mode == "I;16" else np.ascontiguousarray(arr, np.uint8).tobytes()
    return Image.frombytes(mode, (arr.shape[1], arr.shape[0]), data)


def make_images(d, rng):
    os.makedirs(d)
    names = []

    def save(name, im, **kw):
        im.save(os.path.join(d, name), **kw)
        names.append(name)

    for w, h in [(64, 48), (17, 23), (301, 203), (23, 90), (30, 20)]:
        save(f"rgb_{w}x{h}.png", pil(smooth(rng, h, w, 3), "RGB"))
    save("gray_33x27.png", pil(smooth(rng, 27, 33, 1)[..., 0], "L"))
    rgba = smooth(rng, 29, 37, 4)
    rgba[::5, ::3, 3] = 0  # some fully transparent pixels
    rgba[1::7, ::2, 3] = 255
    save("rgba_37x29.png", pil(rgba, "RGBA"))
    save("la_26x31.png", pil(smooth(rng, 31, 26, 2), "LA"))
    pal = rng.integers(0, 256, (37, 3), dtype=np.uint8)
    idx = rng.integers(0, 37, (25, 31), dtype=np.uint8)
    p = pil(idx, "P")
    p.putpalette(pal.reshape(-1).tolist())
    save("p_31x25.png", p)
    idx2 = rng.integers(0, 37, (22, 29), dtype=np.uint8)
    p2 = pil(idx2, "P")
    p2.putpalette(pal.reshape(-1).tolist())
    alphas = bytes(rng.integers(0, 256, 30, dtype=np.uint8).tolist())  # shorter than the palette
    save("ptrns_29x22.png", p2, transparency=alphas)
    g16 = smooth(rng, 19, 21, 1, scale=700)[..., 0]  # values 0..700: some below 256
    save("gray16_21x19.png", pil(g16, "I;16"))
    write_raw_png(os.path.join(d, "rgb16_19x22.png"), smooth(rng, 22, 19, 3, scale=65535), 2, 16)
    names.append("rgb16_19x22.png")
    write_raw_png(os.path.join(d, "rgba16_18x21.png"), smooth(rng, 21, 18, 4, scale=65535), 6, 16)
    names.append("rgba16_18x21.png")
    g = smooth(rng, 18, 20, 1)
    g[::3, ::4] = 77
    write_raw_png(os.path.join(d, "graytrns_20x18.png"), g, 0, 8, trns=struct.pack(">H", 77))
    names.append("graytrns_20x18.png")
    c = smooth(rng, 20, 22, 3)
    c[1::4, ::3] = (10, 200, 30)
    write_raw_png(os.path.join(d, "rgbtrns_22x20.png"), c, 2, 8, trns=struct.pack(">HHH", 10, 200, 30))
    names.append("rgbtrns_22x20.png")
    write_raw_png(os.path.join(d, "la16_17x19.png"), smooth(rng, 19, 17, 2, scale=65535), 4, 16)
    names.append("la16_17x19.png")
    # Key 0 on 2-bit gray: Pillow compares it with the scaled values (0, 85, 170, 255), so
    # black pixels turn white; key 2 (= 170 scaled) matches nothing.
    g2 = rng.integers(0, 4, (17, 19, 1))
    write_raw_png(os.path.join(d, "gray2trns_19x17.png"), g2, 0, 2, trns=struct.pack(">H", 0))
    names.append("gray2trns_19x17.png")
    write_raw_png(os.path.join(d, "gray4trns_21x16.png"), rng.integers(0, 16, (16, 21, 1)), 0, 4,
                  trns=struct.pack(">H", 2))
    names.append("gray4trns_21x16.png")
    write_raw_png(os.path.join(d, "gray1trns_23x18.png"), rng.integers(0, 2, (18, 23, 1)), 0, 1,
                  trns=struct.pack(">H", 1))
    names.append("gray1trns_23x18.png")
    save("photo_96x72.jpg", pil(smooth(rng, 72, 96, 3), "RGB"), quality=90, subsampling=2)
    save("gray_40x30.jpg", pil(smooth(rng, 30, 40, 1)[..., 0], "L"), quality=90)
    return names


IMAGENET = dict(image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225])
CONFIGS = {
    "vit32": {"image_processor_type": "ViTImageProcessor", "do_resize": True, "size": {"height": 32, "width": 32},
              "resample": 2, "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
              "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]},
    "dino48": {"image_processor_type": "BitImageProcessor", "do_resize": True, "size": {"shortest_edge": 48},
               "resample": 3, "do_center_crop": True, "crop_size": {"height": 40, "width": 40}, "do_rescale": True,
               "rescale_factor": 1 / 255, "do_normalize": True, "do_convert_rgb": True, **IMAGENET},
    "vit224": {"feature_extractor_type": "ViTFeatureExtractor", "do_normalize": True, "do_resize": True,
               "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "resample": 2, "size": 224},
    "dinov2": {"crop_size": {"height": 224, "width": 224}, "do_center_crop": True, "do_convert_rgb": True,
               "do_normalize": True, "do_rescale": True, "do_resize": True, "image_processor_type": "BitImageProcessor",
               "resample": 3, "rescale_factor": 0.00392156862745098, "size": {"shortest_edge": 256}, **IMAGENET},
    "croppad": {"image_processor_type": "BitImageProcessor", "do_resize": False, "do_center_crop": True,
                "crop_size": {"height": 40, "width": 40}, "do_convert_rgb": True, **IMAGENET},
    "edges": {"image_processor_type": "ViTImageProcessor", "size": {"shortest_edge": 30, "longest_edge": 40},
              "resample": 1, "do_convert_rgb": True},
    "maxhw": {"image_processor_type": "ViTImageProcessor", "size": {"max_height": 24, "max_width": 36},
              "resample": 5, "do_convert_rgb": True},
    # Nothing but the class: every field from the class defaults.
    "bit_defaults": {"image_processor_type": "BitImageProcessor"},
    "clip_defaults": {"image_processor_type": "CLIPImageProcessor"},
    "deit_defaults": {"image_processor_type": "DeiTImageProcessor"},
}

# (new_w, new_h) per source image: down, up, mixed, one axis only, same size.
RESIZES = {
    "rgb_64x48.png": [(32, 32), (21, 13), (80, 20), (30, 48), (64, 20), (64, 48), (128, 96)],
    "rgb_17x23.png": [(40, 50), (5, 7), (17, 60)],
    "rgb_301x203.png": [(37, 29), (224, 224), (256, 172)],
}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("What it writes")[0])
    out = sys.argv[1]
    rng = np.random.default_rng(20240607)
    os.makedirs(out, exist_ok=True)
    img_dir = os.path.join(out, "images")
    names = make_images(img_dir, rng)
    for sub in ["decoded", "pixel_values", "resize"]:
        os.makedirs(os.path.join(out, sub))
    manifest = {"transformers": transformers.__version__, "pillow": PIL.__version__, "numpy": np.__version__,
                "images": {}, "configs": {}, "cases": [], "resizes": []}

    for name in names:
        im = Image.open(os.path.join(img_dir, name))
        f = f"decoded/{name}.npy"
        np.save(os.path.join(out, f), convert_to_rgb(im, return_numpy=True))
        manifest["images"][name] = {"file": f"images/{name}", "mode": im.mode, "decoded": f,
                                    "jpeg": name.endswith(".jpg")}

    for cname, cfg in CONFIGS.items():
        d = os.path.join(out, "configs", cname)
        os.makedirs(d)
        with open(os.path.join(d, "preprocessor_config.json"), "w") as fh:
            json.dump(cfg, fh, indent=2)
        proc = AutoImageProcessor.from_pretrained(d, backend="pil")
        manifest["configs"][cname] = {"file": f"configs/{cname}/preprocessor_config.json",
                                      "class": type(proc).__name__}
        for name in names:
            case = {"config": cname, "image": name}
            try:
                px = proc(images=Image.open(os.path.join(img_dir, name)), return_tensors="np")["pixel_values"]
                assert px.dtype == np.float32 and px.ndim == 4 and px.shape[:2] == (1, 3), (px.dtype, px.shape)
                f = f"pixel_values/{cname}__{name}.npy"
                np.save(os.path.join(out, f), px)
                case["file"] = f
                case["shape"] = list(px.shape)
            except Exception as e:  # transformers refuses this input: prh must refuse it too
                case["error"] = f"{type(e).__name__}: {e}"
            manifest["cases"].append(case)

    for name, sizes in RESIZES.items():
        im = Image.open(os.path.join(img_dir, name))
        assert im.mode == "RGB"
        for w, h in sizes:
            for fname, fid in FILTERS.items():
                f = f"resize/{name}__{w}x{h}_{fname}.npy"
                np.save(os.path.join(out, f), np.asarray(im.resize((w, h), fid)))
                manifest["resizes"].append({"image": name, "width": w, "height": h, "resample": fid, "file": f})

    with open(os.path.join(out, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
    n_err = sum("error" in c for c in manifest["cases"])
    print(f"wrote {len(names)} images, {len(manifest['cases'])} processor cases ({n_err} refused by transformers), "
          f"{len(manifest['resizes'])} resizes to {out}")


if __name__ == "__main__":
    main()
