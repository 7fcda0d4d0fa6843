"""A character-level transformer language model written as clgrad.nn modules: pre-norm blocks,
causal self-attention, GELU MLP, trained with AdamW on a text file (default: the GPL-3 text every
Debian system has), then sampled.

    .venv/bin/python examples/python/charlm.py [--steps N] [--dim D] [--layers L] [--heads H]
"""
import argparse
import math
import time

import numpy as np

import clgrad
import clgrad.nn as nn
import clgrad.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.fc, self.out = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.drop = nn.Dropout(dropout)

    def attention(self, x):
        B, T, D = x.shape
        H = self.heads
        # the heads as strided views of the one projection, no copies: (B, T, 3 H, Dh) sliced into
        # q, k, v (B, T, H, Dh) and transposed to (B, H, T, Dh); the fused attention writes its
        # output in q's layout, so (B, T, H, Dh) in memory and the reshape back is a view too
        qkv = self.qkv(x).reshape(B, T, 3 * H, D // H)
        q, k, v = (qkv[:, :, i * H:(i + 1) * H].transpose(1, 2) for i in range(3))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)         # (B, H, T, D/H)
        return self.proj(y.transpose(1, 2).reshape(B, T, D))

    def forward(self, x):
        x = x + self.drop(self.attention(self.ln1(x)))
        return x + self.drop(self.out(F.gelu(self.fc(self.ln2(x)))))


class CharLM(nn.Module):
    def __init__(self, vocab, seq_len, dim, heads, layers, dropout=0.0):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(seq_len, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, dropout) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)
        self.positions = clgrad.arange(seq_len)

    def forward(self, ids):                                    # ids (B, T) int32
        T = ids.shape[1]
        x = self.tok(ids) + self.pos(self.positions[:T].to(ids.device))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x))                           # (B, T, vocab)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/usr/share/common-licenses/GPL-3")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq-len", type=int, default=64)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--device", default=None)
    args = ap.parse_args()
    clgrad.set_default_device(clgrad.device(args.device))
    clgrad.manual_seed(0)
    text = open(args.data, "rb").read()
    vocab = sorted(set(text))
    ids = np.array([vocab.index(c) for c in text], np.int32)
    split = int(0.9 * len(ids))
    model = CharLM(len(vocab), args.seq_len, args.dim, args.heads, args.layers)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    other = [p for n, p in model.named_parameters() if p.ndim < 2]
    opt = clgrad.optim.AdamW([{"params": decay}, {"params": other, "weight_decay": 0.0}], lr=args.lr)
    sched = clgrad.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.steps)
    rng = np.random.default_rng(0)
    T = args.seq_len

    def batch(lo, hi):
        start = rng.integers(lo, hi - T - 1, args.batch)
        x = np.stack([ids[s:s + T] for s in start])
        y = np.stack([ids[s + 1:s + T + 1] for s in start])
        return clgrad.tensor(x), clgrad.tensor(y)

    print("%d characters, vocabulary %d, %d parameters" % (len(ids), len(vocab),
                                                           sum(p.numel() for p in model.parameters())))
    t0 = time.perf_counter()
    for step in range(1, args.steps + 1):
        x, y = batch(0, split)
        loss = F.cross_entropy(model(x).reshape(-1, len(vocab)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 50 == 0 or step == args.steps:
            model.eval()
            with clgrad.no_grad():
                vx, vy = batch(split, len(ids))
                val = F.cross_entropy(model(vx).reshape(-1, len(vocab)), vy.reshape(-1)).item()
            model.train()
            secs = time.perf_counter() - t0
            print("step %d: loss %.4f, validation %.4f (%.2f bits/char), %.1f windows/s"
                  % (step, loss.item(), val, val / math.log(2), step * args.batch / secs), flush=True)
    model.eval()
    ctx = list(ids[:T])
    with clgrad.no_grad():
        for _ in range(120):
            logits = model(clgrad.tensor(np.array([ctx[-T:]], np.int32)))[0, -1].numpy().astype(np.float64)
            p = np.exp(logits - logits.max())
            ctx.append(int(rng.choice(len(vocab), p=p / p.sum())))
    print("sample:", bytes(vocab[i] for i in ctx[T:]).decode("utf-8", "replace"))


if __name__ == "__main__":
    main()
