"""clgrad.utils.checkpoint: activation recomputation as torch.utils.checkpoint, on the C library's
clg_checkpoint (one graph node stands for the call; backward runs the function again)."""

from .. import _C
from .._tensor import Tensor, _rng

__all__ = ["checkpoint"]


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs) without keeping its intermediate tensors: backward runs it again
    and backpropagates through that run, giving the gradients of an ordinary call. The Tensor
    arguments (1 to 8) carry the graph; the others are passed as they are, both times. Returns a
    Tensor or a tuple of 1 to 8 Tensors, as function does. Random draws are replayed (dropout
    drops the same elements) and manual_seed's stream is left as one ordinary call leaves it.
    As the C library's: a tensor computed outside the function with a graph must come in as an
    argument (its gradient is lost otherwise); the function must make the same calls both times.
    use_reentrant and preserve_rng_state are accepted for PyTorch's signature."""
    if not callable(function):
        raise TypeError("checkpoint: function: expected a callable, got %s" % type(function).__name__)
    slots = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    if not slots:
        return function(*args, **kwargs)
    state = {"rng": None, "tuple": False}

    def run(*ts):
        full = list(args)
        for i, t in zip(slots, ts):
            full[i] = t
        if state["rng"] is None:  # the first run: where manual_seed's stream stood
            state["rng"] = (_rng.seed, _rng.count)
            res = function(*full, **kwargs)
        else:  # the re-run in backward: the same seeds, the stream left where it is now
            now = (_rng.seed, _rng.count)
            _rng.seed, _rng.count = state["rng"]
            try:
                res = function(*full, **kwargs)
            finally:
                _rng.seed, _rng.count = now
        state["tuple"] = isinstance(res, (tuple, list))
        return tuple(res) if state["tuple"] else res

    out = _C.checkpoint(run, [args[i] for i in slots])
    return out if state["tuple"] else out[0]
