"""Reads sweep.sh's runs (and the demo's own spectral pairs) and prints one row per pair.

  python3 -B docs/results/sigreg-bad/analyse.py DEMO OUT

mutual 10-NN: cosine on centred embeddings of the 192 clean states (embeddings.npy of each
run; all 192, where the demo scores 96 held-out states, so the numbers differ from the
demo's by sampling). CKA / sin-theta to F: each run's last evaluation (metrics.jsonl).
Variance shares: of each encoder's centred embedding, the fraction of its total variance
explained by each factor's values (the between-group sum of squares of that factor alone);
F spreads its variance over the factors it holds (the bad views' F of a picture: background,
shape, colour, size; position is outside it). The caption side's nuisance (its template) is
not in states.json: it is what is left of the caption's shares.
SIGReg of the whitened embedding: LeJEPA's statistic (`prh-native sigreg`, 256 slices) of
each encoder's embedding whitened on itself (zero mean, identity covariance), so it measures
only how far the distribution is from Gaussian beyond its covariance, image / caption.
"""
import json
import os
import subprocess
import sys

import numpy as np

demo, out = sys.argv[1], sys.argv[2]
states = json.load(open(os.path.join(demo, "embeddings", "states.json")))
FACTORS = ["shape", "colour", "size", "position"]
labels = {f: np.array([s["state"][i] for s in states]) for i, f in enumerate(FACTORS)}
labels["background"] = np.array([s["background"] for s in states])


def mutual_knn(a, b, k=10):
    def nn(x):
        x = x - x.mean(0)
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
        s = x @ x.T
        np.fill_diagonal(s, -np.inf)
        return np.argsort(-s, axis=1)[:, :k]

    na, nb = nn(a), nn(b)
    return np.mean([len(set(na[i]) & set(nb[i])) / k for i in range(len(a))])


def shares(x):
    x = x - x.mean(0)
    total = (x**2).sum()
    res = {}
    for f, lab in labels.items():
        m = np.zeros_like(x)
        for v in set(lab.tolist()):
            m[lab == v] = x[lab == v].mean(0)
        res[f] = (m**2).sum() / total
    return res


def whitened_sigreg(x, path):
    x = x - x.mean(0)
    w, v = np.linalg.eigh(x.T @ x / len(x))
    w = np.maximum(w, 1e-12 * w.max())
    np.save(path, (x @ v @ np.diag(w**-0.5) @ v.T).astype(np.float32))
    binary = os.environ.get("PRH_NATIVE", "target/release/prh-native")
    res = subprocess.run([binary, "sigreg", path, "--json", "--quiet"], capture_output=True, text=True, check=True)
    return json.loads(res.stdout)["sigreg"]


def last_eval(run):
    ev = [json.loads(l) for l in open(os.path.join(run, "metrics.jsonl"))]
    ev = [d for d in ev if "eval" in d]
    return ev[-1]["step"], ev[-1]["eval"]


rows = [("symbols, spectral (the demo's)", demo, "symbolic_spectral_bad"), ("renderings, spectral (the demo's)", demo, "spectral_bad")]
names = sorted({n.rsplit("-", 1)[0] for n in os.listdir(out) if n.endswith("-image")})
rows += [(n, out, n) for n in names]
print("| pair | steps image / caption | mutual 10-NN | CKA to F | sin-theta to F | image variance: shape, colour, size, position, background | caption: shape, colour, size, position | SIGReg, whitened |")
print("|---|---|---|---|---|---|---|---|")
for title, root, stem in rows:
    sep = "_" if root == demo else "-"
    runs = [os.path.join(root, f"{stem}{sep}{s}") for s in ("image", "text")]
    if not all(os.path.isdir(r) for r in runs):
        continue
    x, y = (np.load(os.path.join(r, "embeddings.npy")) for r in runs)
    (si, ei), (st, et) = last_eval(runs[0]), last_eval(runs[1])
    sx, sy = shares(x), shares(y)
    gx, gy = (whitened_sigreg(e, os.path.join(out, f"white-{stem}-{s}.npy")) for e, s in ((x, "image"), (y, "text")))
    print(
        f"| {title} | {si} / {st} | {mutual_knn(x, y):.3f} | {ei['cka_to_theory']:.3f} / {et['cka_to_theory']:.3f} "
        f"| {ei['sin_theta_to_theory']:.2f} / {et['sin_theta_to_theory']:.2f} "
        f"| {', '.join(f'{sx[f]:.2f}' for f in FACTORS + ['background'])} "
        f"| {', '.join(f'{sy[f]:.2f}' for f in FACTORS)} | {gx:.2f} / {gy:.2f} |"
    )
