"""clgrad.Trainer and clgrad.train: the C library's trainer (frontend/clgrad_train.h) from Python.

    model = MyNet()                                        # a clgrad.nn.Module of one's own
    trainer = clgrad.Trainer(model, epochs=5, lr=1e-3, schedule="cosine")
    history = trainer.fit(clgrad.data.FashionMNIST(train=True), clgrad.data.FashionMNIST(train=False))
    trainer.evaluate(test)                                 # {"accuracy": 0.88, "loss": 0.33}

    clgrad.train(model="mlp", data="fashion-mnist", epochs=5, devices=["pocl", "intel"])

The loop is the C trainer's, as `clgrad train` runs it: a Python model's forward is called from
it (its parameters and buffers are the trained tensors), and the optimizer (no weight decay for
tensors of fewer than 2 dims), the learning-rate schedule and warm-up, gradient clipping, mixed
precision with loss scaling, evaluation after each epoch, checkpoints (safetensors, written
atomically) and resuming are the C library's. A Python model trains on one device; the built-in
models ("mlp", "cnn", "transformer", "gfnet") on several (devices=[...], data parallel).

Ctrl-C stops a run between two steps (KeyboardInterrupt): the model and optimizer are as the last
step left them, and no checkpoint is written for the epoch cut short.
"""

import sys
import time

from . import _C
from ._tensor import Device, get_default_device
from .data import DataLoader, Dataset, FashionMNIST, TensorDataset
from .nn import Module

TASKS = ("classification", "language_model", "regression", "reconstruction", "reconstruction_mse")
PRECISIONS = {"fp32": "fp32", "32": "fp32", "32-true": "fp32", "mixed": "mixed", "16-mixed": "mixed"}


class Info(dict):
    """What the C trainer reports (clg_step_info, clg_epoch_info): a dict whose keys also read
    as attributes (info.train_loss, info["train_loss"])."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class Callback:
    """Hooks of a run, PyTorch Lightning's names; override what you need. on_step_end is called
    every log_every_n_steps steps (reading the running loss is a wait for the device), and at
    each epoch's last step."""

    def on_fit_start(self, trainer):
        pass

    def on_train_epoch_start(self, trainer, epoch, epochs, steps):
        pass

    def on_step_end(self, trainer, info):
        """info: epoch, step, steps, samples, loss (the epoch's mean so far), step_loss."""

    def on_epoch_end(self, trainer, info):
        """info: epoch, epochs, steps, samples, train_loss, test_metric, metric_name, test_loss,
        test_acc, seconds, samples_per_s, lr, saved, loss_scale, skipped_steps, peak_bytes, ..."""

    def on_fit_end(self, trainer):
        pass


def _fmt_time(s):
    s = max(0, int(s))
    return "%02d:%02d" % (s // 60, s % 60) if s < 3600 else "%d:%02d:%02d" % (s // 3600, s // 60 % 60, s % 60)


class ProgressBar(Callback):
    """A tqdm-style bar on a terminal (redrawn in place), plain lines otherwise: one per epoch."""

    def __init__(self, stream=None, tty=None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.start = 0.0

    def on_train_epoch_start(self, trainer, epoch, epochs, steps):
        self.start, self.label = time.perf_counter(), "epoch %d/%d" % (epoch, epochs)

    def on_step_end(self, trainer, info):
        if not self.tty:  # (Trainer then asks the C trainer for no step reports)
            return
        el = time.perf_counter() - self.start
        fill = 24 * info.step // max(1, info.steps)
        eta = el / info.step * (info.steps - info.step) if info.step else 0
        self.stream.write("\r%s [%s%s] %d/%d  %.0f samples/s  loss %.4f  %s elapsed, ETA %s " % (
            self.label, "#" * fill, "." * (24 - fill), info.step, info.steps, info.samples / el if el > 0 else 0,
            info.loss, _fmt_time(el), _fmt_time(eta)))
        self.stream.flush()

    def on_epoch_end(self, trainer, info):
        line = "epoch %d/%d: train loss %.4f" % (info.epoch, info.epochs, info.train_loss)
        if info.metric_name and info.test_metric == info.test_metric:
            line += ", test %s %.4f" % (info.metric_name, info.test_metric)
        if info.test_loss == info.test_loss:
            line += ", test loss %.4f" % info.test_loss
        line += ", %.2f s, %.0f samples/s" % (info.seconds, info.samples_per_s)
        if info.saved:
            line += ", saved %s" % info.saved
        self.stream.write(("\r\033[K" if self.tty else "") + line + "\n")
        self.stream.flush()


def _dataset(data, what):
    if data is None or isinstance(data, Dataset):
        return data
    if isinstance(data, DataLoader):
        return data.dataset
    if isinstance(data, tuple) and len(data) == 2:
        return TensorDataset(*data)
    raise TypeError("%s: expected a clgrad.data.Dataset, a DataLoader or an (x, y) pair of arrays, got %s"
                    % (what, type(data).__name__))


def _same(a, b):
    """Whether fit() is given the data it was first given (the same objects)."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b))
    return a is b


class Trainer:
    """The C trainer over a model: a clgrad.nn.Module of one's own, or a built-in's name.

    task: "classification" (default; the transformer's: "language_model"), "regression",
    "reconstruction" (or "reconstruction_mse"), what the model's forward returns and the loss
    and metric (frontend/clgrad_train.h); loss: a Python loss(output, target) instead of the
    task's (the target as the task gives it: one-hot float rows for classification).
    optimizer "sgd" | "adam" | "adamw" with lr, momentum, betas, eps, weight_decay (None: PyTorch's
    default, 0.01 for AdamW), nesterov, amsgrad; schedule "constant" | "step" | "cosine", warmup
    steps; clip: the gradients' global L2 norm; precision "fp32" | "mixed" (float16 autocast with
    loss scaling); save: a checkpoint after every epoch; devices: a list of device specs (a
    Python model: one; default the model's own device); callbacks: Callback objects (progress:
    the default ProgressBar, or False); log_every_n_steps: how often on_step_end is called.
    Built-in models take their sizes as keywords: dim, heads, layers, seq_len, vocab.
    PyTorch Lightning's names are accepted too: max_epochs, gradient_clip_val, enable_progress_bar.
    """

    def __init__(self, model, task=None, loss=None, optimizer="adam", lr=1e-3, weight_decay=None, momentum=0.0,
                 dampening=0.0, nesterov=False, betas=(0.9, 0.999), eps=1e-8, amsgrad=False, weight_decay_all=False,
                 schedule="constant", warmup=0, epochs=5, batch_size=128, clip=0.0, seed=1, precision="fp32",
                 loss_scale=0.0, save=None, devices=None, callbacks=(), progress=None, log_every_n_steps=50,
                 max_steps=0, fixed_shares=False, name=None, max_epochs=None, gradient_clip_val=None,
                 enable_progress_bar=None, **model_sizes):
        if not isinstance(model, (str, Module)):
            raise TypeError("Trainer: model: expected a clgrad.nn.Module or a built-in's name, got %s"
                            % type(model).__name__)
        if task is not None and task not in TASKS:
            raise ValueError("Trainer: task %r: expected one of %s" % (task, ", ".join(TASKS)))
        if precision not in PRECISIONS:
            raise ValueError("Trainer: precision %r: expected fp32 or mixed" % (precision,))
        bad = set(model_sizes) - {"dim", "heads", "layers", "seq_len", "vocab"}
        if bad:
            raise TypeError("Trainer: unexpected keyword arguments %s" % ", ".join(sorted(bad)))
        if isinstance(model, Module) and model_sizes:
            raise TypeError("Trainer: %s are for the built-in models" % ", ".join(sorted(model_sizes)))
        epochs = max_epochs if max_epochs is not None else epochs
        clip = gradient_clip_val if gradient_clip_val is not None else clip
        if enable_progress_bar is not None and progress is None:
            progress = enable_progress_bar
        if devices is None:
            devs = [self._model_device(model)]
        else:
            devs = [Device(d) for d in (devices if isinstance(devices, (list, tuple)) else [devices])]
        if isinstance(model, Module):
            if len(devs) != 1:
                raise ValueError("Trainer: a Python model trains on one device (devices=[...] with several is "
                                 "for the built-in models)")
            model.to(devs[0])
        self.model, self.devices = model, devs
        self.callbacks = list(callbacks)
        if progress is None or progress is True:
            self.callbacks.insert(0, ProgressBar())
        elif progress:
            self.callbacks.insert(0, progress)
        # on_step_end needs the running loss, a wait for the device: ask only for a callback that uses it
        if not any(type(cb).on_step_end is not Callback.on_step_end and not (isinstance(cb, ProgressBar) and not cb.tty)
                   for cb in self.callbacks):
            log_every_n_steps = 0
        cfg = dict(task=task, optimizer=optimizer, lr=float(lr), momentum=float(momentum), dampening=float(dampening),
                   nesterov=int(bool(nesterov)), beta1=float(betas[0]), beta2=float(betas[1]), eps=float(eps),
                   weight_decay=None if weight_decay is None else float(weight_decay), amsgrad=int(bool(amsgrad)),
                   weight_decay_all=int(bool(weight_decay_all)), schedule=schedule, warmup=int(warmup),
                   epochs=int(epochs), batch=int(batch_size), clip=float(clip), seed=int(seed),
                   precision=PRECISIONS[precision], loss_scale=float(loss_scale),
                   save=None if save is None else str(save), max_steps=int(max_steps),
                   fixed_shares=int(bool(fixed_shares)), log_every=int(log_every_n_steps),
                   name=name, **{k: int(v) for k, v in model_sizes.items()})
        self.batch_size, self.epochs = int(batch_size), int(epochs)
        self.history = []
        self._c = _C.Trainer(model, cfg, tuple(d.index for d in devs), loss)
        self._train = self._test = None
        self._sizes = dict(model_sizes)

    def memory_estimate(self, rows=None):
        """What a training step needs on the first device, estimated from the configuration before
        anything runs (the C trainer's clg_train_memory_estimate; `clgrad train` refuses a run that
        does not fit): bytes of "params", "grads", "optim", "activations" (of a micro-batch of rows,
        default the batch; the language models only, else 0 and "exact" False),
        "activations_recompute", "total", "largest" ("largest_what")."""
        if isinstance(self.model, Module):
            nparams = sum(p.numel() for p in self.model.parameters())
        else:
            from . import models
            nparams = models.build(self.model, device="ref", **self._sizes).num_params()
        return self._c.memory_estimate(int(nparams), int(rows or self.batch_size))

    @staticmethod
    def _model_device(model):
        if isinstance(model, Module):
            for t in list(model.parameters()) + list(model.buffers()):
                return t.device
        return get_default_device()

    # -- the run
    def fit(self, train, test=None, ckpt_path=None):
        """Trains on train (a clgrad.data Dataset, a DataLoader's dataset or an (x, y) pair of
        numpy arrays) up to the configured epochs, evaluating on test after each; ckpt_path:
        resume from that checkpoint (its epochs count). Returns the history: one Info per epoch
        of this run (a later fit() continues the same run, epochs permitting)."""
        if self._train is None:
            self._given = (train, test)
            self._train, self._test = _dataset(train, "fit(train)"), _dataset(test, "fit(test)")
            self._c.setup(self._train._c, None if self._test is None else self._test._c)
        elif not (_same(train, self._given[0]) and _same(test, self._given[1])):
            raise ValueError("Trainer.fit: this trainer was set up with other datasets (make a new Trainer)")
        if ckpt_path is not None:
            self._c.load(str(ckpt_path))
        run = []
        self._run = run
        for cb in self.callbacks:
            cb.on_fit_start(self)
        self._c.run(self)
        for cb in self.callbacks:
            cb.on_fit_end(self)
        return run

    def evaluate(self, data):
        """The task's metric and mean loss on data: {"accuracy": ..., "loss": ...} (the metric's
        name is the task's; None without one)."""
        metric, loss = self._c.evaluate(_dataset(data, "evaluate(data)")._c)
        out = Info(loss=loss)
        if self.metric_name:
            out[self.metric_name] = metric
        return out

    validate = test = evaluate  # Lightning's names

    def save(self, path):
        """A checkpoint of the run as it stands (the format `clgrad train --save` writes)."""
        self._c.save(str(path))

    def load(self, path):
        """Resumes from a checkpoint (after fit() set the trainer up; or pass fit(ckpt_path=))."""
        self._c.load(str(path))

    def state_dict(self):
        """The trained tensors by name: the Python model's own, or the built-in model's."""
        if isinstance(self.model, Module):
            return self.model.state_dict()
        return dict(self._c.state())

    @property
    def metric_name(self):
        return self._c.metric_name

    @property
    def epochs_done(self):
        return self._c.epochs_done

    @property
    def steps_per_epoch(self):
        return self._c.steps_per_epoch

    # -- what the C trainer calls during run()
    def _epoch_begin(self, epoch, epochs, steps):
        for cb in self.callbacks:
            cb.on_train_epoch_start(self, epoch, epochs, steps)

    def _step_end(self, info):
        info = Info(info)
        for cb in self.callbacks:
            cb.on_step_end(self, info)

    def _epoch_end(self, info):
        info = Info(info)
        self._run.append(info)
        self.history.append(info)
        for cb in self.callbacks:
            cb.on_epoch_end(self, info)


def train(model="mlp", data="fashion-mnist", test=None, **kw):
    """Trains a model (a built-in's name, or a clgrad.nn.Module) on data and returns the history
    (one Info per epoch: train_loss, test_metric, seconds, ...). data "fashion-mnist" is Debian's
    dataset-fashion-mnist (its test split the test set unless test is given); else a Dataset or
    an (x, y) pair of arrays. Keywords: those of Trainer (epochs, batch_size, optimizer, lr,
    schedule, devices, save, precision, ...)."""
    if isinstance(data, str):
        if data.replace("_", "-").lower() != "fashion-mnist":
            raise ValueError("train: data %r: expected 'fashion-mnist', a Dataset or an (x, y) pair" % (data,))
        data, test = FashionMNIST(train=True), test if test is not None else FashionMNIST(train=False)
    return Trainer(model, **kw).fit(data, test)
