"""Can any solver match the demo's pictures to their captions without pairs? (issue 19/23)

Pair-free matching looks for the pairing sigma that minimises
  GW(sigma) = (1/n^2) sum_ij (C_A[i, j] - C_B[sigma i, sigma j])^2,   C = X X^T of unit rows
(`prh-native match`, `measure::matching`). It can only find the truth if the truth is the
minimum. The scene world is nearly symmetric: relabelling a factor's values (calling every
red object blue and every blue one red) changes its geometry only through the values'
prior probabilities p_i(z_i). This script scores the truth against every relabelling of
the world's values (4! x 4! x 3! x 4! = 82,944 permutations of the 192 states) on one
demo folder's paired embeddings, and prints how many fit the two geometries better than
the truth. If any does, no solver can recover the pairing from these two clouds, and the
pair-free map captions with the wrong values.

Run (no training; ~1 minute per pair):
  python3 -B docs/results/captioner/relabellings.py DEMO_FOLDER [PAIR ...]
PAIR: spectral_good (default), sigreg_good, symbolic_spectral_good, ... (the
embeddings/ file stems without _image / _text). Needs the demo's default world (192 states,
cardinalities 4, 4, 3, 4, in the order of embeddings/states.json).
"""
import itertools
import json
import os
import sys

import numpy as np

CARD = [4, 4, 3, 4]


def unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    demo = sys.argv[1]
    pairs = sys.argv[2:] or ["spectral_good"]
    states = json.load(open(os.path.join(demo, "embeddings", "states.json")))
    if len(states) != int(np.prod(CARD)):
        sys.exit(f"{demo}: {len(states)} states, this check needs the demo's 192")
    idx = np.arange(len(states)).reshape(CARD)
    relabellings = list(itertools.product(*[list(itertools.permutations(range(c))) for c in CARD]))
    for pair in pairs:
        a = unit(np.load(os.path.join(demo, "embeddings", f"{pair}_image.npy")))
        b = unit(np.load(os.path.join(demo, "embeddings", f"{pair}_text.npy")))
        ca, cb = a @ a.T, b @ b.T

        def gw(perm):
            return float(((ca - cb[np.ix_(perm, perm)]) ** 2).mean())

        truth = gw(np.arange(len(states)))
        scores = []
        for ps in relabellings:
            perm = idx[np.ix_(*[list(p) for p in ps])].reshape(-1)
            scores.append((gw(perm), ps))
        scores.sort(key=lambda s: s[0])
        better = sum(1 for s, _ in scores if s < truth)
        best, ps = scores[0]
        moved = [f"{['shape', 'colour', 'size', 'position'][i]} {p}" for i, p in enumerate(ps) if list(p) != list(range(len(p)))]
        print(
            f"{pair}: GW(truth) {truth:.5f}; {better} of {len(relabellings)} value relabellings fit better; "
            f"best {best:.5f} (truth / best {truth / best:.2f}), relabelling {', '.join(moved) or 'none'}"
        )


if __name__ == "__main__":
    main()
