"""The C API's ops that issue 33 item 2 made reachable (clgrad.fft, gather, index_select, conv1d,
the fused ops, Generator streams, utils.checkpoint) against numpy in float64 on every device, with
their gradients against central differences; against torch float64 where it is importable."""
import numpy as np
import pytest

import clgrad
import clgrad.nn as nn
import clgrad.nn.functional as F
from clgrad.utils.checkpoint import checkpoint
from test_ops import grad_of, nerr
from test_torch_ops import check

RNG = np.random.default_rng(33)


def c2r(z):
    """numpy complex -> clgrad's (..., 2) layout."""
    return np.stack([z.real, z.imag], -1)


def r2c(x):
    return x[..., 0] + 1j * x[..., 1]


# ---- clgrad.fft ----

FFT1 = {  # name: (clgrad, numpy, input shape, input is complex)
    "fft": (lambda x: clgrad.fft.fft(x), lambda a: c2r(np.fft.fft(r2c(a))), (3, 6, 2)),
    "fft_n_dim0_ortho": (lambda x: clgrad.fft.fft(x, n=4, dim=0, norm="ortho"),
                         lambda a: c2r(np.fft.fft(r2c(a), n=4, axis=0, norm="ortho")), (3, 5, 2)),
    "ifft_forward": (lambda x: clgrad.fft.ifft(x, norm="forward"), lambda a: c2r(np.fft.ifft(r2c(a), norm="forward")),
                     (2, 7, 2)),
    "rfft": (lambda x: clgrad.fft.rfft(x), lambda a: c2r(np.fft.rfft(a)), (3, 8)),
    "rfft_n_dim0": (lambda x: clgrad.fft.rfft(x, n=6, dim=0), lambda a: c2r(np.fft.rfft(a, n=6, axis=0)), (5, 3)),
    "irfft": (lambda x: clgrad.fft.irfft(x), lambda a: np.fft.irfft(r2c(a)), (2, 5, 2)),
    "irfft_n_ortho": (lambda x: clgrad.fft.irfft(x, n=7, norm="ortho"), lambda a: np.fft.irfft(r2c(a), n=7, norm="ortho"),
                      (2, 4, 2)),
    "fft2": (lambda x: clgrad.fft.fft2(x), lambda a: c2r(np.fft.fft2(r2c(a))), (2, 3, 4, 2)),
    "fft2_dims_s": (lambda x: clgrad.fft.fft2(x, s=(4, 2), dim=(0, 2)),
                    lambda a: c2r(np.fft.fft2(r2c(a), s=(4, 2), axes=(0, 2))), (3, 2, 3, 2)),
    "ifft2": (lambda x: clgrad.fft.ifft2(x, norm="ortho"), lambda a: c2r(np.fft.ifft2(r2c(a), norm="ortho")), (3, 4, 2)),
    "rfft2": (lambda x: clgrad.fft.rfft2(x), lambda a: c2r(np.fft.rfft2(a)), (2, 4, 6)),
    "rfft2_dims": (lambda x: clgrad.fft.rfft2(x, dim=(0, 2)), lambda a: c2r(np.fft.rfft2(a, axes=(0, 2))), (4, 2, 5)),
    "irfft2": (lambda x: clgrad.fft.irfft2(x), lambda a: np.fft.irfft2(r2c(a)), (2, 4, 3, 2)),
    "irfft2_s": (lambda x: clgrad.fft.irfft2(x, s=(3, 5)), lambda a: np.fft.irfft2(r2c(a), s=(3, 5)), (4, 3, 2)),
    "complex_mul_conj": (lambda x: clgrad.fft.complex_mul(x, x[:1], conj=True),
                         lambda a: c2r(r2c(a) * np.conj(r2c(a[:1]))), (3, 4, 2)),
}


@pytest.mark.parametrize("name", sorted(FFT1))
def test_fft(dev, name):
    f, ref, shape = FFT1[name]
    check(dev, f, ref, [RNG.uniform(-1, 1, shape)], tol=1e-5)


def test_fft_refuses_a_real_input_where_complex_is_needed(dev):
    with pytest.raises(ValueError, match=r"\(\.\.\., 2\)"):
        clgrad.fft.fft(clgrad.zeros(4, 3, device=dev))
    with pytest.raises(ValueError, match="norm"):
        clgrad.fft.rfft(clgrad.zeros(4, device=dev), norm="both")


def test_fft_against_torch(dev):
    torch = pytest.importorskip("torch")
    a = RNG.uniform(-1, 1, (3, 8))
    got = clgrad.fft.rfft(clgrad.tensor(a, device=dev), norm="ortho").numpy()
    want = torch.view_as_real(torch.fft.rfft(torch.tensor(a), norm="ortho")).numpy()
    assert nerr(got, want) < 1e-5
    z = RNG.uniform(-1, 1, (2, 4, 6, 2))
    got = clgrad.fft.ifft2(clgrad.tensor(z, device=dev), s=(3, 6)).numpy()
    want = torch.view_as_real(torch.fft.ifft2(torch.view_as_complex(torch.tensor(z)), s=(3, 6))).numpy()
    assert nerr(got, want) < 1e-5


# ---- gather, index_select ----

def test_gather(dev):
    idx = RNG.integers(0, 4, (3, 2))
    check(dev, lambda x: x.gather(1, idx), lambda a: np.take_along_axis(a, idx, 1), [RNG.uniform(-1, 1, (3, 4))])
    idx0 = RNG.integers(0, 3, (2, 4, 2))
    check(dev, lambda x: clgrad.gather(x, 0, idx0),  # an index smaller than the input in the other dims
          lambda a: a[idx0, np.arange(4)[None, :, None], np.arange(2)[None, None, :]], [RNG.uniform(-1, 1, (3, 4, 3))])


def test_index_select(dev):
    idx = np.array([2, 0, 2, 1], np.int32)
    for dim in (0, 1, -1):
        check(dev, lambda x: x.index_select(dim, idx), lambda a: np.take(a, idx, axis=dim), [RNG.uniform(-1, 1, (3, 3, 4))])
    check(dev, lambda x: clgrad.index_select(x, 1, idx[:2]), lambda a: a[:, idx[:2]], [RNG.uniform(-1, 1, (2, 3))])
    check(dev, lambda x: F.index_select(x, 0, clgrad.tensor(idx, device=x.device)), lambda a: a[idx],
          [RNG.uniform(-1, 1, (3, 2))])


def test_gather_index_select_against_torch(dev):
    torch = pytest.importorskip("torch")
    a, idx = RNG.uniform(-1, 1, (3, 4)), RNG.integers(0, 4, (3, 5))
    got = clgrad.tensor(a, device=dev).gather(1, idx).numpy()
    assert nerr(got, torch.tensor(a).gather(1, torch.tensor(idx)).numpy()) < 1e-6
    got = clgrad.tensor(a, device=dev).index_select(1, [3, 1]).numpy()
    assert nerr(got, torch.tensor(a).index_select(1, torch.tensor([3, 1])).numpy()) < 1e-6


# ---- conv1d ----

def np_conv1d(x, w, b=None, stride=1, pad=0, dil=1, groups=1):
    n, c, length = x.shape
    oc, cg, k = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad)))
    lo = (length + 2 * pad - dil * (k - 1) - 1) // stride + 1
    y = np.zeros((n, oc, lo))
    og = oc // groups
    for o in range(oc):
        g = o // og
        for t in range(lo):
            patch = xp[:, g * cg:(g + 1) * cg, t * stride:t * stride + dil * (k - 1) + 1:dil]
            y[:, o, t] = (patch * w[o]).sum((1, 2))
    return y + (0 if b is None else b[None, :, None])


@pytest.mark.parametrize("method", ["auto", "fft", "im2col"])
def test_conv1d(dev, method):
    f = {"auto": F.conv1d, "fft": F.conv1d_fft, "im2col": F.conv1d_im2col}[method]
    x, w, b = RNG.uniform(-1, 1, (2, 3, 9)), RNG.uniform(-1, 1, (2, 3, 4)), RNG.uniform(-1, 1, (2,))
    check(dev, lambda x, w, b: f(x, w, b, padding=2), lambda x, w, b: np_conv1d(x, w, b, pad=2), [x, w, b])


def test_conv1d_strided_dilated_grouped(dev):
    x, w = RNG.uniform(-1, 1, (2, 4, 11)), RNG.uniform(-1, 1, (6, 2, 3))
    check(dev, lambda x, w: F.conv1d(x, w, stride=2, padding=1, dilation=2, groups=2),
          lambda x, w: np_conv1d(x, w, stride=2, pad=1, dil=2, groups=2), [x, w])
    check(dev, lambda x, w: F.conv1d(x, w[:, :, :3], padding="same", groups=2),
          lambda x, w: np_conv1d(x, w[:, :, :3], pad=1, groups=2), [x, w])


def test_conv1d_module(dev):
    clgrad.manual_seed(1)
    m = nn.Conv1d(3, 4, 5, padding=2, device=dev)
    assert m.weight.shape == (4, 3, 5) and m.bias.shape == (4,)
    x = RNG.uniform(-1, 1, (2, 3, 7))
    got = m(clgrad.tensor(x, dtype=clgrad.float32, device=dev)).numpy()
    assert nerr(got, np_conv1d(x, m.weight.numpy().astype(np.float64), m.bias.numpy().astype(np.float64), pad=2)) < 1e-5
    k, why = F.conv1d_fft_from(dev)
    assert isinstance(k, int) and isinstance(why, str)


def test_conv1d_against_torch(dev):
    torch = pytest.importorskip("torch")
    x, w = RNG.uniform(-1, 1, (2, 3, 20)), RNG.uniform(-1, 1, (4, 3, 9))
    got = F.conv1d(clgrad.tensor(x, device=dev), clgrad.tensor(w, device=dev), padding=3).numpy()
    assert nerr(got, torch.nn.functional.conv1d(torch.tensor(x), torch.tensor(w), padding=3).numpy()) < 1e-5


# ---- fused ops ----

def np_conv2d(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    oc, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, oc, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            y[:, :, i, j] = np.einsum("nckl,ockl->no", patch, w)
    return y + b[None, :, None, None]


def np_max_pool(x, k, s):
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    return np.array([[[[x[a, b, i * s:i * s + k, j * s:j * s + k].max() for j in range(ow)] for i in range(oh)]
                      for b in range(c)] for a in range(n)])


def test_conv2d_relu_max_pool2d(dev):
    x, w, b = RNG.uniform(-1, 1, (1, 2, 6, 6)), RNG.uniform(-1, 1, (3, 2, 3, 3)), RNG.uniform(-1, 1, (3,))
    check(dev, lambda x, w, b: F.conv2d_relu_max_pool2d(x, w, b, stride=1, padding=1, pool_kernel=2),
          lambda x, w, b: np.maximum(np_max_pool(np_conv2d(x, w, b, 1, 1), 2, 2), 0), [x, w, b])


def np_layer_norm(x, g, b, eps=1e-5):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) * g + b


def test_add_layer_norm(dev):
    x, r, g, b = (RNG.uniform(-1, 1, s) for s in ((2, 3, 5), (2, 3, 5), (5,), (5,)))
    check(dev, lambda x, r, g, b: F.add_layer_norm(x, r, 5, g, b)[0],
          lambda x, r, g, b: np_layer_norm(x + r, g, b), [x, r, g, b])
    check(dev, lambda x, r: F.add_layer_norm(x, r, 5)[1] * 1.0, lambda x, r: x + r, [x, r])


def test_fused_switch_reaches_cross_entropy(dev):
    """F.cross_entropy is clg_cross_entropy_ex, fused (SOFTMAX_XENT) where it can be: a -inf logit
    makes the fused path's row NaN (documented) and the composed one's finite."""
    logits = np.array([[0.5, -np.inf, 1.0], [0.1, 0.2, 0.3]])
    x = clgrad.tensor(logits, device=dev)
    y = clgrad.tensor([0, 2], dtype=clgrad.int32, device=dev)
    was = clgrad.set_fused_ops(False)
    try:
        assert clgrad.fused_ops_enabled() is False
        unfused = F.cross_entropy(x, y).item()
        clgrad.set_fused_ops(True)
        fused = F.cross_entropy(x, y).item()
    finally:
        clgrad.set_fused_ops(was)
    assert np.isfinite(unfused)
    if dev.index != 0 or np.isnan(fused):  # the reference backend may compose it either way
        assert np.isnan(fused)


def test_precompile(dev):
    n = clgrad.precompile(dev, "test_api_ops", clgrad.float32)
    assert n >= 0 and (dev.index != 0 or n == 0)


# ---- Generator streams, dropout from a stream ----

def test_generator_stream(dev):
    g = clgrad.Generator().manual_seed(5)
    a, b = clgrad.rand(3, 4, generator=g, device=dev), clgrad.randn(2, generator=g, device=dev, dtype=clgrad.float64)
    assert g.get_state() == (5, 14)
    g2 = clgrad.Generator().manual_seed(5)
    both = clgrad.rand(14, generator=g2, device=dev).numpy()
    np.testing.assert_array_equal(a.numpy().reshape(-1), both[:12])
    assert not np.array_equal(a.numpy(), clgrad.rand(3, 4, generator=g, device=dev).numpy())
    u = clgrad.rand(1000, generator=clgrad.Generator().manual_seed(1), device=dev).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.05
    ref = clgrad.rand(3, 4, generator=clgrad.Generator().manual_seed(5), device="ref").numpy()
    np.testing.assert_array_equal(a.numpy(), ref)  # the same numbers on every device
    with pytest.raises(TypeError, match="generator"):
        clgrad.rand(2, generator=5)


def test_dropout_generator(dev):
    g = clgrad.Generator().manual_seed(9)
    x = RNG.uniform(0.5, 1, (4, 50))
    y = F.dropout(clgrad.tensor(x, device=dev), 0.3, generator=g).numpy()
    assert g.offset == 200
    kept = y != 0
    np.testing.assert_allclose(y[kept], x[kept] / 0.7, rtol=1e-6)
    assert 0.5 < kept.mean() < 0.9
    x2 = RNG.uniform(-1, 1, (2, 6))
    mask = (F.dropout(clgrad.ones(2, 6, device=dev), 0.3, generator=clgrad.Generator().manual_seed(4)).numpy())
    check(dev, lambda t: F.dropout(t, 0.3, generator=clgrad.Generator().manual_seed(4)), lambda a: a * mask, [x2])


# ---- utils.checkpoint ----

def block(x, w, scale):
    return ((x @ w).tanh() * scale).exp()


def test_checkpoint_gradients(dev):
    x, w = RNG.uniform(-1, 1, (3, 4)), RNG.uniform(-1, 1, (4, 2))
    check(dev, lambda x, w: checkpoint(block, x, w, 0.5), lambda x, w: np.exp(np.tanh(x @ w) * 0.5), [x, w])


def test_checkpoint_several_outputs_and_parameters(dev):
    lin = nn.Linear(4, 3, device=dev)
    x = clgrad.tensor(RNG.uniform(-1, 1, (2, 4)), dtype=clgrad.float32, device=dev, requires_grad=True)

    def two(t):
        h = lin(t)
        return h.relu(), h.sigmoid()

    a, b = checkpoint(two, x)
    (a.sum() + (b * b).sum()).backward()
    g = [x.grad.numpy(), lin.weight.grad.numpy(), lin.bias.grad.numpy()]
    x.grad = lin.weight.grad = lin.bias.grad = None
    a, b = two(x)
    (a.sum() + (b * b).sum()).backward()
    for got, want in zip(g, [x.grad.numpy(), lin.weight.grad.numpy(), lin.bias.grad.numpy()]):
        assert nerr(got, want) < 1e-6


def test_checkpoint_dropout_replays_and_leaves_the_stream(dev):
    x = RNG.uniform(-1, 1, (4, 16))

    def f(t):
        return F.dropout(t * 2, 0.5).exp()

    out = []
    for ck in (False, True):
        clgrad.manual_seed(3)
        t = clgrad.tensor(x, device=dev, requires_grad=True)
        y = checkpoint(f, t) if ck else f(t)
        y.sum().backward()
        out.append((y.numpy(), t.grad.numpy(), clgrad.rand(4, device=dev).numpy()))
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


def test_checkpoint_errors(dev):
    x = clgrad.ones(2, device=dev, requires_grad=True)

    def bad(t):
        raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        checkpoint(bad, x)
    calls = []

    def late(t):
        calls.append(1)
        if len(calls) > 1:
            raise ValueError("second run")
        return t * 2

    y = checkpoint(late, x)
    with pytest.raises(clgrad.Error, match="ValueError.*second run"):
        y.sum().backward()
    with pytest.raises(TypeError, match="function"):
        checkpoint(5, x)
    assert checkpoint(lambda t: t + 1, x, use_reentrant=False).shape == (2,)
    with clgrad.no_grad():
        assert checkpoint(lambda t: t + 1, x).requires_grad is False
