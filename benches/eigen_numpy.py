#!/usr/bin/env python3
"""Reference timing for `prh-native bench eigen`: full symmetric eigendecomposition
(eigenvalues and eigenvectors, numpy.linalg.eigh = LAPACK syevd) of the very matrices the
Rust side timed, read from .npy files.

    python3 benches/eigen_numpy.py --repeats 3 k250.npy k500.npy

Prints one JSON object: numpy version, BLAS name, and per file n, the median wall time in
seconds and the eigenvalues in decreasing order (so the caller can check both solvers agree).
Thread count is whatever the caller put in OMP_NUM_THREADS / OPENBLAS_NUM_THREADS.

With --top D it also times the two ways scipy offers for only the top D eigenpairs:
scipy.sparse.linalg.eigsh (ARPACK's implicitly restarted Lanczos, on the dense matrix,
which='LA', tol as given) and scipy.linalg.eigh(subset_by_index=...) (LAPACK syevr: full
tridiagonal reduction, then only D eigenvectors).
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np

from blas_info import blas_info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per matrix (median reported)")
    ap.add_argument("--matmul", type=int, default=0,
                    help="also time an n x n float64 matmul (the machine's practical peak)")
    ap.add_argument("--top", type=int, default=0, help="also time the top-D solvers (0: skip)")
    ap.add_argument("--tol", type=float, default=1e-10, help="eigsh's relative tolerance")
    ap.add_argument("files", nargs="*", help=".npy files, each a symmetric [n, n] matrix")
    args = ap.parse_args()
    blas = blas_info()
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
        res = {"file": path, "n": k.shape[0], "median_s": statistics.median(times),
               "eigenvalues": w[::-1].tolist()}
        if args.top > 0:
            res["top"] = top(k, args.top, args.tol, args.repeats)
        results.append(res)
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


def top(k, d, tol, repeats):
    """Median times and eigenvalues (decreasing) of scipy's two top-d routes."""
    import scipy
    import scipy.linalg
    import scipy.sparse.linalg

    n = k.shape[0]
    out = {"scipy": scipy.__version__}
    for name, f in [
        # v0 fixed so repeated runs do the same work (ARPACK's default start is random).
        ("eigsh", lambda: scipy.sparse.linalg.eigsh(k, k=d, which="LA", tol=tol, v0=np.ones(n))[0]),
        ("subset", lambda: scipy.linalg.eigh(k, subset_by_index=[n - d, n - 1], eigvals_only=False)[0]),
    ]:
        f()
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            w = f()
            times.append(time.perf_counter() - t0)
        out[name] = {"median_s": statistics.median(times), "eigenvalues": sorted(w.tolist(), reverse=True)}
    return out


if __name__ == "__main__":
    main()
