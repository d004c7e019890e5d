#!/usr/bin/env python3
"""Reference timing for `prh-native bench metrics`: the same computations in numpy on
the very arrays the Rust side timed, read from .npy files.

    python3 benches/metrics_numpy.py --repeats 3 metrics a768.npy b768.npy
    python3 benches/metrics_numpy.py --repeats 3 procrustes a30k.npy b30k.npy
    python3 benches/metrics_numpy.py --repeats 1 knn a100k.npy b100k.npy
    python3 benches/metrics_numpy.py --repeats 1 --blocks 4 gemm a200k.npy b200k.npy

`metrics`: the full PRH metric run (clamp at the 0.95 quantile of |x|, row L2
normalisation, Gram matrices, top-k with the diagonal excluded, mutual/cycle/LCS k-NN,
linear and RBF CKA, unbiased CKA, CKNNA, a 100-shuffle mutual k-NN null), vectorised
numpy following the PRH `metrics.py` formulas. `procrustes`: Q = U V^T from the SVD of
A^T B and the residual ||A Q - B||_F. `knn`: exact k-NN search at large N, the way one
writes it in numpy without faiss: per side, rows in blocks of 2,048, the block's Gram rows
X_b X^T, the diagonal excluded, argpartition + sort for the top 10, then mutual 10-NN; it
also reports `gemm_s`, the time of the Gram products alone (the GEMM bound of any exact
k-NN). `gemm`: where the whole `knn` run would take too long (N = 200,000: an hour),
`--blocks` evenly spaced 2,048-row blocks per side are timed and `gemm_s` extrapolated to
all blocks (time per row x N per side), with the f64 matmul peak of the machine (best of
3 square 2,048 products) beside it. Inputs are float32 files computed on in float64.

Prints one JSON object: numpy version, BLAS name, median wall time (s) and the values, so
the caller can check both implementations agree. Threads: whatever the caller put in
OMP_NUM_THREADS / OPENBLAS_NUM_THREADS.
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np

from blas_info import blas_info


def prep(x, q=0.95):
    t = np.partition(np.abs(x).ravel(), int(q * x.size))[int(q * x.size)]
    x = np.clip(x, -t, t)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def topk(g, k):
    g = g.copy()
    np.fill_diagonal(g, -np.inf)
    part = np.argpartition(-g, k, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(g, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def mask_of(idx, n):
    m = np.zeros((n, n))
    np.put_along_axis(m, idx, 1.0, axis=1)
    return m


def hsic_biased(k, l):
    # tr(K H L H) = sum((H K H) * L^T), with H K H by row/column means.
    kc = k - k.mean(0, keepdims=True) - k.mean(1, keepdims=True) + k.mean()
    return np.sum(kc * l.T)


def hsic_unbiased(k, l):
    m = k.shape[0]
    kt, lt = k.copy(), l.copy()
    np.fill_diagonal(kt, 0)
    np.fill_diagonal(lt, 0)
    v = np.sum(kt * lt.T) + kt.sum() * lt.sum() / ((m - 1) * (m - 2)) - 2 * kt.sum(0) @ lt.sum(1) / (m - 2)
    return v / (m * (m - 3))


def ratio(f, k, l):
    return f(k, l) / (np.sqrt(f(k, k) * f(l, l)) + 1e-6)


def lcs(x, y):
    prev = [0] * (len(y) + 1)
    for xi in x:
        cur = [0] * (len(y) + 1)
        for j, yj in enumerate(y):
            cur[j + 1] = prev[j] + 1 if xi == yj else max(prev[j + 1], cur[j])
        prev = cur
    return prev[-1]


def metrics(a_raw, b_raw, k=10, shuffles=100, sigma=1.0):
    a, b = prep(a_raw), prep(b_raw)
    n = a.shape[0]
    ka, kb = a @ a.T, b @ b.T
    na, nb = topk(ka, k), topk(kb, k)
    ma, mb = mask_of(na, n), mask_of(nb, n)
    out = {"mutual_knn": float((ma * mb).sum() / (n * k))}
    out["cycle_knn"] = float(np.mean((na[nb] == np.arange(n)[:, None, None]).reshape(n, -1).any(1)))
    out["lcs_knn"] = float(np.mean([lcs(na[i].tolist(), nb[i].tolist()) for i in range(n)]))
    out["cka"] = float(ratio(hsic_biased, ka, kb))
    da = np.maximum(np.diag(ka)[:, None] + np.diag(ka)[None, :] - 2 * ka, 0)
    db = np.maximum(np.diag(kb)[:, None] + np.diag(kb)[None, :] - 2 * kb, 0)
    out["cka_rbf"] = float(ratio(hsic_biased, np.exp(-da / (2 * sigma**2)), np.exp(-db / (2 * sigma**2))))
    out["unbiased_cka"] = float(ratio(hsic_unbiased, ka, kb))
    both = ma * mb
    out["cknna"] = float(
        hsic_unbiased(both * ka, both * kb)
        / (np.sqrt(hsic_unbiased(ma * ka, ma * ka) * hsic_unbiased(mb * kb, mb * kb)) + 1e-6)
    )
    rng = np.random.default_rng(0)
    null = []
    for _ in range(shuffles):
        p = rng.permutation(n)
        null.append((ma * mb[p][:, p]).sum() / (n * k))
    out["null_mutual_knn_mean"] = float(np.mean(null))
    return out


KNN_BLOCK = 2048


def knn_blocked(a_raw, b_raw, k=10):
    gemm_s = 0.0
    lists = []
    for raw in (a_raw, b_raw):
        x = prep(raw)
        n = x.shape[0]
        idx = np.empty((n, k), dtype=np.int64)
        for i0 in range(0, n, KNN_BLOCK):
            i1 = min(n, i0 + KNN_BLOCK)
            t0 = time.perf_counter()
            g = x[i0:i1] @ x.T
            gemm_s += time.perf_counter() - t0
            g[np.arange(i1 - i0), np.arange(i0, i1)] = -np.inf
            part = np.argpartition(-g, k, axis=1)[:, :k]
            order = np.argsort(-np.take_along_axis(g, part, axis=1), axis=1, kind="stable")
            idx[i0:i1] = np.take_along_axis(part, order, axis=1)
        lists.append(idx)
    na, nb = lists
    n = na.shape[0]
    hits = sum(len(np.intersect1d(na[i], nb[i], assume_unique=True)) for i in range(n))
    return {"mutual_knn": hits / (n * k), "gemm_s": gemm_s}


def gemm_sampled(a_raw, b_raw, blocks=4):
    per_row = []
    for raw in (a_raw, b_raw):
        x = prep(raw)
        n = x.shape[0]
        starts = np.linspace(0, max(n - KNN_BLOCK, 0), blocks).astype(int)
        t, rows = 0.0, 0
        for i0 in starts:
            i1 = min(n, i0 + KNN_BLOCK)
            t0 = time.perf_counter()
            g = x[i0:i1] @ x.T
            t += time.perf_counter() - t0
            rows += i1 - i0
            del g
        per_row.append((t / rows, n, x.shape[1]))
    gemm_s = sum(r * n for r, n, _ in per_row)
    flops = sum(2.0 * n * n * d for _, n, d in per_row)
    m = np.random.default_rng(0).standard_normal((2048, 2048))
    best = min(_timed(lambda: m @ m) for _ in range(3))
    return {
        "gemm_s": gemm_s,
        "gemm_gflops": flops / gemm_s / 1e9,
        "blocks_timed_per_side": int(blocks),
        "peak_gflops_f64": 2.0 * 2048**3 / best / 1e9,
    }


def _timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def procrustes(a, b):
    u, _, vt = np.linalg.svd(a.T @ b, full_matrices=False)
    q = u @ vt
    return {"relative_residual": float(np.linalg.norm(a @ q - b) / np.linalg.norm(b))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="timed runs (median reported)")
    ap.add_argument("--blocks", type=int, default=4, help="`gemm`: blocks timed per side")
    ap.add_argument("kind", choices=["metrics", "procrustes", "knn", "gemm"])
    ap.add_argument("a")
    ap.add_argument("b")
    args = ap.parse_args()
    blas = blas_info()
    a = np.load(args.a).astype(np.float64)
    b = np.load(args.b).astype(np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[0]:
        sys.exit(f"expected two [N, D] arrays with one N, got {a.shape} and {b.shape}")
    fn = {"metrics": metrics, "procrustes": procrustes, "knn": knn_blocked,
          "gemm": lambda a, b: gemm_sampled(a, b, args.blocks)}[args.kind]
    # Warm-up, as on the Rust side (not for `knn` / `gemm`: minutes of work at large N).
    values = fn(a, b) if args.kind not in ("knn", "gemm") else None
    times = []
    for _ in range(max(args.repeats, 1)):
        t0 = time.perf_counter()
        values = fn(a, b)
        times.append(time.perf_counter() - t0)
    json.dump({"numpy": np.__version__, "blas": blas, "median_s": statistics.median(times), "values": values},
              sys.stdout)


if __name__ == "__main__":
    main()
