"""clgrad.models: the C library's built-in models as Modules (their own tensors, trained by the
Python optimizers), the gpt model's generation, KV cache and GPT-2 files; each device against the
reference backend's float32 within 1e-4 (normalised)."""
import numpy as np
import pytest

import clgrad
import clgrad.nn.functional as F
from test_ops import nerr

IDS = np.random.default_rng(0).integers(0, 256, (2, 12)).astype(np.int32)


def tiny(dev, seed=1):
    return clgrad.models.gpt("tiny", device=dev, seed=seed)


def test_gpt_forward_matches_the_reference(dev):
    g, r = tiny(dev), tiny("ref")
    assert list(g.state_dict())[:2] == ["wte.weight", "wpe.weight"] and g.num_params() == sum(
        p.numel() for p in g.parameters())
    got = g(clgrad.tensor(IDS, device=dev)).numpy()
    want = r(clgrad.tensor(IDS, device="ref")).numpy()
    assert got.shape == (24, 256) and nerr(got, want) < 1e-4


def test_python_optimizer_trains_the_c_model(dev):
    g = tiny(dev)
    opt = clgrad.optim.AdamW(g.parameters(), lr=1e-3)
    x = clgrad.tensor(IDS, device=dev)
    y = clgrad.tensor(np.roll(IDS, -1, 1).reshape(-1), device=dev)
    losses = []
    for _ in range(4):
        opt.zero_grad()
        loss = F.cross_entropy(g(x), y)
        loss.backward()
        assert g.state_dict()["wte.weight"].grad is not None  # the gradient lands on the C model's tensor
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] - 0.5
    # the parameters are the C model's own: a fresh model loaded with them gives the same logits
    h = tiny(dev, seed=2)
    h.load_state_dict(g.state_dict())
    assert nerr(h(x).numpy(), g(x).numpy()) < 1e-6


def test_generate_cache_and_stops(dev):
    g = tiny(dev)
    a = g.generate([1, 2, 3], max_new_tokens=10, temperature=0)
    assert len(a) == 10 and a == g.generate([1, 2, 3], max_new_tokens=10, temperature=0, use_cache=False)
    assert a == tiny("ref").generate([1, 2, 3], max_new_tokens=10, temperature=0)
    s1 = g.generate([4], max_new_tokens=12, temperature=0.9, top_k=20, top_p=0.9, seed=5)
    assert s1 == g.generate([4], max_new_tokens=12, temperature=0.9, top_k=20, top_p=0.9, seed=5)
    seen = []
    out = g.generate([4], max_new_tokens=12, temperature=0.9, top_k=20, top_p=0.9, seed=5,
                     on_token=lambda i: seen.append(i) or len(seen) == 3)
    assert out == seen == s1[:3]
    assert g.generate([1, 2, 3], max_new_tokens=10, temperature=0, stop_ids=[a[2]]) == a[:a.index(a[2]) + 1]
    tok = clgrad.text.Tokenizer.bytes()
    text = tok.decode_bytes(a)
    cut = g.generate([1, 2, 3], max_new_tokens=10, temperature=0, stop=[text[3:5]], tokenizer=tok)
    assert tok.decode_bytes(cut).endswith(text[3:5]) and len(cut) <= 5
    with pytest.raises(ZeroDivisionError):
        g.generate([1], max_new_tokens=3, on_token=lambda i: 1 / 0)
    with pytest.raises(ValueError, match="tokenizer"):
        g.generate([1], stop=["x"])


def test_kv_cache_equals_the_full_forward(dev):
    g = tiny(dev).eval()
    full = g(clgrad.tensor(IDS[:1], device=dev)).numpy()
    c = g.kv_cache(batch=1)
    first = c.forward(clgrad.tensor(IDS[:1, :8], device=dev)).numpy()
    last = c.forward(clgrad.tensor(IDS[:1, 8:], device=dev)).numpy()
    assert c.len() == 12
    assert nerr(np.concatenate([first, last]), full) < 1e-4
    c.reset()
    assert c.len() == 0


def test_gpt2_files_and_moves(dev, tmp_path):
    g = tiny("ref", seed=3)
    g.save_gpt2(tmp_path / "g.safetensors")
    h = tiny("ref", seed=4)
    h.load_gpt2(tmp_path / "g.safetensors")
    for (k, a), (_, b) in zip(g.state_dict().items(), h.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    with pytest.raises(clgrad.FormatError):
        clgrad.models.build("gpt", device="ref", vocab=256, seq_len=256, dim=64, heads=4, layers=2).load_gpt2(
            tmp_path / "g.safetensors")
    h.to(dev)
    assert all(p.device == dev for p in h.parameters())
    want = g(clgrad.tensor(IDS, device="ref")).numpy()
    assert nerr(h(clgrad.tensor(IDS, device=dev)).numpy(), want) < 1e-4


def test_built_in_models_and_gfnet_block(dev):
    assert clgrad.models.is_language_model("gpt") and not clgrad.models.is_language_model("mlp")
    assert clgrad.models.gpt_preset("gpt2-small")["dim"] == 768
    m = clgrad.models.build("mlp", device=dev)
    assert m(clgrad.zeros(3, 784, device=dev)).shape == (3, 10)
    t = clgrad.models.build("transformer", device=dev, vocab=20, seq_len=8, dim=16, heads=2, layers=1)
    assert t(clgrad.zeros(2, 8, dtype=clgrad.int32, device=dev)).shape == (16, 20)
    with pytest.raises(clgrad.DTypeError):  # an earlier failure's status must not stand for the next one's
        clgrad.zeros(2, device=dev) + clgrad.zeros(2, dtype=clgrad.int32, device=dev)
    with pytest.raises(ValueError, match="resnet"):
        clgrad.models.build("resnet", device=dev)
    rng = np.random.default_rng(2)
    d, h, w = 4, 3, 4
    shapes = [(d,), (d,), (d, h, w // 2 + 1, 2), (d,), (d,), (4 * d, d), (4 * d,), (d, 4 * d), (d,)]
    ps = [rng.uniform(-0.5, 0.5, s) for s in shapes]
    x = rng.uniform(-1, 1, (2, h, w, d))
    out = {}
    for device in ("ref", dev):
        xt = clgrad.tensor(x, dtype=clgrad.float32, device=device, requires_grad=True)
        y = clgrad.models.gfnet_block(xt, [clgrad.tensor(p, dtype=clgrad.float32, device=device) for p in ps])
        y.sum().backward()
        out[device] = (y.numpy(), xt.grad.numpy())
    assert out["ref"][0].shape == x.shape
    assert nerr(out[dev][0], out["ref"][0]) < 1e-4 and nerr(out[dev][1], out["ref"][1]) < 1e-4


def test_checkpoint_files_both_ways(dev, tmp_path):
    """A Python model's checkpoint in `clgrad train --save`'s format: read back (metadata,
    tokenizer, weights) and, where the command is at hand ($CLGRAD_BIN), `clgrad generate` from it
    gives the ids Python's generate does."""
    import os
    import subprocess
    tok = clgrad.text.Tokenizer.bytes()
    g = tiny(dev, seed=3)
    path = tmp_path / "g.safetensors"
    g.save_checkpoint(path, tokenizer=tok, epochs_done=2, seed=3)
    meta = clgrad.models.read_checkpoint_meta(path)
    assert (meta["model"], meta["dim"], meta["layers"], meta["epochs_done"]) == ("gpt", 128, 4, 2)
    h = clgrad.models.load_checkpoint(path, device=dev)
    assert h.tokenizer == tok and h.checkpoint_meta["seed"] == 3
    for (k, a), (_, b) in zip(g.state_dict().items(), h.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    want = g.generate("Hi", max_new_tokens=6, temperature=0, tokenizer=tok)
    other = tiny(dev, seed=9)
    other.load_checkpoint(path)
    assert other.generate("Hi", max_new_tokens=6, temperature=0, tokenizer=tok) == want
    assert clgrad.text.fingerprint(b"abc") == "bytes=3 fnv1a64=%016x" % clgrad.text.text_hash(b"abc")
    cli = os.environ.get("CLGRAD_BIN")
    if cli and os.path.exists(cli):
        out = subprocess.run([cli, "generate", "--checkpoint", str(path), "--prompt", "Hi", "--tokens", "6",
                              "--temperature", "0", "--device", "ref"], capture_output=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.rstrip(b"\n") == b"Hi" + tok.decode_bytes(want)
