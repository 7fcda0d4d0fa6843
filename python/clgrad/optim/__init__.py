"""clgrad.optim: SGD, Adam and AdamW on the fused C optimizers (one launch a step for each
parameter group), with PyTorch's parameter groups and defaults."""

from .. import _C
from .._tensor import as_tensor
from . import lr_scheduler  # noqa: F401


class Optimizer:
    """Parameter groups as in PyTorch: params is an iterable of tensors, or of dicts each with its
    own 'params' and any of the defaults' keys. Each group steps as one fused C optimizer."""

    kind = None

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.param_groups = []
        self._c = []
        for g in groups:
            g = dict(g)
            g["params"] = list(g["params"])
            for k, v in self.defaults.items():
                g.setdefault(k, v)
            self._check(g)
            self.param_groups.append(g)
            self._c.append(self._make(g))

    def _check(self, g):
        if g["lr"] < 0:
            raise ValueError("lr: expected >= 0, got %r" % g["lr"])

    def _make(self, g):
        raise NotImplementedError

    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for g, c in zip(self.param_groups, self._c):
            if c.lr != g["lr"]:
                c.lr = g["lr"]
            c.step()
        return loss

    def zero_grad(self, set_to_none=True):
        for c in self._c:
            c.zero_grad()

    # the C optimizer's state slots under PyTorch's names (clgrad_optim.h: clg_optimizer_state)
    _slots = ()

    def state_dict(self):
        """PyTorch's layout: {"state": {index: {name: tensor, "step": float}}, "param_groups":
        [{hyper-parameters..., "params": [index, ...]}]}, parameters numbered across the groups in
        order; a parameter has state after the first step (the tensors are the optimizer's own)."""
        state, groups, k = {}, [], 0
        for g, c in zip(self.param_groups, self._c):
            ids = list(range(k, k + len(g["params"])))
            for j, i in enumerate(ids):
                s = {name: t for name, t in ((n, _C.optimizer_state(c, j, slot)) for slot, n in enumerate(self._slots))
                     if t is not None}
                if s or (self._slots and c.steps):
                    s["step"] = float(c.steps)
                    state[i] = s
            groups.append(dict({key: v for key, v in g.items() if key != "params"}, params=ids))
            k += len(ids)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Takes a state_dict of this optimizer's class and parameter layout (its hyper-parameters
        and state replace the current ones, as PyTorch's); ValueError where the groups differ."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("load_state_dict: %d parameter groups, the optimizer has %d"
                             % (len(groups), len(self.param_groups)))
        for a, b in zip(groups, self.param_groups):
            if len(a["params"]) != len(b["params"]):
                raise ValueError("load_state_dict: a group of %d parameters where the optimizer's has %d"
                                 % (len(a["params"]), len(b["params"])))
        state = {int(i): v for i, v in state_dict["state"].items()}
        for gi, (saved, g) in enumerate(zip(groups, self.param_groups)):
            for key, v in saved.items():
                if key != "params":
                    g[key] = tuple(v) if key == "betas" else v
            self._check(g)
            c = self._c[gi] = self._make(g)
            steps = 0
            for j, (i, p) in enumerate(zip(saved["params"], g["params"])):
                s = state.get(int(i), {})
                for slot, name in enumerate(self._slots):
                    if name in s:
                        _C.optimizer_set_state(c, j, slot, as_tensor(s[name], dtype=p.dtype, device=p.device))
                if "step" in s:
                    steps = max(steps, int(float(s["step"])))
            _C.optimizer_set_steps(c, steps)


class SGD(Optimizer):
    _slots = ("momentum_buffer",)

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov))

    def _make(self, g):
        if g["nesterov"] and (g["momentum"] <= 0 or g["dampening"] != 0):
            raise ValueError("nesterov momentum needs momentum > 0 and dampening 0")
        return _C.Optimizer("sgd", g["params"], float(g["lr"]), float(g["momentum"]), float(g["dampening"]),
                            bool(g["nesterov"]), 0.0, 0.0, 0.0, float(g["weight_decay"]))


class Adam(Optimizer):
    kind = "adam"
    _slots = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
    default_weight_decay = 0.0

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=None, amsgrad=False):
        wd = self.default_weight_decay if weight_decay is None else weight_decay
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=wd, amsgrad=bool(amsgrad)))

    def _check(self, g):
        super()._check(g)
        b1, b2 = g["betas"]
        if not (0.0 <= b1 < 1.0 and 0.0 <= b2 < 1.0):
            raise ValueError("betas: expected each in [0, 1), got %r" % (g["betas"],))
        if g["eps"] <= 0:
            raise ValueError("eps: expected > 0, got %r" % g["eps"])

    def _make(self, g):
        b1, b2 = g["betas"]
        # the C optimizer reads beta 0 as its default 0.9/0.999: a beta of exactly 0 is passed as
        # the nearest value above it
        return _C.Optimizer(self.kind, g["params"], float(g["lr"]), 0.0, 0.0, False, float(b1) or 1e-300,
                            float(b2) or 1e-300, float(g["eps"]), float(g["weight_decay"]), bool(g["amsgrad"]))


class AdamW(Adam):
    """Adam with decoupled weight decay; PyTorch's default weight_decay 0.01."""

    kind = "adamw"
    default_weight_decay = 0.01
