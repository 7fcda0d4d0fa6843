"""Optimizer.state_dict / load_state_dict in PyTorch's layout (the C optimizer's state slots,
clg_optimizer_state / set_state / set_steps): the moments against numpy float64 after 3 steps, and
a run resumed from a state_dict after 3 of 5 steps equal to the straight run, on every device."""
import numpy as np
import pytest

import clgrad

G = np.random.default_rng(7).uniform(-1, 1, (3, 4))

KINDS = {
    "sgd": lambda ps: clgrad.optim.SGD(ps, lr=0.1, momentum=0.9),
    "adam_amsgrad": lambda ps: clgrad.optim.Adam(ps, lr=0.01, amsgrad=True),
    "adamw": lambda ps: clgrad.optim.AdamW(ps, lr=0.01, weight_decay=0.1),
}


def steps(opt, p, n, first=None):
    """n steps of gradient G (first=None), or of G * t at global step t = first, first + 1, ..."""
    for k in range(n):
        g = G if first is None else G * (first + k)
        opt.zero_grad()
        (p * clgrad.tensor(g, dtype=clgrad.float32, device=p.device)).sum().backward()
        opt.step()


def test_state_dict_layout_and_moments(dev):
    p = clgrad.zeros(3, 4, device=dev, requires_grad=True)
    q = clgrad.zeros(2, device=dev, requires_grad=True)
    opt = clgrad.optim.Adam([{"params": [p]}, {"params": [q], "lr": 0.5}], lr=0.01, amsgrad=True)
    assert opt.state_dict()["state"] == {}  # no state before the first step, as PyTorch's
    steps(opt, p, 3)
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["betas"] == (0.9, 0.999)
    s = sd["state"][0]
    assert set(s) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"} and s["step"] == 3.0
    b1, b2 = 0.9, 0.999
    np.testing.assert_allclose(s["exp_avg"].numpy(), G * (1 - b1 ** 3), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(s["exp_avg_sq"].numpy(), G * G * (1 - b2 ** 3), rtol=1e-5, atol=1e-9)
    m = clgrad.optim.SGD([p], lr=0.1, momentum=0.9)
    steps(m, p, 2)
    np.testing.assert_allclose(m.state_dict()["state"][0]["momentum_buffer"].numpy(), G * 1.9, rtol=1e-6)
    assert clgrad.optim.SGD([p], lr=0.1).state_dict()["state"] == {}  # no momentum: no state


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_resume_equals_the_straight_run(dev, kind):
    start = np.random.default_rng(1).uniform(-1, 1, (3, 4))
    a = clgrad.tensor(start, dtype=clgrad.float32, device=dev, requires_grad=True)
    oa = KINDS[kind]([a])
    steps(oa, a, 5, first=1)
    b = clgrad.tensor(start, dtype=clgrad.float32, device=dev, requires_grad=True)
    ob = KINDS[kind]([b])
    steps(ob, b, 3, first=1)
    sd = ob.state_dict()
    saved = {"state": {i: {k: (v.numpy() if isinstance(v, clgrad.Tensor) else v) for k, v in s.items()}
                       for i, s in sd["state"].items()}, "param_groups": sd["param_groups"]}
    for resume in (True, False):
        c = clgrad.tensor(b.numpy(), dtype=clgrad.float32, device=dev, requires_grad=True)
        oc = KINDS[kind]([c])
        if resume:
            oc.load_state_dict(saved)
        steps(oc, c, 2, first=4)
        d = np.abs(c.numpy() - a.numpy()).max()
        if resume:
            assert d < 1e-6, kind
        else:  # without the state the run differs: the check above can fail
            assert d > 1e-5, kind


def test_load_state_dict_refuses_another_layout(dev):
    p = clgrad.zeros(2, device=dev, requires_grad=True)
    sd = clgrad.optim.SGD([p], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="groups"):
        clgrad.optim.SGD([{"params": [p]}, {"params": [clgrad.zeros(1, device=dev, requires_grad=True)]}],
                         lr=0.1).load_state_dict(sd)
    opt = clgrad.optim.SGD([p], lr=0.1)
    opt.load_state_dict({"state": {}, "param_groups": [dict(sd["param_groups"][0], lr=0.3)]})
    assert opt.param_groups[0]["lr"] == 0.3


def test_adam_state_against_torch(dev):
    torch = pytest.importorskip("torch")
    p = clgrad.zeros(3, 4, device=dev, requires_grad=True)
    opt = clgrad.optim.Adam([p], lr=0.01)
    steps(opt, p, 3)
    tp = torch.zeros(3, 4, dtype=torch.float64, requires_grad=True)
    topt = torch.optim.Adam([tp], lr=0.01)
    for _ in range(3):
        topt.zero_grad()
        (tp * torch.tensor(G)).sum().backward()
        topt.step()
    ts, s = topt.state_dict()["state"][0], opt.state_dict()["state"][0]
    for k in ("exp_avg", "exp_avg_sq"):
        np.testing.assert_allclose(s[k].numpy(), ts[k].numpy(), rtol=1e-5, atol=1e-9)
    assert s["step"] == float(ts["step"])
