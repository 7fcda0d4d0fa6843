#!/usr/bin/env python3
"""`clgrad train --model gpt --tokenizer bytes` in PyTorch on the CPU, the same workload for
side-by-side figures: the same text file read as bytes (vocabulary 256), 90/10 split and
non-overlapping next-token windows of --seq-len; the same model as frontend/model_gpt.c (token and
learned position embeddings, pre-norm blocks of causal attention from one (D, 3 D) projection and a
4 D MLP with GELU's tanh form, a final layer norm, the head tied to the token embedding, GPT-2's
initialisation, no dropout), AdamW (lr, weight decay 0.01 on tensors of 2 dims or more, as clgrad's
trainer groups them), batch, and --recompute as torch.utils.checkpoint around each block. One JSON
object per epoch with the fields of clgrad's --log (val_loss, epoch_seconds, samples_per_s: windows
a second, tokens_per_s) and the process's peak resident memory so far (peak_rss_bytes).

usage: pytorch_gpt.py [--data FILE] [--epochs N] [--batch N] [--lr X] [--limit N] [--seq-len T]
                      [--dim D] [--heads H] [--layers L] [--threads N] [--recompute]
"""
import argparse, json, math, resource, time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as ckpt


class Block(nn.Module):
    def __init__(self, d, heads, layers):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn, self.attn_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.c_fc, self.mlp_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        for lin in (self.c_attn, self.attn_proj, self.c_fc, self.mlp_proj):
            nn.init.normal_(lin.weight, std=0.02)
            nn.init.zeros_(lin.bias)
        for lin in (self.attn_proj, self.mlp_proj):  # GPT-2: residual projections scaled by 1/sqrt(2L)
            nn.init.normal_(lin.weight, std=0.02 / math.sqrt(2 * layers))

    def forward(self, x):  # (B, T, D)
        B, T, D = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(D, dim=2)
        heads = lambda t: t.view(B, T, self.heads, D // self.heads).transpose(1, 2)  # (B, H, T, Dh)
        a = F.scaled_dot_product_attention(heads(q), heads(k), heads(v), is_causal=True)
        x = x + self.attn_proj(a.transpose(1, 2).reshape(B, T, D))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, vocab, d, heads, layers, seq_len, recompute):
        super().__init__()
        self.recompute = recompute
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(seq_len, d)
        nn.init.normal_(self.wte.weight, std=0.02)
        nn.init.normal_(self.wpe.weight, std=0.02)
        self.h = nn.ModuleList(Block(d, heads, layers) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, idx):  # (B, T) -> (B * T, vocab)
        x = self.wte(idx) + self.wpe.weight[: idx.shape[1]]
        for b in self.h:
            x = ckpt.checkpoint(b, x, use_reentrant=False) if self.recompute and self.training else b(x)
        return F.linear(self.ln_f(x), self.wte.weight).view(-1, self.wte.num_embeddings)  # tied head


def windows(ids, t):
    n = (len(ids) - 1) // t
    return ids[: n * t].view(n, t), ids[1 : n * t + 1].view(n, t)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/usr/share/common-licenses/GPL-3")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--limit", type=int, default=0, help="training and validation windows (0: all)")
    p.add_argument("--seq-len", type=int, default=256)
    p.add_argument("--dim", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--recompute", action="store_true")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    ids = torch.tensor(list(open(a.data, "rb").read()), dtype=torch.long)
    n_train = len(ids) - math.floor(len(ids) * 0.1)
    xs, ys = windows(ids[:n_train], a.seq_len)
    vx, vy = windows(ids[n_train:], a.seq_len)
    if a.limit:
        xs, ys, vx, vy = xs[: a.limit], ys[: a.limit], vx[: a.limit], vy[: a.limit]
    model = GPT(256, a.dim, a.heads, a.layers, a.seq_len, a.recompute)
    decay = [q for q in model.parameters() if q.dim() >= 2]
    rest = [q for q in model.parameters() if q.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}], lr=a.lr)
    for epoch in range(1, a.epochs + 1):
        model.train()
        t0 = time.perf_counter()
        perm = torch.randperm(len(xs))
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
            val = sum(F.cross_entropy(model(vx[s : s + a.batch]), vy[s : s + a.batch].reshape(-1), reduction="sum").item()
                      for s in range(0, len(vx), a.batch)) / vy.numel()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(json.dumps({"epoch": epoch, "model": "gpt", "device": f"pytorch {torch.__version__} cpu, "
                          f"{torch.get_num_threads()} threads", "recompute": a.recompute, "train_loss": total / steps,
                          "val_loss": val, "epoch_seconds": secs, "samples_per_s": len(xs) / secs,
                          "tokens_per_s": len(xs) * a.seq_len / secs, "steps": steps, "peak_rss_bytes": rss}),
              flush=True)


if __name__ == "__main__":
    main()
