"""Mixed precision: clgrad.autocast (as torch.autocast) and clgrad.amp.GradScaler (dynamic loss
scaling, as torch.amp.GradScaler) over the C library's autocast and scaler."""

import contextlib

from . import _C
from ._tensor import _dtype_of, float16


class autocast(contextlib.ContextDecorator):  # noqa: N801  (PyTorch's name)
    """Inside, matmul and linear compute in float16 (or bfloat16) on float32 inputs, with float32
    accumulation; softmax, losses and norms stay float32 (clgrad.h, "mixed precision")."""

    def __init__(self, device_type=None, dtype=float16, enabled=True):
        self.dtype, self.enabled = _dtype_of(dtype), enabled

    def __enter__(self):
        if self.enabled:
            _C.autocast_begin(self.dtype.name)
        return self

    def __exit__(self, *exc):
        if self.enabled:
            _C.autocast_end()
        return False


class GradScaler:
    """scale(loss).backward(); step(optimizer) unscales the gradients, and steps only when every
    one is finite; update() is kept for PyTorch's loop shape (the C scaler updates its scale as it
    unscales: halved on a non-finite gradient, doubled after growth_interval good steps)."""

    def __init__(self, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
        self.enabled = enabled
        self._c = _C.GradScaler(float(init_scale), float(growth_factor), float(backoff_factor), int(growth_interval))
        self._unscaled = {}

    def scale(self, loss):
        return loss * self._c.scale if self.enabled else loss

    def get_scale(self):
        return self._c.scale if self.enabled else 1.0

    def unscale_(self, optimizer):
        if not self.enabled or id(optimizer) in self._unscaled:
            return
        params = [p for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        self._unscaled[id(optimizer)] = self._c.unscale(params)

    def step(self, optimizer):
        """optimizer.step() unless a gradient was inf or NaN; returns whether it stepped."""
        if not self.enabled:
            optimizer.step()
            return True
        self.unscale_(optimizer)
        ok = self._unscaled.pop(id(optimizer))
        if ok:
            optimizer.step()
        return ok

    def update(self):
        self._unscaled.clear()

    @property
    def skipped_steps(self):
        return self._c.skipped
