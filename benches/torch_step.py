#!/usr/bin/env python3
"""PyTorch reference for prh's text-JEPA training step (`prh-native bench train`).

One step = the same stages as prh_core::train on the same shapes: token + position
embeddings, pre-LN transformer encoder (GELU, no dropout), final LayerNorm, mean pooling
over non-pad tokens, invariance (MSE of every view to the mean of the globals), SIGReg
(Epps-Pulley, t = linspace(0, 3, 17), folded trapezoid weights x exp(-t^2/2)), backward,
global grad-norm clip 1.0, AdamW(lr 5e-4, wd 0.05). Rows are view-major (rows v*n..(v+1)*n
are view v), every sequence has exactly `--len` tokens (no padding), as in the bench's prh
side. Prints one JSON line: per-step seconds (after `--warmup` untimed steps), their
median, tokens/s at the median, and the thread count; with `--peak N` also the best of 3
f32 N x N matmuls in GFLOP/s (2 N^3 flops each). `--device cuda` runs everything on the GPU
(random draws stay on the CPU generator and are copied over, so the sequences are the
same; each timed step and matmul ends with `torch.cuda.synchronize()`).

    python3 benches/torch_step.py --d 64 --layers 2 --heads 4 --dff 128 --seqs 256 --len 12 --steps 5
"""
import argparse, json, statistics, time

try:
    import torch
    import torch.nn as nn
except ImportError:  # the bench reports this instead of a number
    print(json.dumps({"error": "torch is not importable (pip install torch)"}))
    raise SystemExit(0)


def sigreg(z, slices, gen):
    n, d = z.shape
    dev = z.device
    a = torch.randn(d, slices, generator=gen).to(dev)
    a = a / a.norm(dim=0, keepdim=True)
    t = torch.linspace(0, 3, 17, device=dev)
    dt = 3 / 16
    w = torch.full((17,), 2 * dt, device=dev)
    w[0] = w[-1] = dt
    phi = torch.exp(-0.5 * t**2)
    w = w * phi
    x = (z @ a).unsqueeze(-1) * t  # (n, m, k)
    err = (x.cos().mean(0) - phi) ** 2 + x.sin().mean(0) ** 2
    return (err @ w * n).mean()


def sync(dev):
    """Waits for queued GPU work (a no-op on the CPU)."""
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def peak_gflops(n, dev):
    """Best of 3 f32 (n x n) @ (n x n) products, in GFLOP/s (2 n^3 flops each)."""
    a, b = torch.randn(n, n, device=dev), torch.randn(n, n, device=dev)
    a @ b  # warm-up
    sync(dev)
    best = min(_timed(lambda: a @ b, dev) for _ in range(3))
    return 2 * n**3 / best / 1e9


def _timed(f, dev):
    t0 = time.perf_counter()
    f()
    sync(dev)
    return time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser()
    for k, v in dict(d=64, layers=2, heads=4, dff=128, vocab=2000, seqs=256, len=12, views=8,
                     n_global=2, slices=64, steps=5, warmup=2, threads=0, peak=0,
                     device="cpu").items():
        p.add_argument(f"--{k.replace('_', '-')}", type=type(v), default=v)
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    dev = torch.device(a.device)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    tok = nn.Embedding(a.vocab, a.d).to(dev)
    pos = nn.Embedding(64, a.d).to(dev)
    layer = nn.TransformerEncoderLayer(a.d, a.heads, a.dff, dropout=0.0, activation="gelu",
                                       batch_first=True, norm_first=True)
    enc = nn.TransformerEncoder(layer, a.layers, enable_nested_tensor=False).to(dev)
    norm = nn.LayerNorm(a.d).to(dev)
    params = [*tok.parameters(), *pos.parameters(), *enc.parameters(), *norm.parameters()]
    opt = torch.optim.AdamW(params, lr=5e-4, weight_decay=0.05)
    n = a.seqs // a.views
    times = []
    for step in range(a.steps + a.warmup):
        ids = torch.randint(5, a.vocab, (a.seqs, a.len), generator=gen).to(dev)
        pad = torch.zeros(a.seqs, a.len, dtype=torch.bool, device=dev)
        sync(dev)
        t0 = time.perf_counter()
        x = tok(ids) + pos(torch.arange(a.len, device=dev)).unsqueeze(0)
        h = norm(enc(x, src_key_padding_mask=pad))
        keep = (~pad).float().unsqueeze(-1)
        z = (h * keep).sum(1) / keep.sum(1)
        views = z.view(a.views, n, a.d)
        centre = views[: a.n_global].mean(0, keepdim=True)
        inv = ((views - centre) ** 2).mean()
        sig = sum(sigreg(views[v], a.slices, gen) for v in range(a.views)) / a.views
        loss = inv + 0.02 * sig
        loss.item()  # prh reads the loss before backward (NaN guard)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sync(dev)
        if step >= a.warmup:
            times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    out = {"tokens_per_s": a.seqs * a.len / med, "median_s": med, "step_s": times,
           "torch": torch.__version__, "threads": torch.get_num_threads(), "device": str(dev),
           "params": sum(q.numel() for q in params)}
    if a.peak:
        out["peak_gflops"] = peak_gflops(a.peak, dev)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
