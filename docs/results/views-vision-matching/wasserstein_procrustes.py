"""Is the QAP objective the obstacle? Pair-free matching as Wasserstein-Procrustes (issue 20).

prh's matcher scores a pairing by how well the two cosine kernels agree (a quadratic
assignment problem). On the trained encoders the true pairing is not that objective's
optimum (GW truth/found 1.13). A different pair-free objective could still single it out,
so this script tries the usual alternative from unsupervised word translation
(Grave et al. 2019; Alvarez-Melis & Jaakkola 2018): a linear orthogonal map Q and a pairing
P together,

    min_{Q orthogonal, P permutation}  -(1/n) sum_i <x_i Q, y_{P(i)}>,

solved by alternating P (Hungarian) and Q (Procrustes), plain (hard) or annealed (Sinkhorn
couplings from eps 0.5 down to 0.01, then hard). Rows: each side centred, reduced by its
own PCA to d dimensions (fitted on that side alone: no pairs), unit norm. It uses all
1,000 ImageNet classes as one unpaired set on each side (more points constrain Q more
than ImageNet-100's 100 do) and reports the accuracy over the 900 non-ImageNet-100 classes
(val) and the 100 ImageNet-100 ones (test).

For each d it prints the objective of the truth's basin (alternation started at the
Procrustes fit on the true pairs, the best a search could hope to land in) and of the best
of 5 annealed random starts. If the second is lower, the truth is not this objective's
optimum either, and a better search cannot help.

  python3 -B docs/results/views-vision-matching/wasserstein_procrustes.py CLASS_TEXTS_NPY
CLASS_TEXTS_NPY: a views-vision run's exported text embeddings of the 1,000 class texts,
`OUT/export/good.class_texts.npy` of `prh-native experiment views-vision --out OUT --data
../shared/data --set 'experiment.objectives=["good"]' --set 'experiment.seeds=[0]'` (docs/results.md shows
the configured 800 steps and `--set train.run.steps=4096`). Data from PRH_DATA (default ../shared/data). Single-threaded BLAS: ~4 minutes.
"""
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402
from scipy.optimize import linear_sum_assignment  # noqa: E402

DATA = os.environ.get("PRH_DATA", "../shared/data") + "/imagenet/"


def classes():
    rows = [line.rstrip("\n").split("\t") for line in open(DATA + "imagenet1k_classes.tsv")]
    col = rows[0].index("wnid")
    wnids = [r[col] for r in rows[1:]]
    in100 = {line.strip() for line in open(DATA + "imagenet100_wnids.txt") if line.strip()}
    test = np.array([i for i, w in enumerate(wnids) if w in in100])
    val = np.array([i for i, w in enumerate(wnids) if w not in in100])
    return val, test


def prep(x, d):
    """Centre, project on this side's own top-d principal axes, unit rows."""
    x = x - x.mean(0)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    x = x @ vt[:d].T
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def procrustes(a, b):
    u, _, vt = np.linalg.svd(a.T @ b)
    return u @ vt


def hard(x, y, q, iters=100):
    """Alternate Hungarian and Procrustes to a fixed point: (objective, pairing)."""
    for _ in range(iters):
        _, col = linear_sum_assignment(-(x @ q @ y.T))
        qn = procrustes(x, y[col])
        if np.allclose(qn, q):
            break
        q = qn
    s = x @ q @ y.T
    row, col = linear_sum_assignment(-s)
    return -s[row, col].mean(), col


def sinkhorn(s, eps, iters=200):
    k = np.exp((s - s.max()) / eps)
    u = np.ones(len(s))
    for _ in range(iters):
        v = 1 / (k.T @ u)
        u = 1 / (k @ v)
    return u[:, None] * k * v[None, :]


def annealed(x, y, q, steps=60):
    for eps in np.geomspace(0.5, 0.01, steps):
        q = procrustes(x, sinkhorn(x @ q @ y.T, eps) @ y)
    return hard(x, y, q)


def main():
    t = np.load(sys.argv[1]).astype(np.float64)
    v = np.load(DATA + "efficientnet_lite0_fc_weight.npy").astype(np.float64)
    val, test = classes()
    print("| d | truth's basin: objective | val acc | test acc | best of 5 annealed starts: objective | val acc | test acc |")
    print("|---|---|---|---|---|---|---|")
    for d in (32, 64, 128):
        x, y = prep(t, d), prep(v, d)
        truth_obj, truth = hard(x, y, procrustes(x, y))
        rng = np.random.default_rng(0)
        best = None
        for _ in range(5):
            q0, _ = np.linalg.qr(rng.normal(size=(d, d)))
            out = annealed(x, y, q0)
            if best is None or out[0] < best[0]:
                best = out
        acc = lambda col, idx: (col[idx] == idx).mean()  # noqa: E731
        print(
            f"| {d} | {truth_obj:.4f} | {acc(truth, val):.3f} | {acc(truth, test):.2f} "
            f"| {best[0]:.4f} | {acc(best[1], val):.3f} | {acc(best[1], test):.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
