"""clgrad.Trainer and clgrad.train: a Python nn.Module through the C trainer (its own tensors
trained, the same curve on every device), tasks, a Python loss, callbacks, checkpoints and
resume, the built-in models on one or several devices, exceptions from inside the run, Ctrl-C."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import clgrad
import clgrad.nn as nn
import clgrad.nn.functional as F
from conftest import DEVICES


def _data(n=256, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 8)).astype(np.float32)
    s = np.stack([x[:, 0] + x[:, 1], x[:, 2] - x[:, 3], 0.5 * x[:, 4] - x[:, 5]], 1)
    return x, s.argmax(1).astype(np.int32)


class Net(nn.Module):
    def __init__(self, device=None):
        super().__init__()
        self.fc1 = nn.Linear(8, 16, device=device)
        self.fc2 = nn.Linear(16, 3, device=device)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.fc2(F.relu(self.fc1(x)))


def _net(dev):
    clgrad.manual_seed(3)
    return Net(dev)


def _quiet(**kw):
    kw.setdefault("progress", False)
    kw.setdefault("batch_size", 32)
    kw.setdefault("lr", 1e-2)
    return kw


def test_python_model_trains_its_own_tensors(dev):
    train, test = _data(256, 0), _data(128, 1)
    model = _net(dev)
    before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    w = model.fc1.weight
    t = clgrad.Trainer(model, epochs=4, schedule="cosine", **_quiet())
    hist = t.fit(train, test)
    assert [h.epoch for h in hist] == [1, 2, 3, 4] and t.epochs_done == 4
    assert hist[-1].test_loss < hist[0].test_loss and hist[-1].test_metric > 0.7, hist[-1]
    assert hist[-1]["metric_name"] == "accuracy" and hist[-1].test_acc == hist[-1].test_metric
    assert model.fc1.weight is w  # the same Parameter, trained in place
    after = model.state_dict()
    assert all(not np.array_equal(before[k], after[k].numpy()) for k in before)
    assert model.calls >= 4 * 8  # the Python forward ran every step (and in evaluation)
    ev = t.evaluate(test)
    assert ev["accuracy"] == pytest.approx(hist[-1].test_metric) and ev.loss == pytest.approx(hist[-1].test_loss)
    assert model.training  # evaluation's eval() undone


def test_same_curve_on_every_device():
    losses = []
    for d in DEVICES:
        t = clgrad.Trainer(_net(clgrad.device(d)), epochs=2, **_quiet())
        losses.append([h.test_loss for h in t.fit(_data(256, 0), _data(128, 1))])
    for other in losses[1:]:
        np.testing.assert_allclose(other, losses[0], rtol=1e-4)


def test_python_loss_and_callbacks(cl_dev):
    seen = {"steps": [], "epochs": [], "begins": 0, "fit": 0}

    class Record(clgrad.Callback):
        def on_fit_start(self, trainer):
            seen["fit"] += 1

        def on_train_epoch_start(self, trainer, epoch, epochs, steps):
            seen["begins"] += 1

        def on_step_end(self, trainer, info):
            seen["steps"].append((info.step, info["loss"]))

        def on_epoch_end(self, trainer, info):
            seen["epochs"].append(info.train_loss)

    calls = []

    def loss(out, target):  # the classification task's target: one-hot rows (B, 3)
        calls.append(target.shape)
        return F.cross_entropy(out, target)

    t = clgrad.Trainer(_net(cl_dev), epochs=2, loss=loss, callbacks=[Record()], log_every_n_steps=3, **_quiet())
    hist = t.fit(_data(256, 0), _data(128, 1))
    assert seen["fit"] == 1 and seen["begins"] == 2 and len(seen["epochs"]) == 2
    assert [s for s, _ in seen["steps"]] == [3, 6, 8] * 2  # every 3rd step and each epoch's last
    assert all(np.isfinite(v) for _, v in seen["steps"])
    assert calls and calls[0] == (32, 3)
    # the same run with the task's own cross-entropy gives the same curve
    ref = clgrad.Trainer(_net(cl_dev), epochs=2, **_quiet()).fit(_data(256, 0), _data(128, 1))
    np.testing.assert_allclose([h.train_loss for h in hist], [h.train_loss for h in ref], rtol=1e-5)


def test_reconstruction_task(cl_dev):
    class AE(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc, self.dec = nn.Linear(8, 4, device=cl_dev), nn.Linear(4, 8, device=cl_dev)

        def forward(self, x):
            return self.dec(self.enc(x).tanh())

    x, _ = _data(256, 0)
    clgrad.manual_seed(1)
    t = clgrad.Trainer(AE(), task="reconstruction_mse", epochs=3, **_quiet())
    hist = t.fit(clgrad.data.TensorDataset(x), clgrad.data.TensorDataset(x))
    assert hist[0].metric_name == "mse" and hist[-1].test_metric < hist[0].test_metric
    with pytest.raises(ValueError, match="task 'nope'"):
        clgrad.Trainer(AE(), task="nope")


def test_regression_task(cl_dev):
    x, _ = _data(256, 0)
    y = np.stack([x[:, 0] - 2 * x[:, 1], x[:, 2] * 0.5], 1).astype(np.float32)  # float targets (256, 2)

    class Reg(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 2, device=cl_dev)

        def forward(self, x):
            return self.fc(x)

    clgrad.manual_seed(1)
    t = clgrad.Trainer(Reg(), task="regression", epochs=5, **_quiet(lr=0.05))
    hist = t.fit((x, y), (x, y))
    assert hist[0].metric_name == "rmse" and hist[-1].test_metric < 0.5 * hist[0].test_metric, hist
    assert t.evaluate((x, y))["rmse"] == pytest.approx(hist[-1].test_metric)


def test_checkpoint_and_resume(tmp_path, cl_dev):
    path = str(tmp_path / "net.safetensors")
    full = clgrad.Trainer(_net(cl_dev), epochs=3, **_quiet())
    full.fit(_data(256, 0))
    # two epochs, saved after each; then a new trainer resumes from the file for the third
    half2 = clgrad.Trainer(_net(cl_dev), epochs=2, save=path, **_quiet())
    h = half2.fit(_data(256, 0))
    assert h[-1].saved == path and os.path.exists(path)
    state = clgrad.load(path)
    assert {k[len("model."):] for k in state if k.startswith("model.")} == set(half2.model.state_dict())
    model = _net(cl_dev)
    resumed = clgrad.Trainer(model, epochs=3, **_quiet())
    h = resumed.fit(_data(256, 0), ckpt_path=path)
    assert [e.epoch for e in h] == [3] and resumed.epochs_done == 3
    for k, v in full.state_dict().items():
        np.testing.assert_allclose(model.state_dict()[k].numpy(), v.numpy(), atol=1e-6, err_msg=k)
    with pytest.raises(ValueError, match="holds model 'Net', not 'Other'"):
        other = clgrad.Trainer(_net(cl_dev), name="Other", **_quiet())
        other.fit(_data(64, 0), ckpt_path=path)


def test_builtin_models(cl_dev):
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (256, 1, 28, 28)).astype(np.float32)
    y = (x.reshape(256, -1)[:, :392].mean(1) > x.reshape(256, -1)[:, 392:].mean(1)).astype(np.int32)
    ds = clgrad.data.TensorDataset(x, y, num_classes=10)  # the mlp's 10 outputs
    hist = clgrad.train(model="mlp", data=ds, test=ds, epochs=2, devices=[cl_dev], **_quiet())
    assert len(hist) == 2 and hist[-1].metric_name == "accuracy" and np.isfinite(hist[-1].train_loss)
    t = clgrad.Trainer("mlp", epochs=1, devices=[cl_dev], **_quiet())
    t.fit(ds)
    assert "1.weight" in t.state_dict() and t.state_dict()["1.weight"].shape == (512, 784)
    cl = [d for d in DEVICES if d != 0]
    if len(cl) >= 2:  # data parallel over two OpenCL devices (the reference is slow at this size)
        hist = clgrad.train(model="mlp", data=ds, epochs=1, devices=cl[:2], **_quiet())
        assert hist[0].replicas == 2
    with pytest.raises(ValueError, match="one device"):
        clgrad.Trainer(_net(None), devices=DEVICES[:1] * 2)


def test_exception_in_forward_comes_back(cl_dev):
    class Broken(Net):
        def forward(self, x):
            if self.calls == 5:
                raise ZeroDivisionError("boom in forward")
            return super().forward(x)

    clgrad.manual_seed(3)
    model = Broken(cl_dev)
    t = clgrad.Trainer(model, epochs=2, **_quiet())
    data = _data(256, 0)
    with pytest.raises(ZeroDivisionError, match="boom in forward"):
        t.fit(data)
    assert t.epochs_done == 0
    with pytest.raises(TypeError, match="forward"):
        class NotTensor(Net):
            def forward(self, x):
                return 1.0
        clgrad.Trainer(NotTensor(cl_dev), epochs=1, **_quiet()).fit(_data(64, 0))
    model.calls = 6  # past the failing call: the same trainer goes on
    assert len(t.fit(data)) == 2
    with pytest.raises(ValueError, match="other datasets"):
        t.fit(_data(256, 0))


def test_progress_bar_lines():
    import io
    out = io.StringIO()
    t = clgrad.Trainer(_net(None), epochs=2, progress=clgrad.ProgressBar(out, tty=False), batch_size=32)
    t.fit(_data(128, 0), _data(64, 1))
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and lines[0].startswith("epoch 1/2: train loss ") and "test accuracy" in lines[0]
    out = io.StringIO()
    t = clgrad.Trainer(_net(None), epochs=1, progress=clgrad.ProgressBar(out, tty=True), batch_size=32,
                       log_every_n_steps=1)
    t.fit(_data(128, 0))
    assert out.getvalue().count("\r") >= 4 and "] 4/4" in out.getvalue()


CTRL_C = textwrap.dedent("""
    import sys, time
    import numpy as np
    import clgrad, clgrad.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(784, 256), nn.Linear(256, 10)
        def forward(self, x):
            return self.fc2(self.fc1(x).relu())

    class Started(clgrad.Callback):  # no Python runs between the steps after this (a built-in model)
        def on_train_epoch_start(self, trainer, epoch, epochs, steps):
            print("started", flush=True)

    rng = np.random.default_rng(0)
    x = np.tile(rng.standard_normal((100, 784)).astype(np.float32), (600, 1))  # a long epoch, made fast
    y = np.tile(rng.integers(0, 10, 100).astype(np.int32), 600)
    model = Net() if sys.argv[2] == "python" else "mlp"
    t = clgrad.Trainer(model, epochs=50, batch_size=16, save=sys.argv[1], progress=False,
                       callbacks=[Started()], log_every_n_steps=10**9)
    try:
        t.fit((x, y))
    except KeyboardInterrupt:
        print("interrupted", t.epochs_done, flush=True)
        w = t.state_dict()["fc1.weight" if sys.argv[2] == "python" else "1.weight"].numpy()
        ev = t.evaluate((x[:512], y[:512]))
        print("usable", bool(np.isfinite(w).all()), bool(np.isfinite(ev.loss)), flush=True)
        raise
""")


@pytest.mark.parametrize("model", ["python", "mlp"])
def test_ctrl_c_stops_a_run(tmp_path, model):
    """SIGINT while the C trainer runs (a built-in model: no Python code between the steps but the
    trainer's check) raises KeyboardInterrupt promptly; the interpreter and the model stay usable,
    no checkpoint is written for the epoch cut short (on a fast machine an epoch may have finished
    before the signal: then its checkpoint is there, whole, and nothing else)."""
    path = tmp_path / "run.safetensors"
    p = subprocess.Popen([sys.executable, "-c", CTRL_C, str(path), model], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        assert line.strip() == "started", (line, p.stderr.read() if p.poll() is not None else "")
        time.sleep(0.05)
        t0 = time.perf_counter()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        took = time.perf_counter() - t0
    finally:
        if p.poll() is None:
            p.kill()
    done = [int(line.split()[1]) for line in out.splitlines() if line.startswith("interrupted ")]
    assert done and done[0] < 50 and "usable True True" in out, (out, err)
    assert p.returncode != 0 and "KeyboardInterrupt" in err.splitlines()[-1], err
    assert took < 5, "the run took %.1f s to stop" % took
    # no temporary file; a checkpoint only of epochs that finished
    assert os.listdir(tmp_path) == ([] if done[0] == 0 else ["run.safetensors"]), (done, os.listdir(tmp_path))


def test_tensors_kept_past_a_step_and_memory(cl_dev):
    """A Python model may keep a tensor of a step (made inside the C trainer's per-step scope):
    it stays valid after the step; and a trainer gives its device memory back when freed."""
    class Keeper(Net):
        def forward(self, x):
            self.last_in = x
            self.last_out = super().forward(x)
            return self.last_out

    clgrad.synchronize(cl_dev)
    before = clgrad.memory_stats(cl_dev)["bytes_in_use"]
    clgrad.manual_seed(3)
    model = Keeper(cl_dev)
    data = _data(256, 0)
    t = clgrad.Trainer(model, epochs=2, **_quiet())
    t.fit(data)
    assert model.last_in.shape == (32, 8) and np.isfinite(model.last_out.numpy()).all()
    rows = {r.tobytes() for r in data[0]}
    assert all(r.tobytes() in rows for r in model.last_in.numpy())  # still the batch's samples
    del t, model
    clgrad.synchronize(cl_dev)
    assert clgrad.memory_stats(cl_dev)["bytes_in_use"] == before
