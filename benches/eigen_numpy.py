#!/usr/bin/env python3
"""Reference timing for `prh-native bench eigen`: full symmetric eigendecomposition
(eigenvalues and eigenvectors, numpy.linalg.eigh = LAPACK syevd) of the very matrices the
Rust side timed, read from .npy files.

    python3 benches/eigen_numpy.py --repeats 3 k250.npy k500.npy

Prints one JSON object: numpy version, BLAS name, and per file n, the median wall time in
seconds and the eigenvalues in decreasing order (so the caller can check both solvers agree).
Thread count is whatever the caller put in OMP_NUM_THREADS / OPENBLAS_NUM_THREADS.
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per matrix (median reported)")
    ap.add_argument("--matmul", type=int, default=0,
                    help="also time an n x n float64 matmul (the machine's practical peak)")
    ap.add_argument("files", nargs="*", help=".npy files, each a symmetric [n, n] matrix")
    args = ap.parse_args()
    blas = "unknown"
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]["name"]
    except Exception:  # older numpy: no dict mode; the name is informational only
        pass
    results = []
    for path in args.files:
        k = np.load(path)
        if k.ndim != 2 or k.shape[0] != k.shape[1]:
            sys.exit(f"{path}: expected a square matrix, got shape {k.shape}")
        np.linalg.eigh(k)  # warm-up: first call pays for thread pools and page faults
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            w, _ = np.linalg.eigh(k)
            times.append(time.perf_counter() - t0)
        results.append({"file": path, "n": k.shape[0], "median_s": statistics.median(times),
                        "eigenvalues": w[::-1].tolist()})
    out = {"numpy": np.__version__, "blas": blas, "results": results}
    if args.matmul > 0:
        # Peak: C = A B for random n x n float64, 2 n^3 flops, median of the timed runs.
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal((2, args.matmul, args.matmul))
        a @ b
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            a @ b
            times.append(time.perf_counter() - t0)
        out["matmul"] = {"n": args.matmul, "median_s": statistics.median(times)}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
