#!/usr/bin/env python3
"""`clgrad train --model transformer` in PyTorch (on the CPU, or a CUDA GPU with --device cuda), the same workload for side-by-side
figures: the same text file, vocabulary (the sorted set of bytes), 90/10 split and non-overlapping
next-token windows of --seq-len; the same model (token + position embeddings, pre-norm blocks of
causal multi-head attention with separate q/k/v/out projections and an exact-GELU MLP of width 4D,
a final layer norm, a linear head), Adam, batch and learning rate. One JSON object per epoch with
the fields of clgrad's --log (val_loss, epoch_seconds, samples_per_s: windows a second).

usage: pytorch_transformer.py [--data FILE] [--epochs N] [--batch N] [--lr X] [--limit N]
                              [--seq-len T] [--dim D] [--heads H] [--layers L] [--threads N]
                              [--device cpu|cuda]
"""
import argparse, json, math, time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):  # (B, T, D)
        B, T, D = x.shape
        h = self.ln1(x)
        split = lambda t: t.view(B, T, self.heads, D // self.heads).transpose(1, 2)  # (B, H, T, Dh)
        a = F.scaled_dot_product_attention(split(self.q(h)), split(self.k(h)), split(self.v(h)), is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(B, T, D))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Transformer(nn.Module):
    def __init__(self, vocab, d, heads, layers, seq_len):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq_len, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)

    def forward(self, idx):  # (B, T) -> (B * T, vocab)
        x = self.tok(idx) + self.pos.weight[: idx.shape[1]]
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x)).view(-1, self.head.out_features)


def windows(ids, t):
    n = (len(ids) - 1) // t
    x = ids[: n * t].view(n, t)
    y = ids[1 : n * t + 1].view(n, t)
    return x, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/common-licenses/GPL-3")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--limit", type=int, default=0, help="training windows (0: all)")
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default="cpu", help="cpu or cuda (PyTorch's own GPU backend)")
    a = p.parse_args()
    dev = torch.device(a.device)
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    raw = open(a.data, "rb").read()
    vocab = sorted(set(raw))
    id_of = {b: i for i, b in enumerate(vocab)}
    ids = torch.tensor([id_of[b] for b in raw], dtype=torch.long)
    n_train = len(ids) - math.floor(len(ids) * 0.1)
    xs, ys = windows(ids[:n_train], a.seq_len)
    vx, vy = windows(ids[n_train:], a.seq_len)
    if a.limit:
        xs, ys = xs[: a.limit], ys[: a.limit]
    xs, ys, vx, vy = (t.to(dev) for t in (xs, ys, vx, vy))  # clgrad uploads each batch; PyTorch gets it free
    model = Transformer(len(vocab), a.dim, a.heads, a.layers, a.seq_len).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    for epoch in range(1, a.epochs + 1):
        model.train()
        t0 = time.perf_counter()  # the shuffle counts, as in clgrad's epoch
        perm = torch.randperm(len(xs), device=dev)
        total, steps = 0.0, 0
        for s in range(0, len(xs), a.batch):
            i = perm[s : s + a.batch]
            loss = F.cross_entropy(model(xs[i]), ys[i].reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.item()
            steps += 1
        secs = time.perf_counter() - t0
        model.eval()
        with torch.no_grad():
            val = sum(F.cross_entropy(model(vx[s : s + 256]), vy[s : s + 256].reshape(-1), reduction="sum").item()
                      for s in range(0, len(vx), 256)) / vy.numel()
        print(json.dumps({"epoch": epoch, "model": "transformer", "device": f"pytorch {torch.__version__} "
                          + (torch.cuda.get_device_name(dev) if dev.type == "cuda" else
                             f"cpu, {torch.get_num_threads()} threads"), "train_loss": total / steps, "val_loss": val,
                          "epoch_seconds": secs, "samples_per_s": len(xs) / secs, "steps": steps}), flush=True)


if __name__ == "__main__":
    main()
