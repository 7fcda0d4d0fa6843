"""Optimizer steps against numpy float64 implementations of PyTorch's update rules: parameters
after 5 steps within 1e-5 (normalised), on every device."""
import numpy as np
import pytest

import clgrad
import clgrad.nn as nn


def np_sgd(p, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    buf = None
    for g in grads:
        g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def np_adam(p, grads, lr, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.0, decoupled=False, amsgrad=False):
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    vmax = np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        mh, vh = m / (1 - b1 ** t), (vmax if amsgrad else v) / (1 - b2 ** t)
        p = p - lr * mh / (np.sqrt(vh) + eps)
    return p


CASES = {
    "sgd": (lambda ps: clgrad.optim.SGD(ps, lr=0.1), lambda p, g: np_sgd(p, g, 0.1)),
    "sgd_momentum_wd": (lambda ps: clgrad.optim.SGD(ps, lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
                        lambda p, g: np_sgd(p, g, 0.05, 0.9, 0.1, 0.01)),
    "sgd_nesterov": (lambda ps: clgrad.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True),
                     lambda p, g: np_sgd(p, g, 0.05, 0.9, 0.0, 0.0, True)),
    "adam": (lambda ps: clgrad.optim.Adam(ps, lr=0.01), lambda p, g: np_adam(p, g, 0.01)),
    "adam_l2": (lambda ps: clgrad.optim.Adam(ps, lr=0.01, betas=(0.8, 0.99), weight_decay=0.1),
                lambda p, g: np_adam(p, g, 0.01, 0.8, 0.99, 1e-8, 0.1)),
    "adamw_default_decay": (lambda ps: clgrad.optim.AdamW(ps, lr=0.01),
                            lambda p, g: np_adam(p, g, 0.01, weight_decay=0.01, decoupled=True)),
    "adam_beta2_9999": (lambda ps: clgrad.optim.Adam(ps, lr=0.1, betas=(0.9, 0.9999)),
                        lambda p, g: np_adam(p, g, 0.1, 0.9, 0.9999)),
    # beta2 0.5 and gradients that shrink (below): the second moment falls, its running max not
    "amsgrad": (lambda ps: clgrad.optim.AdamW(ps, lr=0.01, betas=(0.9, 0.5), amsgrad=True),
                lambda p, g: np_adam(p, g, 0.01, 0.9, 0.5, 1e-8, 0.01, True, True)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_five_steps(dev, name):
    make, ref = CASES[name]
    rng = np.random.default_rng(11)
    p0 = rng.normal(size=(3, 5))
    targets = [rng.normal(size=(3, 5)) * (5 - k if name == "amsgrad" else 1) for k in range(5)]
    p = nn.Parameter(clgrad.tensor(p0, device=dev))
    opt = make([p])
    grads = []
    for tgt in targets:
        opt.zero_grad()
        # loss sum(p * c): gradient c, independent of p, so numpy sees the same gradients
        (p * clgrad.tensor(tgt, device=dev)).sum().backward()
        grads.append(tgt)
        opt.step()
    want = ref(p0.astype(np.float32).astype(np.float64), grads)
    got = p.numpy()
    err = np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want)))
    assert err < 1e-5, (name, err)
