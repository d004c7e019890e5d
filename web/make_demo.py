"""Writes the Alignment lab's demo sets demo_a.npy / demo_b.npy (synthetic, seeded).

Two "modalities" observe the same 300 world states: a latent z in R^8 drawn around 6
cluster centres. A renders z linearly into 32 dimensions; B renders it through a
different random linear map and a tanh into 24 dimensions; each adds its own noise.
So A and B share the world's structure (high mutual k-NN, CKA) without being the same
space. Run: python3 web/make_demo.py
"""
import os
import numpy as np

rng = np.random.default_rng(7)
n, latent, clusters = 300, 8, 6
centres = rng.normal(size=(clusters, latent)) * 2.0
labels = rng.integers(0, clusters, size=n)
z = centres[labels] + rng.normal(size=(n, latent))
a = z @ rng.normal(size=(latent, 32)) + 0.5 * rng.normal(size=(n, 32))
b = np.tanh(0.3 * z @ rng.normal(size=(latent, 24))) + 0.1 * rng.normal(size=(n, 24))
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets")
np.save(os.path.join(here, "demo_a.npy"), a.astype(np.float32))
np.save(os.path.join(here, "demo_b.npy"), b.astype(np.float32))
print("wrote demo_a.npy", a.shape, "demo_b.npy", b.shape)
