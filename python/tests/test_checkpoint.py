"""clgrad.save / clgrad.load: round trips, the atomic writer, malformed files, and checkpoints
moving both ways between the clgrad command and a Python model of the same architecture."""
import gzip
import os
import re
import subprocess

import numpy as np
import pytest

import clgrad
import clgrad.nn as nn

DATA = "/usr/share/datasets/fashion-mnist"


def test_roundtrip(dev, tmp_path):
    state = {"w": clgrad.randn(3, 4, device=dev), "b": clgrad.arange(5, dtype=clgrad.int32, device=dev),
             "h": clgrad.ones(2, dtype=clgrad.float16, device=dev), "np": np.eye(2)}
    path = tmp_path / "s.safetensors"
    clgrad.save(state, path, metadata={"epoch": "3"})
    got, meta = clgrad.load(path, device=dev, with_metadata=True)
    assert meta == {"epoch": "3"} and set(got) == set(state)
    for k, v in state.items():
        want = v.numpy() if isinstance(v, clgrad.Tensor) else v
        np.testing.assert_array_equal(got[k].numpy(), want)
        assert got[k].device == dev
    st = pytest.importorskip("safetensors.numpy")
    np.testing.assert_array_equal(st.load_file(str(path))["w"], state["w"].numpy())


def test_module_state_roundtrip(tmp_path):
    m = nn.Sequential(nn.Linear(4, 3), nn.LayerNorm(3))
    clgrad.save(m.state_dict(), tmp_path / "m.safetensors")
    m2 = nn.Sequential(nn.Linear(4, 3), nn.LayerNorm(3))
    m2.load_state_dict(clgrad.load(tmp_path / "m.safetensors"))
    x = clgrad.randn(2, 4)
    np.testing.assert_array_equal(m(x).numpy(), m2(x).numpy())


def test_errors_lose_nothing(tmp_path):
    path = tmp_path / "keep.safetensors"
    clgrad.save({"a": clgrad.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises(clgrad.Error):
        clgrad.save({"a": clgrad.zeros(2)}, tmp_path)  # a folder: the write fails, nothing is left behind
    with pytest.raises(TypeError):
        clgrad.save({"a": clgrad.ones(1)}, path, metadata={"k": 1})
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["keep.safetensors"]
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(before[:-3])
    with pytest.raises(clgrad.FormatError, match="bad.safetensors"):
        clgrad.load(bad)
    with pytest.raises(clgrad.IOError):
        clgrad.load(tmp_path / "absent.safetensors")


class CliMLP(nn.Module):
    """`clgrad train --model mlp` as nn modules: the same parameter names (model.N.*)."""

    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                   nn.Linear(512, 10))

    def forward(self, x):
        return self.model(x)


def _test_set():
    def idx(name):
        raw = gzip.open(os.path.join(DATA, name)).read()
        nd = raw[3]
        return np.frombuffer(raw, np.uint8, offset=4 + 4 * nd).reshape(np.frombuffer(raw, ">i4", nd, 4))
    x = idx("t10k-images-idx3-ubyte.gz").reshape(-1, 784).astype(np.float32) / 255.0
    return (x - 0.2860) / 0.3530, idx("t10k-labels-idx1-ubyte.gz").astype(np.int64)


def _accuracy(model, x, y):
    with clgrad.no_grad():
        pred = np.concatenate([model(clgrad.tensor(x[i:i + 2000])).argmax(1).numpy() for i in range(0, len(x), 2000)])
    return float((pred == y).mean())


def _cli_accuracy(cli, path):
    out = subprocess.run([cli, "eval", "--checkpoint", str(path), "--device", "1"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return float(re.search(r"test accuracy ([0-9.]+)", out.stdout + out.stderr).group(1))


def test_cli_checkpoints_both_ways(tmp_path):
    cli = os.environ.get("CLGRAD_BIN")
    if not cli or not os.path.exists(cli) or not os.path.exists(os.path.join(DATA, "t10k-images-idx3-ubyte.gz")):
        pytest.skip("needs CLGRAD_BIN (scripts/test.sh sets it) and Fashion-MNIST")
    if len(clgrad.devices()) < 2:
        pytest.skip("needs an OpenCL device")
    path = tmp_path / "cli.safetensors"
    subprocess.run([cli, "train", "--model", "mlp", "--epochs", "1", "--limit", "2048", "--device", "1", "--save",
                    str(path)], check=True, capture_output=True, timeout=300)
    x, y = _test_set()
    tensors, meta = clgrad.load(path, device=1, with_metadata=True)
    m = CliMLP().to(1)
    m.load_state_dict({k: v for k, v in tensors.items() if k.startswith("model.")})
    acc = _accuracy(m, x, y)
    # the command evaluates in batches of 128 with its fused linear+ReLU, Python in 2000-row batches
    # unfused: other roundings, so a near-tie may flip; 3 images in 10,000 at most
    assert abs(acc - _cli_accuracy(cli, path)) <= 3e-4
    # a few steps in Python, saved with the command's metadata and optimizer state, evaluated by it
    opt = clgrad.optim.SGD(m.parameters(), lr=0.05)
    for i in range(20):
        opt.zero_grad()
        nn.CrossEntropyLoss()(m(clgrad.tensor(x[i * 64:(i + 1) * 64], device=1)),
                              clgrad.tensor(y[i * 64:(i + 1) * 64].astype(np.int32), device=1)).backward()
        opt.step()
    acc2 = _accuracy(m, x, y)
    assert acc2 != acc
    state = dict(tensors)
    state.update(m.state_dict())
    out = tmp_path / "py.safetensors"
    clgrad.save(state, out, metadata=meta)
    assert abs(acc2 - _cli_accuracy(cli, out)) <= 3e-4
