"""When can pair-free matching work? A planted study on ImageNet-100 (issue 20).

A = EfficientNet-Lite0's classifier rows of the 100 ImageNet-100 classes (centred, unit
rows). B = unit rows of  beta * A Q + (1 - beta) * G  (Q a random rotation, G Gaussian
rows, centred and unit): a second "modality" that shares A's geometry to a degree set by
beta. For each beta it prints the Pearson correlation of the two cosine kernels'
off-diagonal entries (how much geometry is shared) and what `prh-native match` (hidden
shuffle, entropic GW + FAQ + Procrustes, tabu search from 6 December, 2-opt) recovers: accuracy, and the matching
objective GW of the found pairing and of the true one. GW(truth) > GW(found) means the
truth is not the objective's optimum (no solver could find it); GW(truth) < GW(found)
means the solver stopped short. The last row is the real pair: TF-IDF of the classes'
"lemmas: definition" (2,048 terms, idf on the 1,000 class texts) against the same rows.

  PRH_DATA=../shared/data python3 -B docs/results/views-vision-matching/planted.py [prh-native]
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter

import numpy as np

DATA = os.environ.get("PRH_DATA", "../shared/data") + "/imagenet/"
NATIVE = sys.argv[1] if len(sys.argv) > 1 else "target/release/prh-native"


def unit_centred(x):
    x = x - x.mean(0)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def tfidf(texts, n_terms=2048):
    toks = [re.findall(r"[a-z0-9]+", t.lower()) for t in texts]
    df = Counter(w for t in toks for w in set(t))
    vocab = {w: i for i, (w, _) in enumerate(df.most_common(n_terms))}
    x = np.zeros((len(texts), len(vocab)))
    for r, t in enumerate(toks):
        for w in t:
            if w in vocab:
                x[r, vocab[w]] += 1
    idf = np.log((1 + len(texts)) / (1 + np.array([df[w] for w in vocab]))) + 1
    return x * idf


def match(a, b, tmp):
    np.save(f"{tmp}/a.npy", a.astype(np.float32))
    np.save(f"{tmp}/b.npy", b.astype(np.float32))
    out = subprocess.run([NATIVE, "match", "--quiet", "--json", f"{tmp}/a.npy", f"{tmp}/b.npy"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def row(label, a, b, tmp):
    ca, cb = a @ a.T, b @ b.T
    iu = np.triu_indices(len(a), 1)
    r = np.corrcoef(ca[iu], cb[iu])[0, 1]
    m = match(a, b, tmp)
    print(f"| {label} | {r:.3f} | {m['accuracy']:.2f} | {m['objective']:.2e} | "
          f"{m['objective_truth']:.2e} | {m['objective_truth'] / m['objective']:.2f} |", flush=True)


rows = [l.rstrip("\n").split("\t") for l in open(DATA + "imagenet1k_classes.tsv")][1:]
wnids = [r[1] for r in rows]
test = [wnids.index(w.strip()) for w in open(DATA + "imagenet100_wnids.txt") if w.strip()]
w = np.load(DATA + "efficientnet_lite0_fc_weight.npy").astype(np.float64)
a = unit_centred(w[test])
rng = np.random.default_rng(0)
q, _ = np.linalg.qr(rng.standard_normal((a.shape[1], a.shape[1])))
g = unit_centred(rng.standard_normal(a.shape))
print("| B | kernel correlation | accuracy | GW found | GW truth | truth/found |")
print("|---|---|---|---|---|---|")
with tempfile.TemporaryDirectory() as tmp:
    for beta in [0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8]:
        row(f"planted, beta {beta}", a, unit_centred(beta * a @ q + (1 - beta) * g), tmp)
    t = tfidf([r[2] + ": " + r[3] for r in rows])
    row("TF-IDF class texts (real)", unit_centred(t[test]), a, tmp)
