"""clgrad.nn.functional: the ops modules are made of, with PyTorch's names and defaults."""

import math

import numpy as np

from .. import _C
from .._tensor import Tensor, _rng, as_tensor, float32, int32, tensor


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def linear(input, weight, bias=None):  # noqa: A002  (PyTorch's names)
    """input (..., in) @ weight^T (out, in) + bias (out)."""
    lead = input.shape[:-1]
    x = input if input.ndim == 2 else input.reshape(-1, input.shape[-1])
    y = _C.linear(x, weight, bias)
    return y if input.ndim == 2 else y.reshape(*lead, weight.shape[0])


def relu(input):  # noqa: A002
    return _C.unary("relu", input)


def gelu(input, approximate="none"):  # noqa: A002
    if approximate == "tanh":
        return _C.unary("gelu_tanh", input)  # one op (GELU_TANH), as GPT-2's
    return _C.unary("gelu", input)


def silu(input):  # noqa: A002
    return _C.unary("silu", input)


def sigmoid(input):  # noqa: A002
    return _C.unary("sigmoid", input)


def tanh(input):  # noqa: A002
    return _C.unary("tanh", input)


def leaky_relu(input, negative_slope=0.01):  # noqa: A002
    return _C.leaky_relu(input, float(negative_slope))


def softmax(input, dim=-1):  # noqa: A002
    return input.softmax(dim)


def log_softmax(input, dim=-1):  # noqa: A002
    return input.log_softmax(dim)


def dropout(input, p=0.5, training=True):  # noqa: A002
    if not training or p == 0:
        return input
    return _C.dropout(input, float(p), _rng.next(), True)


_eyes = {}


def _eye(n, device, dtype):
    """The identity (n, n) on a device, made once (one_hot gathers its rows)."""
    key = (n, device.index, dtype.name)
    if key not in _eyes:
        _eyes[key] = tensor(np.eye(n), dtype=dtype, device=device)
    return _eyes[key]


def one_hot(indices, num_classes, dtype=float32):
    """int32 class indices of any shape -> rows of num_classes (float32 unless dtype says)."""
    idx = as_tensor(indices)
    return embedding(idx if idx.dtype is int32 else idx.to(int32), _eye(num_classes, idx.device, dtype))


def _class_last(input, target):
    """PyTorch's (N, C, d1, ...) input as the C library takes it, classes last: (N, d1, ..., C);
    dense targets alike. 1-D input is one sample's logits."""
    if input.ndim <= 2:
        return input, target
    perm = [0] + list(range(2, input.ndim)) + [1]
    if target.ndim == input.ndim:
        target = target.permute(*perm)
    return input.permute(*perm), target


def _loss(kind, input, target, weight, ignore_index, reduction, label_smoothing):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError("reduction: expected 'mean', 'sum' or 'none', got %r" % (reduction,))
    x, t = _class_last(input, as_tensor(target, device=input.device))
    return _C.loss(kind, x, t, reduction, int(ignore_index), weight, float(label_smoothing))


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):  # noqa: A002
    """input (N, C) or (N, C, d1, ...) logits (PyTorch's layout) or (C,); target int32 class
    indices (N, d1, ...) or probabilities of input's shape; as torch.nn.functional.cross_entropy."""
    return _loss("cross_entropy", input, target, weight, ignore_index, reduction, label_smoothing)


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):  # noqa: A002
    return _loss("nll", input, target, weight, ignore_index, reduction, 0.0)


def mse_loss(input, target, reduction="mean"):  # noqa: A002
    if reduction == "mean":
        return _C.binary("mse_loss", input, as_tensor(target, dtype=input.dtype, device=input.device))
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input, target, reduction="mean"):  # noqa: A002
    return _reduce((input - target).abs(), reduction)


def _reduce(x, reduction):
    if reduction == "mean":
        return x.mean()
    if reduction == "sum":
        return x.sum()
    if reduction == "none":
        return x
    raise ValueError("reduction: expected 'mean', 'sum' or 'none', got %r" % (reduction,))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    if len(normalized_shape) != 1:
        lead = input.shape[:-len(normalized_shape)]
        x = input.reshape(*lead, -1)
        w = None if weight is None else weight.reshape(-1)
        b = None if bias is None else bias.reshape(-1)
        return _C.layer_norm(x, w, b, float(eps)).reshape(*input.shape)
    return _C.layer_norm(input, weight, bias, float(eps))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,  # noqa: A002
               eps=1e-5):
    return _C.batch_norm(input, weight, bias, running_mean, running_var, float(momentum), float(eps), bool(training))


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    return _C.conv2d(input, weight, bias, _pair(stride), _pair(padding), _pair(dilation), int(groups))


def max_pool2d(input, kernel_size, stride=None, padding=0):  # noqa: A002
    k = _pair(kernel_size)
    return _C.pool2d("max", input, k, _pair(stride) if stride is not None else k, _pair(padding))


def avg_pool2d(input, kernel_size, stride=None, padding=0):  # noqa: A002
    k = _pair(kernel_size)
    return _C.pool2d("avg", input, k, _pair(stride) if stride is not None else k, _pair(padding))


def embedding(input, weight):  # noqa: A002
    """Rows of weight (V, D) at int32 indices of any shape."""
    idx = input if input.dtype is int32 else input.to(int32)
    out = _C.binary("embedding", weight, idx.reshape(-1))
    return out.reshape(*idx.shape, weight.shape[1])


def index_select(input, dim, index):  # noqa: A002
    """input's slices along dim at int32 indices (1-D), as torch.index_select."""
    dim %= input.ndim
    x = input.transpose(0, dim) if dim else input
    lead = x.shape[0]
    flat = x.reshape(lead, -1)
    out = _C.binary("embedding", flat, index.reshape(-1))
    out = out.reshape(index.numel(), *x.shape[1:])
    return out.transpose(0, dim) if dim else out


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """PyTorch's, on clg_scaled_dot_product_attention_ex: attn_mask broadcasts to (B, H, Tq, Tk), a
    float mask added to the scores, an int32 (or bool, taken as int32) mask attending where nonzero;
    dropout draws its mask from manual_seed's stream, as F.dropout does."""
    if attn_mask is not None and not isinstance(attn_mask, Tensor):
        a = np.asarray(attn_mask)
        attn_mask = as_tensor(a.astype(np.int32) if a.dtype == bool else a, device=query.device)
    seed = _rng.next() if dropout_p > 0 else 0
    return _C.sdpa(query, key, value, bool(is_causal), float(dropout_p), seed, float(scale or 0.0), attn_mask)


def flatten(input, start_dim=0, end_dim=-1):  # noqa: A002
    return input.flatten(start_dim, end_dim)


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("math", "np", "Tensor", "tensor", "as_tensor", "int32",
                                                                      "float32")]
