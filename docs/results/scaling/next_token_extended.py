"""Next-token on the vision measure at 65,536 and 131,072 samples (issue 20, 6 December).

The 8-budget scaling run (results.json beside this file) stopped next-token at 32,768
samples (256 steps of batch 128; a step of its 8,000-way softmax costs ~1 s on 2 cores),
where its curve was still rising, so "the samples good views need to reach next-token's
best" had no best to aim at. next-token-1024/ holds the same objective, config and seeds
at 512 and 1,024 steps (each run its own warmup and cosine schedule, as every budget of
the 8-budget run), trained by the command in its results.json; its runs at 1 and 2 steps
only satisfy the experiment's law check (>= 4 budgets) and are not used here.

This merges the two, prints next-token's curve over 10 budgets beside good views', the
two objectives at equal samples, and the samples (and tokens) good views need to reach
next-token's best, with a seed bootstrap exactly as `experiment scaling` computes it
(native/src/cmd/experiment/scaling.rs: `efficiency`, `observed_crossing`,
`bootstrap_ratio`; numpy's generator, so the range differs from the Rust one in its last
digits). Run (no training; from any folder):
  python3 -B docs/results/scaling/next_token_extended.py
"""
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
base = json.load(open(os.path.join(HERE, "results.json")))
ext = json.load(open(os.path.join(HERE, "next-token-1024", "results.json")))


def curve(points, objective, min_samples=0.0):
    """{samples: [mutual k-NN per seed, in seed order]} and tokens per sample."""
    pts = [p for p in points if p["objective"] == objective and p["samples"] >= min_samples]
    by = {}
    for p in sorted(pts, key=lambda p: (p["samples"], p["seed"])):
        by.setdefault(p["samples"], []).append(p["scores"]["mutual_knn"])
    tok = float(np.mean([p["tokens"] / p["samples"] for p in pts]))
    return by, tok


good, good_tok = curve(base["points"], "good")
nt, nt_tok = curve(base["points"], "next-token")
nt_ext, nt_ext_tok = curve(ext["points"], "next-token", min_samples=65536.0)
assert set(nt_ext) == {65536.0, 131072.0}, sorted(nt_ext)
nt.update(nt_ext)
seeds = {len(v) for v in list(good.values()) + list(nt.values())}
assert seeds == {3}, seeds


def observed_crossing(samples, y, target):
    """First budget whose mean reaches `target`, interpolated linearly in ln samples."""
    for i, v in enumerate(y):
        if v >= target:
            if i == 0:
                return samples[0]
            f = (target - y[i - 1]) / (y[i] - y[i - 1])
            return float(np.exp(np.log(samples[i - 1]) + f * (np.log(samples[i]) - np.log(samples[i - 1]))))
    return None


def ratio(g_samples, g_y, n_samples, n_y):
    bi = int(np.argmax(n_y))
    s = observed_crossing(g_samples, g_y, n_y[bi])
    return (None if s is None else n_samples[bi] / s), bi, s


gs, ns = sorted(good), sorted(nt)
gy = [float(np.mean(good[n])) for n in gs]
ny = [float(np.mean(nt[n])) for n in ns]
print("| samples | good views (seed mean [range]) | next-token (seed mean [range]) |")
print("|---|---|---|")
for n in sorted(set(gs) | set(ns)):
    cell = lambda c: f"{np.mean(c[n]):.4f} [{min(c[n]):.4f}, {max(c[n]):.4f}]" if n in c else ""
    print(f"| {int(n):,} | {cell(good)} | {cell(nt)} |")
print(f"tokens per sample: good {good_tok:.2f}, next-token {nt_tok:.2f} (extension {nt_ext_tok:.2f})")
for n in (65536.0, 131072.0):
    print(f"at {int(n):,} samples: good {np.mean(good[n]):.4f} vs next-token {np.mean(nt[n]):.4f}: "
          f"{np.mean(good[n]) / np.mean(nt[n]):.2f}x; ranges apart: {min(good[n]) > max(nt[n])}")
r, bi, s = ratio(gs, gy, ns, ny)
print(f"next-token's best: {ny[bi]:.4f} at {int(ns[bi]):,} samples; good views reach it at {s:,.0f} "
      f"samples: {r:.1f}x fewer samples, {r * nt_tok / good_tok:.1f}x fewer tokens")
# Seed bootstrap, as bootstrap_ratio: resample each objective's seeds with replacement.
rng = np.random.default_rng(0)
ratios, none = [], 0
G = np.array([good[n] for n in gs])
N = np.array([nt[n] for n in ns])
for _ in range(2000):
    gm = G[:, rng.integers(0, 3, 3)].mean(1)
    nm = N[:, rng.integers(0, 3, 3)].mean(1)
    rr = ratio(gs, list(gm), ns, list(nm))[0]
    if rr is None:
        none += 1
    else:
        ratios.append(rr)
lo, hi = np.quantile(ratios, [0.025, 0.975])
print(f"seed bootstrap (2,000 draws): {lo:.1f}x to {hi:.1f}x fewer samples "
      f"({lo * nt_tok / good_tok:.1f}x to {hi * nt_tok / good_tok:.1f}x fewer tokens); "
      f"draws without a crossing: {none}")
