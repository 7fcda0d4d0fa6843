"""The modules that run as fused C ops: nn.Sequential's Linear + ReLU / GELU (one linear_act) and
nn.MultiheadAttention's self-attention (one attention_qkv over the packed projection), each
against its unfused composition and numpy in float64 (PyTorch's module where torch is there)."""
import numpy as np
import pytest

import clgrad
import clgrad.nn as nn
import clgrad.nn.functional as F


@pytest.mark.parametrize("act", [nn.ReLU, nn.GELU])
def test_sequential_fuses_linear_act(dev, act):
    clgrad.manual_seed(2)
    seq = nn.Sequential(nn.Linear(12, 16, device=dev), act(), nn.Linear(16, 5, device=dev), act())
    x = np.random.default_rng(0).standard_normal((7, 12)).astype(np.float32)
    a, b = clgrad.tensor(x, device=dev, requires_grad=True), clgrad.tensor(x, device=dev, requires_grad=True)
    fn = F.relu if act is nn.ReLU else F.gelu
    ya = seq(a)
    yb = fn(seq[2](fn(seq[0](b))))  # the modules one by one
    np.testing.assert_allclose(ya.numpy(), yb.numpy(), rtol=1e-5, atol=1e-6)
    ga = [t.numpy() for t in _grads(ya, [a] + list(seq.parameters()))]
    gb = [t.numpy() for t in _grads(yb, [b] + list(seq.parameters()))]
    for u, v in zip(ga, gb):
        np.testing.assert_allclose(u, v, rtol=1e-4, atol=1e-6)


def _grads(y, ts):
    for t in ts:
        t.grad = None
    (y * y).sum().backward()
    return [t.grad for t in ts]


def _mha_numpy(m, x, causal):
    W, b = m.in_proj_weight.numpy().astype(np.float64), m.in_proj_bias.numpy().astype(np.float64)
    Wo, bo = m.out_proj.weight.numpy().astype(np.float64), m.out_proj.bias.numpy().astype(np.float64)
    B, T, E = x.shape
    H, Dh = m.num_heads, E // m.num_heads
    qkv = x.astype(np.float64) @ W.T + b
    q, k, v = (qkv[..., i * E:(i + 1) * E].reshape(B, T, H, Dh).transpose(0, 2, 1, 3) for i in range(3))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(Dh)
    if causal:
        s = s + np.triu(np.full((T, T), -np.inf), 1)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    y = (p @ v).transpose(0, 2, 1, 3).reshape(B, T, E)
    return y @ Wo.T + bo


@pytest.mark.parametrize("causal", [True, False])
def test_multihead_attention(dev, causal):
    clgrad.manual_seed(4)
    m = nn.MultiheadAttention(16, 4, batch_first=True, device=dev)
    m.in_proj_bias._assign(clgrad.randn(48, device=dev) * 0.1)  # not zero, so the bias path counts
    x = np.random.default_rng(1).standard_normal((2, 6, 16)).astype(np.float32)
    a = clgrad.tensor(x, device=dev, requires_grad=True)
    b = clgrad.tensor(x, device=dev, requires_grad=True)
    ya, w = m(a, a, a, need_weights=False, is_causal=causal)  # self-attention: the fused path
    yb, _ = m(b, b * 1.0, b * 1.0, need_weights=False, is_causal=causal)  # three inputs: the general path
    assert w is None and ya.shape == (2, 6, 16)
    ref = _mha_numpy(m, x, causal)
    np.testing.assert_allclose(ya.numpy(), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(yb.numpy(), ref, rtol=1e-4, atol=1e-5)
    ga = [t.numpy() for t in _grads(ya, [a] + list(m.parameters()))]
    gb = [t.numpy() for t in _grads(yb, [b] + list(m.parameters()))]
    for u, v in zip(ga, gb):
        np.testing.assert_allclose(u, v, rtol=1e-4, atol=1e-5)
    # (T, B, E) without batch_first
    m.batch_first = False
    yt, _ = m(a.transpose(0, 1), a.transpose(0, 1), a.transpose(0, 1), need_weights=False, is_causal=causal)
    np.testing.assert_allclose(yt.numpy().transpose(1, 0, 2), ref, rtol=1e-4, atol=1e-5)
    with pytest.raises(NotImplementedError, match="need_weights"):
        m(a, a, a)


def test_multihead_attention_against_torch():
    torch = pytest.importorskip("torch")
    clgrad.manual_seed(5)
    m = nn.MultiheadAttention(16, 2, batch_first=True)
    t = torch.nn.MultiheadAttention(16, 2, batch_first=True, dtype=torch.float64)
    sd = {k: torch.tensor(v.numpy(), dtype=torch.float64) for k, v in m.state_dict().items()}
    t.load_state_dict(sd)  # the same names as PyTorch's
    x = np.random.default_rng(2).standard_normal((3, 5, 16))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    ref, _ = t(*[torch.tensor(x)] * 3, need_weights=False, attn_mask=mask, is_causal=True)
    a = clgrad.tensor(x.astype(np.float32))
    y, _ = m(a, a, a, need_weights=False, is_causal=True)
    np.testing.assert_allclose(y.numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-5)
