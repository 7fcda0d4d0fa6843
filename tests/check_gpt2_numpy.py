#!/usr/bin/env python3
"""GPT-2 weights that clgrad's gpt model must read (tests/test_gpt2_numpy.sh), made and checked
with numpy only: an independent writer and reader of safetensors and an independent forward.

  check_gpt2_numpy.py make DIR    DIR/gpt2.safetensors: random weights in GPT-2's own layout, as
                                  Hugging Face's GPT2LMHeadModel saves them ("transformer." names,
                                  Conv1D weights (in, out), lm_head.weight, the attn.bias mask
                                  buffers); DIR/ref.safetensors: ids (B, T) and numpy's logits
                                  (B * T, V), the dims in its metadata
  check_gpt2_numpy.py check DIR   DIR/out.safetensors (clgrad's clg_gpt_save_gpt2) holds the same
                                  tensors as gpt2.safetensors, in GPT-2's layout, without prefix
"""
import json
import struct
import sys

import numpy as np

V, T, D, H, L = 50, 16, 24, 3, 2
B, S = 2, 11  # the ids' batch and length (S <= T)


def write(path, tensors, meta):
    header, blobs, off = {"__metadata__": meta}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        dt = {np.float32: "F32", np.int32: "I32"}[a.dtype.type]
        raw = a.astype(a.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    out = {}
    for name, h in header.items():
        a, b = h["data_offsets"]
        dt = {"F32": "<f4", "I32": "<i4"}[h["dtype"]]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=dt).reshape(h["shape"])
    return out, meta


def layer_norm(x, w, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * w + b


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def forward(w, ids):
    """GPT-2's forward in float64, weights as GPT-2 stores them (Conv1D: x @ W + b)."""
    g = lambda k: w["transformer." + k].astype(np.float64)
    Bn, Tn = ids.shape
    Dh = D // H
    x = g("wte.weight")[ids] + g("wpe.weight")[:Tn]
    causal = np.tril(np.ones((Tn, Tn), dtype=bool))
    for l in range(L):
        p = f"h.{l}."
        h = layer_norm(x, g(p + "ln_1.weight"), g(p + "ln_1.bias"))
        qkv = h @ g(p + "attn.c_attn.weight") + g(p + "attn.c_attn.bias")  # (B, T, 3 D)
        q, k, v = np.split(qkv, 3, axis=-1)
        heads = lambda t: t.reshape(Bn, Tn, H, Dh).transpose(0, 2, 1, 3)
        q, k, v = heads(q), heads(k), heads(v)
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(Dh)
        s = np.where(causal, s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        a = (s / s.sum(-1, keepdims=True)) @ v  # (B, H, T, Dh)
        a = a.transpose(0, 2, 1, 3).reshape(Bn, Tn, D)
        x = x + a @ g(p + "attn.c_proj.weight") + g(p + "attn.c_proj.bias")
        h = layer_norm(x, g(p + "ln_2.weight"), g(p + "ln_2.bias"))
        f = gelu_tanh(h @ g(p + "mlp.c_fc.weight") + g(p + "mlp.c_fc.bias"))
        x = x + f @ g(p + "mlp.c_proj.weight") + g(p + "mlp.c_proj.bias")
    x = layer_norm(x, g("ln_f.weight"), g("ln_f.bias"))
    return (x @ g("wte.weight").T).reshape(Bn * Tn, V)


def make(d):
    r = np.random.default_rng(34)
    n = lambda *s, sd=0.3: (r.standard_normal(s) * sd).astype(np.float32)
    w = {"transformer.wte.weight": n(V, D), "transformer.wpe.weight": n(T, D, sd=0.1)}
    for l in range(L):
        p = f"transformer.h.{l}."
        w[p + "ln_1.weight"] = 1 + n(D, sd=0.1)
        w[p + "ln_1.bias"] = n(D, sd=0.1)
        w[p + "attn.c_attn.weight"] = n(D, 3 * D)  # Conv1D: (in, out)
        w[p + "attn.c_attn.bias"] = n(3 * D, sd=0.1)
        w[p + "attn.c_proj.weight"] = n(D, D)
        w[p + "attn.c_proj.bias"] = n(D, sd=0.1)
        w[p + "ln_2.weight"] = 1 + n(D, sd=0.1)
        w[p + "ln_2.bias"] = n(D, sd=0.1)
        w[p + "mlp.c_fc.weight"] = n(D, 4 * D)
        w[p + "mlp.c_fc.bias"] = n(4 * D, sd=0.1)
        w[p + "mlp.c_proj.weight"] = n(4 * D, D, sd=0.15)
        w[p + "mlp.c_proj.bias"] = n(D, sd=0.1)
        w[p + "attn.bias"] = np.tril(np.ones((1, 1, T, T), dtype=np.float32))  # the mask buffer
    w["transformer.ln_f.weight"] = 1 + n(D, sd=0.1)
    w["transformer.ln_f.bias"] = n(D, sd=0.1)
    w["lm_head.weight"] = w["transformer.wte.weight"]  # tied
    write(f"{d}/gpt2.safetensors", w, {"format": "pt"})
    ids = r.integers(0, V, size=(B, S)).astype(np.int32)
    logits = forward(w, ids).astype(np.float32)
    meta = {"vocab": str(V), "seq_len": str(T), "dim": str(D), "heads": str(H), "layers": str(L)}
    write(f"{d}/ref.safetensors", {"ids": ids, "logits": logits}, meta)


def check(d):
    w, _ = read(f"{d}/gpt2.safetensors")
    got, _ = read(f"{d}/out.safetensors")
    want = {k[len("transformer."):]: v for k, v in w.items() if k.startswith("transformer.") and not k.endswith(".attn.bias")}
    assert set(got) == set(want), sorted(set(got) ^ set(want))
    for k, v in want.items():
        assert got[k].shape == v.shape, (k, got[k].shape, v.shape)
        assert np.array_equal(got[k], v), k
    print(f"check_gpt2_numpy: {len(got)} tensors written back in GPT-2's layout")


if __name__ == "__main__":
    {"make": make, "check": check}[sys.argv[1]](sys.argv[2])
