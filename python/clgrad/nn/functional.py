"""clgrad.nn.functional: the ops modules are made of, with PyTorch's names and defaults."""

import math

import numpy as np

from .. import _C
from .._tensor import Generator, Tensor, _rng, as_tensor, float32, int32, tensor


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def linear(input, weight, bias=None):  # noqa: A002  (PyTorch's names)
    """input (..., in) @ weight^T (out, in) + bias (out)."""
    return _linear_act(input, weight, bias, 0)


def _linear_act(input, weight, bias, act):  # noqa: A002
    """linear, then _C.ACT_RELU or _C.ACT_GELU (0: none) in the GEMM's epilogue: one op forward
    and backward (nn.Sequential's Linear + ReLU / GELU)."""
    lead = input.shape[:-1]
    x = input if input.ndim == 2 else input.reshape(-1, input.shape[-1])
    y = _C.linear(x, weight, bias, act)
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


def dropout(input, p=0.5, training=True, inplace=False, generator=None):  # noqa: A002
    """torch's dropout; generator= (clgrad's addition) draws the mask from a clgrad.Generator's
    stream, advancing it, rather than from manual_seed's."""
    if inplace:
        raise NotImplementedError("dropout: inplace=True is not offered (clgrad has no in-place ops)")
    if not training or p == 0:
        return input
    if generator is not None:
        if not isinstance(generator, Generator):
            raise TypeError("dropout: generator: expected a clgrad.Generator, got %s" % type(generator).__name__)
        y, generator.offset = _C.dropout_rng(input, float(p), generator._seed, generator.offset, True)
        return y
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


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """torch.nn.functional.group_norm: input (N, C, *) normalised per (sample, group of C / num_groups)."""
    return _C.group_norm(input, int(num_groups), weight, bias, float(eps))


def rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002
    """torch.nn.functional.rms_norm over the trailing normalized_shape; eps=None is finfo(float32 or
    float64).eps (16-bit inputs compute in float32 and take float32's)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    n = len(normalized_shape)
    if tuple(input.shape[input.ndim - n:]) != tuple(normalized_shape):
        raise ValueError("rms_norm: normalized_shape %s is not the end of the input's shape %s"
                         % (tuple(normalized_shape), tuple(input.shape)))
    return _C.rms_norm(input, n, weight, -1.0 if eps is None else float(eps))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,  # noqa: A002
               eps=1e-5):
    return _C.batch_norm(input, weight, bias, running_mean, running_var, float(momentum), float(eps), bool(training))


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    return _C.conv2d(input, weight, bias, _pair(stride), _pair(padding), _pair(dilation), int(groups))


def _conv1d_padding(padding, k, what):
    if padding == "valid":
        return 0
    if padding == "same":
        if k % 2 == 0:
            raise NotImplementedError("%s: padding='same' with an even kernel (%d) pads one side more: not offered"
                                      % (what, k))
        return (k - 1) // 2
    if isinstance(padding, (tuple, list)):
        (padding,) = padding
    return int(padding)


def _single(v):
    return v[0] if isinstance(v, (tuple, list)) else v


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """torch.nn.functional.conv1d: input (N, C, L), weight (OC, C / groups, K). With stride,
    dilation and groups 1 it is clg_conv1d, which takes the FFT for kernels from the device's
    measured crossover (`clgrad tune`; conv1d_fft_from) and im2col + GEMM below it; otherwise a
    conv2d of rows."""
    pad = _conv1d_padding(padding, weight.shape[-1], "conv1d")
    stride, dilation = int(_single(stride)), int(_single(dilation))
    if stride == 1 and dilation == 1 and groups == 1:
        return _C.conv1d(input, weight, bias, pad, "auto")
    y = _C.conv2d(input.unsqueeze(2), weight.unsqueeze(2), bias, (1, stride), (0, pad), (1, dilation), int(groups))
    return y.squeeze(2)


def conv1d_fft(input, weight, bias=None, padding=0):  # noqa: A002
    """conv1d (stride, dilation and groups 1) through the FFT whatever the kernel size (clgrad's)."""
    return _C.conv1d(input, weight, bias, _conv1d_padding(padding, weight.shape[-1], "conv1d_fft"), "fft")


def conv1d_im2col(input, weight, bias=None, padding=0):  # noqa: A002
    """conv1d (stride, dilation and groups 1) as im2col + GEMM whatever the kernel size (clgrad's)."""
    return _C.conv1d(input, weight, bias, _conv1d_padding(padding, weight.shape[-1], "conv1d_im2col"), "im2col")


def conv1d_fft_from(device=None):
    """(K, why): the kernel size from which conv1d takes the FFT on device (0: never, 1: always)."""
    from .._tensor import _index
    return _C.conv1d_fft_from(_index(device))


def conv2d_relu_max_pool2d(input, weight, bias=None, stride=1, padding=0, pool_kernel=2, pool_stride=None,  # noqa: A002
                           pool_padding=0):
    """relu(max_pool2d(conv2d(x, w, b, stride, padding), pool_kernel, pool_stride, pool_padding)) as one
    op (clgrad's fused op, what nn.Sequential's Conv2d, ReLU, MaxPool2d run as in C): square
    strides, paddings and pool windows, no dilation, one group; the three ops where it does not apply."""
    ps = pool_kernel if pool_stride is None else pool_stride
    return _C.conv2d_relu_max_pool2d(input, weight, bias, int(stride), int(padding), int(pool_kernel), int(ps),
                                     int(pool_padding))


def add_layer_norm(input, residual, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """(layer_norm(input + residual), input + residual) as one op forward and one backward (clgrad's
    fused op: a pre-norm block's residual add and the norm after it); over the last dim only."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    if len(normalized_shape) != 1 or input.shape[-1] != normalized_shape[0]:
        raise ValueError("add_layer_norm: normalized_shape %s must be the input's last dim (%d)"
                         % (tuple(normalized_shape), input.shape[-1]))
    y, s = _C.add_layer_norm(input, residual, weight, bias, float(eps))
    return y, s


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,  # noqa: A002
                     dilation=1):
    return _C.conv_transpose2d(input, weight, bias, _pair(stride), _pair(padding), _pair(output_padding),
                               _pair(dilation), int(groups))


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
                recompute_scale_factor=None, antialias=False):
    """torch.nn.functional.interpolate for (N, C, L) and (N, C, H, W): modes nearest, linear and bilinear."""
    nsp = input.ndim - 2
    modes = {"nearest": (False, None), "linear": (True, 1), "bilinear": (True, 2)}
    if mode not in modes or antialias:
        raise NotImplementedError("interpolate: mode %r%s is not offered (nearest, linear, bilinear)"
                                  % (mode, " with antialias" if antialias else ""))
    linear, want = modes[mode]
    if want is not None and want != nsp:
        raise ValueError("interpolate: mode %r takes %d spatial dims, the input has %d" % (mode, want, nsp))
    if not linear and align_corners is not None:
        raise ValueError("interpolate: align_corners only applies to the linear modes")
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give either size or scale_factor")
    def each(v, kind):
        v = tuple(v) if isinstance(v, (tuple, list)) else (v,) * nsp
        if len(v) != nsp:
            raise ValueError("interpolate: %d %s for %d spatial dims" % (len(v), kind, nsp))
        return v
    if size is not None:
        size = tuple(int(s) for s in each(size, "sizes"))
    else:
        scale_factor = tuple(float(s) for s in each(scale_factor, "scale factors"))
        if recompute_scale_factor:  # the scale then follows from the sizes
            size = tuple(int(math.floor(n * s)) for n, s in zip(input.shape[2:], scale_factor))
            scale_factor = None
    return _C.interpolate(input, size, scale_factor, linear, bool(align_corners))


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    if return_indices:
        raise NotImplementedError("max_pool2d: return_indices is not offered")
    k = _pair(kernel_size)
    return _C.pool2d("max", input, k, _pair(stride) if stride else k, _pair(padding), _pair(dilation),
                     bool(ceil_mode), True)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,  # noqa: A002
               divisor_override=None):
    if divisor_override is not None:
        raise NotImplementedError("avg_pool2d: divisor_override is not offered")
    k = _pair(kernel_size)
    return _C.pool2d("avg", input, k, _pair(stride) if stride else k, _pair(padding), (1, 1), bool(ceil_mode),
                     bool(count_include_pad))


def embedding(input, weight):  # noqa: A002
    """Rows of weight (V, D) at int32 indices of any shape."""
    idx = input if input.dtype is int32 else input.to(int32)
    out = _C.binary("embedding", weight, idx.reshape(-1))
    return out.reshape(*idx.shape, weight.shape[1])


def index_select(input, dim, index):  # noqa: A002
    """input's slices along dim at int32 indices (1-D), as torch.index_select."""
    return input.index_select(dim, index)


def gather(input, dim, index):  # noqa: A002
    """torch.gather (Tensor.gather)."""
    return input.gather(dim, index)


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
                                                                      "float32", "Generator")]
