"""Pretrained Hugging Face encoders on a GPU against the independent numpy reference.

The reference folders (small randomly initialised checkpoints in the published layouts,
with every hidden state from tests/hf/make_reference.py's float64 numpy forward) need
transformers to write, which a lent GPU machine may not have; so they are made here and
shipped, and the machine needs numpy only:

    python3 benches/gpu/hf.py prep .dev/hf            # here: checkpoints + expected outputs
    python3 benches/gpu/hf.py check BIN .dev/hf cuda  # there: prh-native on that device

`check` runs the same comparisons as tests/pretrained.rs, on `--device DEVICE`:
  bert       features --pool mean  [N, L+1, H] vs reference/mean.npy (every layer)
  bert-mlm   features --pool cls   [N, L+1, H] vs bert/reference/cls.npy (every layer)
  minilm-st  embed (sentence-transformers: mean, L2-normalised) vs sentence_embedding.npy
  vit,       embed of 3 PNG files (the folder's own image processor, then the model)
  dinov2       vs transformers' processor of the same files, then the numpy forward
and prints the largest absolute difference of each; exits 1 if one is above 1e-4 (the
issue's tolerance, float32 forward vs float64 reference) or a command fails.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

TOL = 1e-4
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
PNGS = ["rgb_17x23", "rgb_301x203", "rgb_64x48"]
IMAGE_MODELS = [("vit", "vit32", 32), ("dinov2", "dino48", 40)]


def prep(out):
    # The image processor's cases (50 MB) are read for 3 PNGs and their pixel values only.
    ref, img = os.path.join(out, "ref"), tempfile.mkdtemp()
    py = [sys.executable]
    subprocess.run(py + [os.path.join(ROOT, "tests/hf/make_reference.py"), ref], check=True)
    subprocess.run(py + [os.path.join(ROOT, "tests/hf/image_reference.py"), img], check=True)
    pngs = os.path.join(out, "pngs")
    os.makedirs(pngs, exist_ok=True)
    for n in PNGS:
        with open(os.path.join(img, "images", n + ".png"), "rb") as f:
            data = f.read()
        with open(os.path.join(pngs, n + ".png"), "wb") as f:
            f.write(data)
    for model, config, side in IMAGE_MODELS:
        px = np.stack([np.load(os.path.join(img, "pixel_values", f"{config}__{n}.png.npy"))
                       for n in PNGS]).reshape(len(PNGS), 3, side, side).astype(np.float32)
        px_file = os.path.join(out, f"{model}_px.npy")
        np.save(px_file, px)
        subprocess.run(py + [os.path.join(ROOT, "tests/hf/make_reference.py"), "--forward",
                             os.path.join(ref, model), px_file,
                             os.path.join(out, f"{model}_want.npy")], check=True)
    shutil.rmtree(img)
    print(f"reference written to {out}")


def check(binary, out, device):
    ref = os.path.join(out, "ref")
    texts = os.path.join(ref, "texts.txt")
    tmp = tempfile.mkdtemp()
    failed = []

    def run(args, name):
        dest = os.path.join(tmp, name + ".npy")
        cmd = [binary, "--quiet"] + args + ["--device", device, "--out", dest]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            failed.append(name)
            print(f"{name}: FAILED ({' '.join(cmd)}):\n{p.stderr.strip()}")
            return None
        return np.load(dest)

    def compare(name, got, want):
        if got is None:
            return
        if got.shape != want.shape:
            failed.append(name)
            print(f"{name}: shape {got.shape}, expected {want.shape}")
            return
        d = float(np.abs(got.astype(np.float64) - want).max())
        ok = d <= TOL
        if not ok:
            failed.append(name)
        print(f"{name:<34} {str(got.shape):<14} max |diff| {d:.2e}  {'ok' if ok else 'ABOVE 1e-4'}")

    load = lambda *p: np.load(os.path.join(ref, *p))
    compare("bert features mean (every layer)",
            run(["features", "--pool", "mean", "--hf", os.path.join(ref, "bert"),
                 "--texts", texts], "bert"),
            load("bert", "reference", "mean.npy"))
    compare("bert-mlm features cls (every layer)",
            run(["features", "--pool", "cls", "--hf", os.path.join(ref, "bert-mlm"),
                 "--texts", texts], "bert-mlm"),
            load("bert", "reference", "cls.npy"))
    compare("minilm-st embed (normalised mean)",
            run(["embed", "--hf", os.path.join(ref, "minilm-st"), "--texts", texts],
                "minilm"),
            load("minilm-st", "reference", "sentence_embedding.npy"))
    for model, _, _ in IMAGE_MODELS:
        compare(f"{model} embed of PNG files (cls)",
                run(["embed", "--batch", "2", "--hf", os.path.join(ref, model),
                     "--images", os.path.join(out, "pngs")], model),
                np.load(os.path.join(out, f"{model}_want.npy")))
    if failed:
        print(f"{device}: {len(failed)} check(s) failed: {', '.join(failed)}")
        sys.exit(1)
    print(f"{device}: every Hugging Face check within {TOL:g}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "prep":
        prep(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
