"""Paired embeddings for the device check: N rows of A and B in D = 768, both a shared
64-dim latent z through their own random map plus independent noise, drawn on the GPU
(torch) and saved as float32 .npy.   python3 pairs.py OUT_DIR N [N ...]"""
import sys

import numpy as np
import torch

out, sizes = sys.argv[1], [int(s) for s in sys.argv[2:]]
dev = "cuda" if torch.cuda.is_available() else "cpu"
g = torch.Generator(device=dev).manual_seed(0)
d, latent, noise = 768, 64, 8.0
maps = [torch.randn(latent, d, device=dev, generator=g) for _ in range(2)]
for n in sizes:
    z = torch.randn(n, latent, device=dev, generator=g)
    for name, w in zip("ab", maps):
        x = z @ w + noise * torch.randn(n, d, device=dev, generator=g)
        np.save(f"{out}/{name}{n}.npy", x.cpu().numpy().astype(np.float32))
    print(f"N = {n}: a{n}.npy, b{n}.npy [{n} x {d}] float32")
