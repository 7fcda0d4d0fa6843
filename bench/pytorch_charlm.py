#!/usr/bin/env python3
"""examples/python/charlm.py's own loop in PyTorch on the CPU, for side-by-side figures
(bench/charlm_vs_pytorch.sh): the same text, vocabulary (the sorted set of bytes), 90/10 split and
random windows (numpy's default_rng(0)); the same model (token + position embeddings, pre-norm
blocks of nn.MultiheadAttention with one in-projection and a causal mask, a GELU MLP of width 4D, a
final layer norm, a linear head), float32; AdamW in two groups (no decay for biases and norms),
cosine schedule, gradient clipping at 1; torch's default threads. Prints the same lines as
charlm.py: every --every steps the loss and the windows/s of those steps.

    python bench/pytorch_charlm.py [--steps N] [--dim D] [--layers L] [--heads H] [--threads N]
"""
import argparse
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False, attn_mask=mask, is_causal=True)[0]
        return x + self.mlp(self.ln2(x))


class CharLM(nn.Module):
    def __init__(self, vocab, seq_len, dim, heads, layers):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(seq_len, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):                                    # ids (B, T) int64
        T = ids.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        x = self.tok(ids) + self.pos.weight[:T]
        for b in self.blocks:
            x = b(x, mask)
        return self.head(self.ln(x))                           # (B, T, vocab)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/usr/share/common-licenses/GPL-3")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--every", type=int, default=50)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq-len", type=int, default=64)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    text = open(args.data, "rb").read()
    vocab = sorted(set(text))
    ids = np.array([vocab.index(c) for c in text], np.int64)
    split = int(0.9 * len(ids))
    model = CharLM(len(vocab), args.seq_len, args.dim, args.heads, args.layers)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    other = [p for n, p in model.named_parameters() if p.ndim < 2]
    opt = torch.optim.AdamW([{"params": decay}, {"params": other, "weight_decay": 0.0}], lr=args.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.steps)
    rng = np.random.default_rng(0)
    T = args.seq_len

    def batch(lo, hi):
        start = rng.integers(lo, hi - T - 1, args.batch)
        x = np.stack([ids[s:s + T] for s in start])
        y = np.stack([ids[s + 1:s + T + 1] for s in start])
        return torch.from_numpy(x), torch.from_numpy(y)

    print("pytorch %s, %d threads: %d characters, vocabulary %d, %d parameters"
          % (torch.__version__, torch.get_num_threads(), len(ids), len(vocab), sum(p.numel() for p in model.parameters())))
    last, t0 = 0, time.perf_counter()
    for step in range(1, args.steps + 1):
        x, y = batch(0, split)
        loss = F.cross_entropy(model(x).reshape(-1, len(vocab)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % args.every == 0 or step == args.steps:
            train_loss, secs = loss.item(), time.perf_counter() - t0
            model.eval()
            with torch.no_grad():
                vx, vy = batch(split, len(ids))
                val = F.cross_entropy(model(vx).reshape(-1, len(vocab)), vy.reshape(-1)).item()
            model.train()
            print("step %d: loss %.4f, validation %.4f (%.2f bits/char), %.1f windows/s"
                  % (step, train_loss, val, val / math.log(2), (step - last) * args.batch / secs), flush=True)
            last, t0 = step, time.perf_counter()


if __name__ == "__main__":
    main()
