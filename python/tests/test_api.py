"""The Python API's own behaviour: tensors in and out, autograd switches, modules, errors, the
configuration, devices and memory."""
import os

import numpy as np
import pytest

import clgrad
import clgrad.nn as nn
import clgrad.nn.functional as F


def test_devices_listed():
    ds = clgrad.devices()
    assert ds[0]["type"] == "ref" and ds[0]["index"] == 0
    assert all({"name", "platform", "type", "global_mem"} <= set(d) for d in ds)
    assert clgrad.device("ref").index == 0
    for d in ds:  # a vendor's name finds its device: clgrad.device("pocl"), ("intel")
        vendor = d["platform_vendor"].lower()
        for word in ("pocl", "intel"):
            if word in vendor:
                i = clgrad.device(word).info
                assert word in (i["platform_vendor"] + i["platform"] + i["name"]).lower(), (word, i)


def test_numpy_roundtrip(dev):
    for dt, npdt in ((clgrad.float32, np.float32), (clgrad.float64, np.float64), (clgrad.int32, np.int32),
                     (clgrad.float16, np.float16)):
        a = (np.arange(12).reshape(3, 4) - 5).astype(npdt)
        t = clgrad.tensor(a, device=dev)
        assert t.dtype is dt and t.shape == (3, 4) and t.ndim == 2 and t.numel() == 12
        np.testing.assert_array_equal(t.numpy(), a)
        np.testing.assert_array_equal(np.asarray(t), a)
    assert clgrad.tensor(2.5, device=dev).item() == 2.5
    assert clgrad.tensor([1, 2], device=dev).dtype is clgrad.int32
    assert clgrad.from_numpy(np.ones(3, np.float64)).dtype is clgrad.float64


def test_dlpack_to_numpy(dev):
    t = clgrad.arange(6, dtype=clgrad.float32, device=dev).reshape(2, 3)
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(6, dtype=np.float32).reshape(2, 3))


def test_creation(dev):
    assert clgrad.zeros(2, 3, device=dev).numpy().sum() == 0
    assert clgrad.ones((2, 3), device=dev).numpy().sum() == 6
    np.testing.assert_array_equal(clgrad.full((2,), 7.0, device=dev).numpy(), [7, 7])
    np.testing.assert_array_equal(clgrad.arange(2, 11, 3, device=dev).numpy(), [2, 5, 8])
    clgrad.manual_seed(1)
    a = clgrad.rand(100, device=dev).numpy()
    clgrad.manual_seed(1)
    b = clgrad.rand(100, device="ref").numpy()
    np.testing.assert_array_equal(a, b)  # counter-based: the same numbers on every device
    assert 0 <= a.min() and a.max() < 1
    r = clgrad.randn(4000, device=dev).numpy()
    assert abs(r.mean()) < 0.1 and abs(r.std() - 1) < 0.1


def test_repr_and_indexing(dev):
    t = clgrad.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=dev)
    assert "tensor([[1., 2., 3.]," in repr(t)
    np.testing.assert_array_equal(t[1].numpy(), [4, 5, 6])
    np.testing.assert_array_equal(t[:, 1].numpy(), [2, 5])
    np.testing.assert_array_equal(t[..., -1].numpy(), [3, 6])
    assert t[None].shape == (1, 2, 3) and t[:, None].shape == (2, 1, 3)
    np.testing.assert_array_equal(t[:, clgrad.tensor([2, 0], device=dev)].numpy(), [[3, 1], [6, 4]])
    with pytest.raises(IndexError):
        t[2]
    with pytest.raises(TypeError):
        t[1] = 0


def test_autograd(dev):
    x = clgrad.tensor([[1.0, -2.0], [3.0, 0.5]], device=dev, requires_grad=True)
    y = (x * x * 3 + x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.numpy() + 1, rtol=1e-6)
    x.grad = None
    assert x.grad is None
    # a given gradient, and retain_graph for a second pass
    z = x * 2
    z.backward(clgrad.ones(2, 2, device=dev), retain_graph=True)
    z.backward(clgrad.ones(2, 2, device=dev))
    np.testing.assert_allclose(x.grad.numpy(), 4 * np.ones((2, 2)))
    d = x.detach()
    assert not d.requires_grad
    with clgrad.no_grad():
        w = x * 2
        assert not clgrad.is_grad_enabled()
    assert clgrad.is_grad_enabled() and not w.requires_grad

    @clgrad.no_grad()
    def f(t):
        return t * 3

    assert not f(x).requires_grad


class TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(8, 3)
        self.register_buffer("steps", clgrad.zeros(1))

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def test_module_discovery_and_state(dev, tmp_path):
    m = TwoLayer().to(dev)
    names = [n for n, _ in m.named_parameters()]
    assert names == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [type(c).__name__ for c in m.children()] == ["Linear", "ReLU", "Linear"]
    assert set(m.state_dict()) == set(names) | {"steps"}
    assert all(p.device == dev for p in m.parameters())
    x = clgrad.randn(5, 4, device=dev)
    y = m(x)
    assert y.shape == (5, 3)
    m2 = TwoLayer().to(dev)
    m2.load_state_dict({k: v.numpy() for k, v in m.state_dict().items()})
    np.testing.assert_array_equal(m2(x).numpy(), y.numpy())
    with pytest.raises(ValueError, match="missing: fc2.bias"):
        m2.load_state_dict({k: v for k, v in m.state_dict().items() if k != "fc2.bias"})
    bad = dict(m.state_dict())
    bad["fc1.weight"] = np.zeros((2, 2), np.float32)
    with pytest.raises(ValueError, match=r"fc1.weight: \(2, 2\) in the state, \(8, 4\) in the module"):
        m2.load_state_dict(bad)
    assert not m.eval().training and all(not c.training for c in m.modules())


def test_sequential_and_losses_train(dev):
    clgrad.manual_seed(0)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 4)).astype(np.float32)
    Y = (X[:, 0] + X[:, 1] > 0).astype(np.int32)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2)).to(dev)
    opt = clgrad.optim.Adam(model.parameters(), lr=0.05)
    x, y = clgrad.tensor(X, device=dev), clgrad.tensor(Y, device=dev)
    first = None
    for _ in range(60):
        opt.zero_grad()
        loss = nn.CrossEntropyLoss()(model(x), y)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < 0.3 * first
    acc = (model(x).argmax(1).numpy() == Y).mean()
    assert acc > 0.9


def test_errors_carry_the_library_message(dev):
    a = clgrad.ones(2, 3, device=dev)
    with pytest.raises(clgrad.ShapeError) as e:
        a @ clgrad.ones(4, 5, device=dev)
    assert "matmul" in str(e.value) and "(2, 3)" in str(e.value)
    assert isinstance(e.value, ValueError) and isinstance(e.value, clgrad.Error)
    with pytest.raises(TypeError, match="expected a clgrad.Tensor"):
        F.linear(a, "w")
    with pytest.raises(clgrad.DeviceError):
        clgrad.device("no-such-device-name")
    if dev.index != 0:
        with pytest.raises(clgrad.DeviceError, match="device"):
            a + clgrad.ones(2, 3, device="ref")
    with pytest.raises(clgrad.DTypeError, match="cast"):
        clgrad.ones(3, device=dev).to(clgrad.int32)
    with pytest.raises(TypeError, match="dtype"):
        clgrad.zeros(2, dtype="complex")
    for cls, base in ((clgrad.OutOfMemoryError, MemoryError), (clgrad.UnsupportedError, NotImplementedError),
                      (clgrad.FormatError, ValueError), (clgrad.DeviceError, RuntimeError)):
        assert issubclass(cls, base) and issubclass(cls, clgrad.Error)


def test_config():
    assert clgrad.config.get("GEMM") in ("auto", "own", "clblast")
    old = clgrad.config.get("FUSED")
    clgrad.config.set("FUSED", False)
    assert clgrad.config.get("CLGRAD_FUSED") == "0"
    clgrad.config.set("FUSED", None)
    assert clgrad.config.get("FUSED") == "1"
    clgrad.config.set("FUSED", old)
    with pytest.raises(ValueError, match=r"CLGRAD_GEMM_SPLIT='99': expected an integer in 0..64"):
        clgrad.config.set("GEMM_SPLIT", 99)
    with pytest.raises(KeyError):
        clgrad.config.get("NOPE")
    names = {o["name"] for o in clgrad.config.options()}
    assert {"GEMM", "DEVICE", "CACHE_DIR"} <= names


def test_optim_param_groups_and_schedulers(dev):
    m = TwoLayer().to(dev)
    decay = [p for n, p in m.named_parameters() if n.endswith("weight")]
    no_decay = [p for n, p in m.named_parameters() if n.endswith("bias")]
    opt = clgrad.optim.AdamW([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}], lr=0.1)
    assert opt.param_groups[0]["weight_decay"] == 0.01 and opt.param_groups[1]["weight_decay"] == 0.0
    sched = clgrad.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(5):
        (m(clgrad.randn(3, 4, device=dev)) ** 2).mean().backward()
        opt.step()
        opt.zero_grad()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs == [0.1, 0.05, 0.05, 0.025, 0.025]
    with pytest.raises(ValueError, match="betas"):
        clgrad.optim.Adam(m.parameters(), betas=(1.0, 0.9))


def test_clip_grad_norm(dev):
    p = nn.Parameter(clgrad.tensor([3.0, 4.0], device=dev))
    (p * clgrad.tensor([1.0, 1.0], device=dev)).sum().backward()  # grad (1, 1), norm sqrt(2)
    norm = nn.utils.clip_grad_norm_([p], 1.0)
    assert abs(norm.item() - 2 ** 0.5) < 1e-6
    np.testing.assert_allclose(p.grad.numpy(), [2 ** -0.5] * 2, rtol=1e-5)


MEMORY_LOOP = r"""
import gc, json, sys
import clgrad, clgrad.nn as nn

def rss_kib():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))

dev, steps = clgrad.device(int(sys.argv[1])), int(sys.argv[2])
m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to(dev)
opt = clgrad.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
x = clgrad.randn(32, 4, device=dev)

def run(n):
    for i in range(n):
        opt.zero_grad()
        loss = (m(x) ** 2).mean()
        loss.backward()
        opt.step()
        if i % 100 == 0:  # a loop reads its loss now and then; one that never does lets the
            loss.item()   # device's queue (and the driver's memory for it) grow thousands of steps deep
    clgrad.synchronize(dev)
    gc.collect()

run(1000)  # warm-up: kernels built, the allocator's buckets and the driver's pools filled
rss, dev0 = [rss_kib()], clgrad.memory_stats(dev)["bytes_in_use"]
for _ in range(4):
    run(steps // 4)
    rss.append(rss_kib())
print(json.dumps([rss, dev0, clgrad.memory_stats(dev)["bytes_in_use"]]))
"""


def test_memory_is_given_back(cl_dev):
    """10,000 training steps in a process of their own: graphs and tensors freed by reference
    counting, the resident size within 5% of where it was after warm-up, the device's bytes in use
    back where they were."""
    import json
    import subprocess
    import sys
    steps = int(os.environ.get("CLGRAD_PYTEST_MEMORY_STEPS", "10000"))
    out = subprocess.run([sys.executable, "-c", MEMORY_LOOP, str(cl_dev.index), str(steps)], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    rss, dev0, dev1 = json.loads(out.stdout.strip().splitlines()[-1])
    print("resident KiB every %d steps: %s" % (steps // 4, rss))
    assert rss[-1] < rss[0] * 1.05, rss
    assert dev1 <= dev0, (dev0, dev1)


def test_autocast_and_grad_scaler(cl_dev):
    lin = nn.Linear(8, 4).to(cl_dev)
    x = clgrad.randn(16, 8, device=cl_dev)
    with clgrad.autocast(dtype=clgrad.float16):
        y = lin(x)
        assert y.dtype is clgrad.float16
    assert lin(x).dtype is clgrad.float32
    ref = lin(x).numpy()
    assert np.max(np.abs(y.float().numpy() - ref)) < 1e-2 * max(1, np.max(np.abs(ref)))
    opt = clgrad.optim.SGD(lin.parameters(), lr=0.1)
    scaler = clgrad.amp.GradScaler(init_scale=1024.0)
    before = lin.weight.numpy()
    with clgrad.autocast():
        loss = (lin(x).float() ** 2).mean()
    scaler.scale(loss).backward()
    assert scaler.step(opt) and scaler.get_scale() == 1024.0
    scaler.update()
    moved = lin.weight.numpy() - before
    assert np.abs(moved).max() > 0
    # an overflowing gradient: the step is skipped and the scale halved
    opt.zero_grad()
    (lin(x).sum() * 1e38).backward()  # 16 rows of 1e38: the weights' gradients overflow to inf
    w = lin.weight.numpy()
    big = clgrad.amp.GradScaler(init_scale=1e30)
    assert not big.step(opt) and big.get_scale() == 5e29 and big.skipped_steps == 1
    np.testing.assert_array_equal(lin.weight.numpy(), w)


def test_rnn_cells_match_pytorch_formulas(dev):
    """GRUCell and LSTMCell against PyTorch's equations in float64 numpy, and a gradient."""
    rng = np.random.default_rng(2)
    x, h, c = (rng.normal(size=s).astype(np.float32).astype(np.float64) for s in ((3, 5), (3, 4), (3, 4)))
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    gru = nn.GRUCell(5, 4).to(dev)
    W = {n: p.numpy().astype(np.float64) for n, p in gru.named_parameters()}
    gi, gh = x @ W["weight_ih"].T + W["bias_ih"], h @ W["weight_hh"].T + W["bias_hh"]
    r, z = sig(gi[:, :4] + gh[:, :4]), sig(gi[:, 4:8] + gh[:, 4:8])
    n = np.tanh(gi[:, 8:] + r * gh[:, 8:])
    f32 = lambda a: clgrad.tensor(a, dtype=clgrad.float32, device=dev)  # noqa: E731
    xt = f32(x).requires_grad_()
    got = gru(xt, f32(h))
    np.testing.assert_allclose(got.numpy(), (1 - z) * n + z * h, atol=1e-5)
    got.sum().backward()
    assert xt.grad.shape == (3, 5) and np.isfinite(xt.grad.numpy()).all()
    lstm = nn.LSTMCell(5, 4).to(dev)
    W = {n: p.numpy().astype(np.float64) for n, p in lstm.named_parameters()}
    g = x @ W["weight_ih"].T + W["bias_ih"] + h @ W["weight_hh"].T + W["bias_hh"]
    i, f, gg, o = sig(g[:, :4]), sig(g[:, 4:8]), np.tanh(g[:, 8:12]), sig(g[:, 12:])
    c2 = f * c + i * gg
    h2, c2g = lstm(f32(x), (f32(h), f32(c)))
    np.testing.assert_allclose(c2g.numpy(), c2, atol=1e-5)
    np.testing.assert_allclose(h2.numpy(), o * np.tanh(c2), atol=1e-5)
    assert [n for n, _ in lstm.named_parameters()] == ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]


def test_default_device_reaches_modules(cl_dev):
    """set_default_device: new tensors and new modules' parameters go there (not to the C
    library's own default)."""
    clgrad.set_default_device(cl_dev)
    try:
        assert clgrad.zeros(2).device == cl_dev
        assert all(p.device == cl_dev for p in nn.Linear(3, 2).parameters())
        assert nn.Embedding(4, 2).weight.device == cl_dev
    finally:
        clgrad.set_default_device(None)


def test_profile_ops_counts_each_op(dev):
    """clgrad.profile_ops: the C per-op timer over a block; ops outside it are not counted."""
    a, b = clgrad.ones(4, 3, device=dev), clgrad.ones(4, 3, device=dev)
    (a * b).numpy()
    with clgrad.profile_ops(dev) as p:
        for _ in range(3):
            c = a + b
        c.sum()
    rows = {k: (n, s) for k, n, s in p.rows}
    assert rows["add (4, 3)"][0] == 3 and rows["sum ()"][0] == 1, p.rows
    assert not any(k.startswith("mul") for k in rows) and all(s >= 0 for _, s in rows.values())
    assert "add (4, 3)" in p.table(steps=3)
    s0 = clgrad.memory_stats(dev)
    (a + b).numpy()
    s1 = clgrad.memory_stats(dev)
    if dev.index != 0:  # the reference backend counts no commands
        assert (s1["n_launch"] - s0["n_launch"], s1["n_download"] - s0["n_download"]) == (1, 1)


def test_deep_graph_is_freed_without_a_crash():
    """x = x + b 200k times then dropped: freeing the graph used to recurse once a node and
    overflowed the C stack (a segfault of the interpreter)."""
    a = clgrad.ones(1, device="ref", requires_grad=True)
    b = clgrad.ones(1, device="ref", requires_grad=True)
    x = a
    for _ in range(200000):
        x = x + b
    assert x.item() == 200001
    del x
    assert (a + b).item() == 2
