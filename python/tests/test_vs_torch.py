"""The ops, their gradients and the optimizers against PyTorch in float64, where torch is
importable (skipped otherwise; CI does not install it): the same expression on a clgrad float32
tensor on every device and on a torch float64 one, forward and gradient (of the output weighted by
a fixed random tensor) within 1e-4 normalised; optimizer parameters after 5 steps within 1e-5."""
import numpy as np
import pytest

import clgrad
import clgrad.nn as nn
import clgrad.nn.functional as F

from test_ops import BINARY, UNARY, nerr, positive

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# cases whose expression differs between the libraries: (clgrad, torch)
OVERRIDE = {
    "layer_norm": (lambda x: F.layer_norm(x, 6), lambda x: TF.layer_norm(x, (6,))),
    "where": (lambda x, y: clgrad.where(x > y, x, y), lambda x, y: torch.where(x > y, x, y)),
}

FUNCTIONAL = {  # name: (clgrad f, torch f, input shapes); inputs uniform in [0.2, 1.5)
    "gelu": (F.gelu, TF.gelu, [(4, 6)]),
    "silu": (F.silu, TF.silu, [(4, 6)]),
    "log_softmax": (lambda x: F.log_softmax(x, -1), lambda x: TF.log_softmax(x, -1), [(4, 6)]),
    "linear": (F.linear, TF.linear, [(4, 6), (3, 6), (3,)]),
    "mse_loss": (F.mse_loss, TF.mse_loss, [(4, 6), (4, 6)]),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, padding=1), lambda x, w, b: TF.conv2d(x, w, b, padding=1),
               [(2, 3, 6, 6), (4, 3, 3, 3), (4,)]),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), lambda x: TF.max_pool2d(x, 2), [(2, 3, 6, 6)]),
    "sdpa_causal": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                    lambda q, k, v: TF.scaled_dot_product_attention(q, k, v, is_causal=True),
                    [(2, 2, 5, 4)] * 3),
}


def both(fc, ft, arrays, device):
    """(forward, grads) of fc on clgrad float32 on device and of ft on torch float64."""
    xs = [clgrad.tensor(a, device=device, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    out, tout = fc(*xs), ft(*ts)
    w = np.random.default_rng(3).uniform(-1, 1, tuple(tout.shape))
    (out * clgrad.tensor(w, device=device)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    return (out.numpy(), tout.detach().numpy()), [(x.grad.numpy(), t.grad.numpy()) for x, t in zip(xs, ts)]


def check(fc, ft, arrays, device, name):
    (got, want), grads = both(fc, ft, arrays, device)
    assert nerr(got, want) < 1e-4, (name, "forward")
    for i, (g, tg) in enumerate(grads):
        assert nerr(g, tg) < 1e-4, (name, "gradient of input %d" % i)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(dev, name):
    fc, ft = OVERRIDE.get(name, (UNARY[name][0], UNARY[name][0]))  # the same method calls on both
    check(fc, ft, [positive((4, 6))], dev, name)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("bshape", [(4, 6), (6,), (4, 1)], ids=["same", "row", "col"])
def test_binary(dev, name, bshape):
    if name == "matmul":
        bshape = (3, 6)
    fc, ft = OVERRIDE.get(name, (BINARY[name][0], BINARY[name][0]))
    check(fc, ft, [positive((4, 6)), positive(bshape)], dev, name)


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_functional(dev, name):
    fc, ft, shapes = FUNCTIONAL[name]
    check(fc, ft, [positive(s) for s in shapes], dev, name)


def test_cross_entropy_and_embedding(dev):
    rng = np.random.default_rng(5)
    logits, cls = rng.normal(size=(6, 5)), np.array([0, 4, 1, 1, 2, 3], np.int32)
    for kw in ({}, {"label_smoothing": 0.1}, {"reduction": "sum"}):
        check(lambda x: F.cross_entropy(x, clgrad.tensor(cls, device=dev), **kw),
              lambda x: TF.cross_entropy(x, torch.tensor(cls, dtype=torch.int64), **kw), [logits], dev, kw)
    ids = np.array([[1, 3, 3], [0, 2, 1]], np.int32)
    check(lambda w: F.embedding(clgrad.tensor(ids, device=dev), w),
          lambda w: TF.embedding(torch.tensor(ids, dtype=torch.int64), w), [rng.normal(size=(4, 3))], dev, "embedding")


OPTIMIZERS = {  # name: (clgrad, torch), the same arguments
    "sgd": dict(cls="SGD", lr=0.1),
    "sgd_momentum_wd": dict(cls="SGD", lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
    "sgd_nesterov": dict(cls="SGD", lr=0.05, momentum=0.9, nesterov=True),
    "adam": dict(cls="Adam", lr=0.01),
    "adam_l2": dict(cls="Adam", lr=0.01, betas=(0.8, 0.99), weight_decay=0.1),
    "adamw": dict(cls="AdamW", lr=0.01),
    "adamw_amsgrad": dict(cls="AdamW", lr=0.01, betas=(0.9, 0.5), amsgrad=True),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_five_steps(dev, name):
    kw = dict(OPTIMIZERS[name])
    cls = kw.pop("cls")
    rng = np.random.default_rng(11)
    p0 = rng.normal(size=(3, 5)).astype(np.float32)
    grads = [rng.normal(size=(3, 5)) * (5 - k) for k in range(5)]  # shrinking: amsgrad's max matters
    p = nn.Parameter(clgrad.tensor(p0, device=dev))
    tp = torch.nn.Parameter(torch.tensor(p0, dtype=torch.float64))
    opt, topt = getattr(clgrad.optim, cls)([p], **kw), getattr(torch.optim, cls)([tp], **kw)
    for g in grads:
        opt.zero_grad()
        (p * clgrad.tensor(g, device=dev)).sum().backward()  # gradient g
        opt.step()
        topt.zero_grad()
        tp.grad = torch.tensor(g)
        topt.step()
    assert nerr(p.numpy(), tp.detach().numpy()) < 1e-5, name
