"""The ops issue 31 added for PyTorch users (clamp with tensor bounds, broadcast matmul, pooling's
ceil_mode and count_include_pad, ConvTranspose2d, interpolate, GroupNorm, RMSNorm) against numpy
in float64 on every device, with their gradients against central differences."""
import numpy as np
import pytest

import clgrad
import clgrad.nn as nn
import clgrad.nn.functional as F
from test_ops import grad_of, nerr, numeric_grad

RNG = np.random.default_rng(31)


def check(dev, f, ref, arrays, tol=1e-5):
    """f's forward on dev against numpy's ref, and its gradients on the reference (float64) and on
    dev against central differences."""
    got = f(*[clgrad.tensor(a, device=dev) for a in arrays]).numpy()
    want = ref(*arrays)
    assert nerr(got, want) < tol
    numeric = numeric_grad(f, arrays)
    for device in ("ref", dev):
        grads = grad_of(f, arrays, device, clgrad.float64 if device == "ref" else clgrad.float32)
        for g, n in zip(grads, numeric):
            assert nerr(g, n) < (1e-6 if device == "ref" else 1e-4), device


# ---- clamp with tensor bounds ----

def np_clamp(x, lo, hi):
    return np.minimum(np.maximum(x, lo), hi)


def test_clamp_tensor_bounds(dev):
    x = RNG.uniform(-2, 2, (3, 4))
    lo = RNG.uniform(-1.5, -0.5, (4,))
    hi = RNG.uniform(0.5, 1.5, (3, 1))
    check(dev, lambda a, b, c: a.clamp(b, c), np_clamp, [x, lo, hi])
    check(dev, lambda a, b: clgrad.clamp(a, min=b), lambda a, b: np.maximum(a, b), [x, lo])
    check(dev, lambda a, c: a.clamp(max=c), lambda a, c: np.minimum(a, c), [x, hi])


def test_clamp_tensor_crossed_and_nan(dev):
    x = np.array([[-1.0, 0.5, np.nan, 3.0]])
    lo = np.array([2.0, 0.0, 0.0, np.nan])
    hi = np.array([1.0, 1.0, 1.0, 5.0])
    got = clgrad.tensor(x, device=dev).clamp(clgrad.tensor(lo, device=dev), clgrad.tensor(hi, device=dev)).numpy()
    # crossed bounds give max; NaN in x or in a bound gives NaN (torch.clamp)
    np.testing.assert_array_equal(got, [[1.0, 0.5, np.nan, np.nan]])
    with pytest.raises(clgrad.ShapeError):  # (1, 4) against (3,): no broadcast
        clgrad.tensor(x, device=dev).clamp(min=clgrad.tensor(lo, device=dev), max=clgrad.tensor(np.ones(3), device=dev))


# ---- matmul as torch.matmul ----

@pytest.mark.parametrize("sa,sb", [((2, 3, 4, 5), (2, 3, 5, 2)), ((4, 5), (2, 3, 5, 3)), ((2, 3, 4, 5), (5, 3)),
                                   ((2, 1, 3, 4), (3, 4, 2)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,)), ((5,), (5,)),
                                   ((4,), (4, 3)), ((3, 4), (4,))],
                         ids=["4d", "2d@4d", "4d@2d", "broadcast", "vec@3d", "3d@vec", "dot", "vec@mat", "mat@vec"])
def test_matmul_shapes(dev, sa, sb):
    a, b = RNG.uniform(-1, 1, sa), RNG.uniform(-1, 1, sb)
    check(dev, lambda x, y: x @ y, np.matmul, [a, b])


def test_matmul_refuses_batches_that_do_not_broadcast(dev):
    with pytest.raises(clgrad.ShapeError):
        clgrad.zeros(2, 3, 4, device=dev) @ clgrad.zeros(3, 4, 5, device=dev)


# ---- GroupNorm, RMSNorm ----

def np_group_norm(x, g, w=None, b=None, eps=1e-5):
    n, c = x.shape[:2]
    r = x.reshape(n, g, -1)
    y = ((r - r.mean(-1, keepdims=True)) / np.sqrt(r.var(-1, keepdims=True) + eps)).reshape(x.shape)
    sh = (1, c) + (1,) * (x.ndim - 2)
    return y * (1 if w is None else w.reshape(sh)) + (0 if b is None else b.reshape(sh))


def np_rms_norm(x, nd, w=None, eps=None):
    eps = np.finfo(np.float32).eps if eps is None else eps
    axes = tuple(range(x.ndim - nd, x.ndim))
    return x / np.sqrt((x * x).mean(axes, keepdims=True) + eps) * (1 if w is None else w)


def test_group_norm(dev):
    x, w, b = RNG.normal(size=(2, 6, 3, 2)), RNG.uniform(0.5, 1.5, 6), RNG.normal(size=6)
    check(dev, lambda a, c, d: F.group_norm(a, 3, c, d), lambda a, c, d: np_group_norm(a, 3, c, d), [x, w, b])
    check(dev, lambda a: F.group_norm(a, 2, eps=1e-3), lambda a: np_group_norm(a, 2, eps=1e-3), [RNG.normal(size=(3, 4, 5))])
    m = nn.GroupNorm(3, 6, device=dev)
    assert sorted(dict(m.named_parameters())) == ["bias", "weight"]
    assert nerr(m(clgrad.tensor(x, dtype=clgrad.float32, device=dev)).numpy(), np_group_norm(x, 3)) < 1e-5
    with pytest.raises(ValueError):
        nn.GroupNorm(4, 6)


def test_rms_norm(dev):
    x, w = RNG.normal(size=(2, 3, 4)), RNG.uniform(0.5, 1.5, (3, 4))
    check(dev, lambda a, c: F.rms_norm(a, (3, 4), c), lambda a, c: np_rms_norm(a, 2, c), [x, w])
    check(dev, lambda a: F.rms_norm(a, 4, eps=1e-3), lambda a: np_rms_norm(a, 1, eps=1e-3), [x])
    m = nn.RMSNorm(4, device=dev)
    assert m.eps is None and list(dict(m.named_parameters())) == ["weight"]
    assert nerr(m(clgrad.tensor(x, dtype=clgrad.float32, device=dev)).numpy(), np_rms_norm(x, 1)) < 1e-5
    # eps=None is float64's own epsilon on float64 tensors: tiny rows show it
    t = np.full((1, 4), 1e-9)
    got = F.rms_norm(clgrad.tensor(t, dtype=clgrad.float64, device=dev), 4).numpy()
    assert nerr(got, t / np.sqrt(1e-18 + np.finfo(np.float64).eps)) < 1e-9


# ---- pooling: ceil_mode, count_include_pad ----

def np_pool(x, k, s, p, kind, ceil_mode=False, count_include_pad=True, d=1):
    """PyTorch's pooling rules written out (aten's pooling_output_shape and avg_pool2d's divisor)."""
    n, c, h, w = x.shape
    def osize(i):
        o = (i + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
        return o - 1 if ceil_mode and (o - 1) * s >= i + p else o
    oh, ow = osize(h), osize(w)
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            if kind == "max":
                rows = [r for r in range(i * s - p, i * s - p + d * (k - 1) + 1, d) if 0 <= r < h]
                cols = [q for q in range(j * s - p, j * s - p + d * (k - 1) + 1, d) if 0 <= q < w]
                y[:, :, i, j] = x[:, :, rows][:, :, :, cols].max((2, 3))
            else:
                h0, w0 = i * s - p, j * s - p
                h1, w1 = min(h0 + k, h + p), min(w0 + k, w + p)
                size = (h1 - h0) * (w1 - w0)
                h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
                div = size if count_include_pad else (h1 - h0) * (w1 - w0)
                y[:, :, i, j] = x[:, :, h0:h1, w0:w1].sum((2, 3)) / div
    return y


@pytest.mark.parametrize("shape,k,s,p,d", [((1, 2, 5, 5), 3, 2, 0, 1), ((2, 1, 6, 7), 3, 2, 1, 1), ((1, 2, 7, 6), 2, 3, 1, 1),
                                           ((1, 1, 6, 5), 2, 2, 1, 2)])
def test_max_pool_ceil_mode(dev, shape, k, s, p, d):
    x = RNG.normal(size=shape)
    check(dev, lambda a: F.max_pool2d(a, k, s, p, d, ceil_mode=True), lambda a: np_pool(a, k, s, p, "max", True, d=d), [x])
    m = nn.MaxPool2d(k, s, p, dilation=d, ceil_mode=True)
    assert m(clgrad.tensor(x, device=dev)).shape == np_pool(x, k, s, p, "max", True, d=d).shape


@pytest.mark.parametrize("ceil_mode", [False, True])
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("shape,k,s,p", [((1, 2, 5, 5), 3, 2, 1), ((2, 1, 7, 6), 2, 3, 1), ((1, 1, 6, 6), 3, 2, 0)])
def test_avg_pool_modes(dev, shape, k, s, p, ceil_mode, count_include_pad):
    x = RNG.normal(size=shape)
    check(dev, lambda a: F.avg_pool2d(a, k, s, p, ceil_mode, count_include_pad),
          lambda a: np_pool(a, k, s, p, "avg", ceil_mode, count_include_pad), [x])


def test_avg_pool_known_values(dev):
    # ones: padding counted gives the fraction of the window inside the input; not counted gives 1
    x = clgrad.ones(1, 1, 3, 3, device=dev)
    np.testing.assert_allclose(F.avg_pool2d(x, 2, 2, 1).numpy()[0, 0], [[0.25, 0.5], [0.5, 1.0]])
    np.testing.assert_allclose(nn.AvgPool2d(2, 2, 1, count_include_pad=False)(x).numpy(), np.ones((1, 1, 2, 2)))
    # ceil_mode: 5 wide in windows of 2 at stride 2 gives 3, the last of one column
    assert F.avg_pool2d(clgrad.ones(1, 1, 5, 5, device=dev), 2, ceil_mode=True).shape == (1, 1, 3, 3)


# ---- ConvTranspose2d ----

def np_conv_transpose2d(x, w, b=None, s=(1, 1), p=(0, 0), op=(0, 0), d=(1, 1), g=1):
    """Each input pixel scatters its weighted kernel into the output (the definition)."""
    n, c, h, wd = x.shape
    _, ocg, kh, kw = w.shape
    oh = (h - 1) * s[0] - 2 * p[0] + d[0] * (kh - 1) + op[0] + 1
    ow = (wd - 1) * s[1] - 2 * p[1] + d[1] * (kw - 1) + op[1] + 1
    full = np.zeros((n, ocg * g, oh + 2 * p[0] + s[0], ow + 2 * p[1] + s[1]))
    cg = c // g
    for ci in range(c):
        grp = ci // cg
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for e in range(kw):
                        full[:, grp * ocg:(grp + 1) * ocg, i * s[0] + a * d[0], j * s[1] + e * d[1]] += \
                            x[:, ci, i, j][:, None] * w[ci, :, a, e][None]
    y = full[:, :, p[0]:p[0] + oh, p[1]:p[1] + ow]
    return y + (0 if b is None else b[None, :, None, None])


@pytest.mark.parametrize("xs,ws,kw", [
    ((2, 3, 3, 3), (3, 2, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ((1, 4, 3, 2), (4, 3, 2, 3), dict(stride=(1, 2), output_padding=(0, 1), groups=2)),
    ((1, 2, 3, 4), (2, 3, 3, 2), dict(stride=(3, 1), padding=(2, 0), output_padding=(2, 0), dilation=(2, 1))),
], ids=["stride_pad_outpad", "groups", "dilation"])
def test_conv_transpose2d(dev, xs, ws, kw):
    x, w, b = RNG.normal(size=xs), RNG.normal(size=ws), RNG.normal(size=ws[1] * kw.get("groups", 1))
    pair = F._pair
    ref = lambda a, c, e: np_conv_transpose2d(a, c, e, pair(kw.get("stride", 1)), pair(kw.get("padding", 0)),  # noqa: E731
                                              pair(kw.get("output_padding", 0)), pair(kw.get("dilation", 1)),
                                              kw.get("groups", 1))
    check(dev, lambda a, c, e: F.conv_transpose2d(a, c, e, **kw), ref, [x, w, b])


def test_conv_transpose2d_module(dev):
    m = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, device=dev)
    assert m.weight.shape == (4, 3, 3, 3) and m.bias.shape == (6,)
    assert np.abs(m.weight.numpy()).max() <= 1 / np.sqrt(3 * 9)
    x = RNG.normal(size=(2, 4, 5, 5)).astype(np.float32)
    y = m(clgrad.tensor(x, device=dev))
    assert y.shape == (2, 6, 10, 10)
    want = np_conv_transpose2d(x, m.weight.numpy(), m.bias.numpy(), (2, 2), (1, 1), (1, 1), (1, 1), 2)
    assert nerr(y.numpy(), want) < 1e-5
    with pytest.raises(clgrad.UnsupportedError):  # output padding must be below the stride here
        F.conv_transpose2d(clgrad.tensor(x, device=dev), m.weight, None, stride=1, output_padding=1, dilation=2, groups=2)


# ---- interpolate / Upsample ----

def np_interp_axis(x, axis, out, sf, linear, align_corners):
    n = x.shape[axis]
    if align_corners:
        scale = (n - 1) / (out - 1) if out > 1 else 0.0
    else:
        scale = 1.0 / sf if sf else n / out
    o = np.arange(out)
    if not linear:
        return np.take(x, np.minimum(np.floor(o * scale).astype(int), n - 1), axis)
    src = o * scale if align_corners else np.maximum((o + 0.5) * scale - 0.5, 0)
    i0 = np.minimum(src.astype(int), n - 1)
    i1 = np.minimum(i0 + 1, n - 1)
    l1 = (src - i0).reshape((-1,) + (1,) * (x.ndim - axis - 1))
    return np.take(x, i0, axis) * (1 - l1) + np.take(x, i1, axis) * l1


def np_interpolate(x, size=None, sf=None, linear=False, align_corners=False):
    for k in range(x.ndim - 2):
        out = size[k] if size else int(np.floor(x.shape[2 + k] * sf[k]))
        x = np_interp_axis(x, 2 + k, out, None if size else sf[k], linear, align_corners)
    return x


@pytest.mark.parametrize("shape,kw,ref", [
    ((1, 2, 3, 4), dict(scale_factor=2), dict(sf=(2, 2))),
    ((2, 1, 4, 5), dict(size=(5, 3)), dict(size=(5, 3))),
    ((1, 2, 4, 3), dict(size=(7, 5), mode="bilinear"), dict(size=(7, 5), linear=True)),
    ((2, 1, 3, 4), dict(scale_factor=(2, 1.5), mode="bilinear", align_corners=True),
     dict(sf=(2, 1.5), linear=True, align_corners=True)),
    ((2, 3, 5), dict(scale_factor=1.5, mode="linear"), dict(sf=(1.5,), linear=True)),
    ((1, 2, 7, 5), dict(size=(3, 2), mode="bilinear"), dict(size=(3, 2), linear=True)),
    ((1, 1, 5, 3), dict(scale_factor=0.5), dict(sf=(0.5, 0.5))),
], ids=["nearest_x2", "nearest_size", "bilinear", "bilinear_align", "linear_1d", "bilinear_down", "nearest_down"])
def test_interpolate(dev, shape, kw, ref):
    x = RNG.normal(size=shape)
    check(dev, lambda a: F.interpolate(a, **kw), lambda a: np_interpolate(a, **ref), [x])


def test_interpolate_known_values(dev):
    x = clgrad.tensor([[[[1.0, 2.0], [3.0, 4.0]]]], device=dev)
    np.testing.assert_allclose(nn.Upsample(scale_factor=2, mode="bilinear")(x).numpy()[0, 0],
                               [[1, 1.25, 1.75, 2], [1.5, 1.75, 2.25, 2.5], [2.5, 2.75, 3.25, 3.5], [3, 3.25, 3.75, 4]],
                               rtol=1e-6)
    np.testing.assert_allclose(F.interpolate(x, size=3, mode="bilinear", align_corners=True).numpy()[0, 0],
                               [[1, 1.5, 2], [2, 2.5, 3], [3, 3.5, 4]], rtol=1e-6)
    np.testing.assert_array_equal(nn.Upsample(scale_factor=2)(x).numpy()[0, 0],
                                  [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]])
    with pytest.raises(ValueError):
        F.interpolate(x, size=3, align_corners=True)
