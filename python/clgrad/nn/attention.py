"""nn.MultiheadAttention, PyTorch's module (its parameters, names and initialisation): the
self-attention of one packed in-projection runs as one fused op over strided views of it
(_C.attention_qkv, the C transformer's: no copies forward or backward)."""

import math

from .. import _C
from . import Linear, Module, Parameter, _uniform
from . import functional as F
from .._tensor import zeros


class MultiheadAttention(Module):
    """MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, batch_first=False).
    forward(query, key, value, need_weights=True, attn_mask=None, is_causal=False) returns
    (output, None). What differs from PyTorch's: no attention weights (pass need_weights=False;
    True, PyTorch's default, raises), no key_padding_mask, attn_mask only as the causal mask
    (is_causal=True says so and needs no mask), no attention dropout in training, kdim = vdim =
    embed_dim."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError("MultiheadAttention: embed_dim %d is not divisible by num_heads %d" % (embed_dim, num_heads))
        if add_bias_kv or add_zero_attn or kdim not in (None, embed_dim) or vdim not in (None, embed_dim):
            raise NotImplementedError("MultiheadAttention: add_bias_kv, add_zero_attn, kdim and vdim are not supported")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        bound = math.sqrt(6.0 / (embed_dim + 3 * embed_dim))  # xavier_uniform_ of (3 E, E), as PyTorch
        self.in_proj_weight = Parameter(_uniform((3 * embed_dim, embed_dim), bound, device))
        self.in_proj_bias = Parameter(zeros(3 * embed_dim, device=device)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device)
        if bias:
            self.out_proj.bias = Parameter(zeros(embed_dim, device=device))

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        if need_weights:
            raise NotImplementedError("MultiheadAttention: attention weights are not returned (need_weights=False)")
        if key_padding_mask is not None or (attn_mask is not None and not is_causal):
            raise NotImplementedError("MultiheadAttention: masks other than the causal one (is_causal=True)")
        if self.training and self.dropout > 0:
            raise NotImplementedError("MultiheadAttention: attention dropout is not implemented (dropout=0)")
        if not self.batch_first:  # (T, B, E) -> (B, T, E)
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        E, H = self.embed_dim, self.num_heads
        w, b = self.in_proj_weight, self.in_proj_bias
        if query is key and key is value:  # self-attention: one GEMM, the heads strided views of it
            y = _C.attention_qkv(F.linear(query, w, b), H, bool(is_causal))
        else:
            B, T, S = query.shape[0], query.shape[1], key.shape[1]
            q, k, v = (F.linear(x, w[i * E:(i + 1) * E], None if b is None else b[i * E:(i + 1) * E])
                       for i, x in enumerate((query, key, value)))
            q, k, v = (t.reshape(B, n, H, E // H).transpose(1, 2) for t, n in ((q, T), (k, S), (v, S)))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal).transpose(1, 2).reshape(B, T, E)
        out = self.out_proj(y)
        return (out if self.batch_first else out.transpose(0, 1)), None

    def extra_repr(self):
        return "embed_dim=%d, num_heads=%d, batch_first=%s" % (self.embed_dim, self.num_heads, self.batch_first)
