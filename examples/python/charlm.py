"""A character-level transformer language model written as clgrad.nn modules: pre-norm blocks,
causal self-attention, GELU MLP, trained with AdamW on a text file (default: the GPL-3 text every
Debian system has), then sampled. The loop below is written out in Python; --trainer EPOCHS trains
the same model through clgrad.Trainer instead (the C loop `clgrad train --model transformer` runs,
over its windows: bench/python_vs_cli.sh compares the three).

    .venv/bin/python examples/python/charlm.py [--steps N] [--dim D] [--layers L] [--heads H] [--trainer E]
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
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        # q, k and v from one in-projection; self-attention over it runs fused, the heads strided
        # views of the projection (no copies), as the C transformer's
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        # Linear then GELU in a Sequential: one op, the activation in the GEMM's epilogue
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.drop(self.attn(h, h, h, need_weights=False, is_causal=True)[0])
        return x + self.drop(self.mlp(self.ln2(x)))


class CharLM(nn.Module):
    def __init__(self, vocab, seq_len, dim, heads, layers, dropout=0.0):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(seq_len, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, dropout) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):                                    # ids (B, T) int32
        T = ids.shape[1]
        x = self.tok(ids) + self.pos.weight[:T]                # positions: a slice, no lookup
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
    ap.add_argument("--trainer", type=int, default=0, metavar="EPOCHS",
                    help="train EPOCHS epochs through clgrad.Trainer (the C loop of `clgrad train --model transformer`, "
                         "over its windows) instead of the loop below")
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
    if args.trainer:  # the CLI's data: consecutive windows, next characters as targets, 10% held out
        n = (len(ids) - 1) // T
        x, y = ids[:n * T].reshape(n, T), ids[1:n * T + 1].reshape(n, T)
        cut = int(0.9 * n)
        data = [clgrad.data.TensorDataset(a, b, num_classes=len(vocab)) for a, b in ((x[:cut], y[:cut]), (x[cut:], y[cut:]))]
        clgrad.Trainer(model, task="language_model", optimizer="adamw", lr=args.lr, schedule="cosine", clip=1.0,
                       epochs=args.trainer, batch_size=args.batch).fit(*data)
    else:
        last, t0 = 0, time.perf_counter()
        for step in range(1, args.steps + 1):
            x, y = batch(0, split)
            loss = F.cross_entropy(model(x).reshape(-1, len(vocab)), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            if step % 50 == 0 or step == args.steps:
                train_loss = loss.item()  # waits for the step: the training time ends here (as the CLI's, without evaluation)
                secs = time.perf_counter() - t0
                model.eval()
                with clgrad.no_grad():
                    vx, vy = batch(split, len(ids))
                    val = F.cross_entropy(model(vx).reshape(-1, len(vocab)), vy.reshape(-1)).item()
                model.train()
                print("step %d: loss %.4f, validation %.4f (%.2f bits/char), %.1f windows/s"
                      % (step, train_loss, val, val / math.log(2), (step - last) * args.batch / secs), flush=True)
                last, t0 = step, time.perf_counter()  # windows/s of these 50 steps (the first 50 include loading the kernels)
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
