"""clgrad: vendor-neutral deep learning on every OpenCL device, from Python.

A thin layer over the C library (the extension module ``clgrad._C``): tensors live on one device,
ops record a reverse-mode graph, and every C error becomes an exception carrying the library's
message. Names, defaults and semantics follow PyTorch unless docs/PYTHON.md says otherwise.
"""

from . import _C
from ._C import (  # noqa: F401  (the exception classes, re-exported)
    Error,
    ShapeError,
    DTypeError,
    DeviceError,
    OutOfMemoryError,
    UnsupportedError,
    FormatError,
    StateError,
    BuildError,
    IOError,
)
from ._tensor import (  # noqa: F401
    Tensor,
    dtype,
    float32,
    float16,
    bfloat16,
    float64,
    int32,
    Device,
    device,
    devices,
    get_default_device,
    set_default_device,
    tensor,
    as_tensor,
    from_numpy,
    zeros,
    ones,
    full,
    empty,
    zeros_like,
    ones_like,
    arange,
    rand,
    randn,
    manual_seed,
    Generator,
    cat,
    stack,
    where,
    no_grad,
    enable_grad,
    is_grad_enabled,
    synchronize,
    memory_stats,
    profile_ops,
)
from .serialization import save, load  # noqa: F401
from ._compare import compare  # noqa: F401  (clgrad.compare(...): the comparison mode)
from . import config  # noqa: F401
from . import data  # noqa: F401
from . import text  # noqa: F401  (tokenizers, texts for language models)
from . import amp  # noqa: F401
from .amp import autocast  # noqa: F401
from . import nn  # noqa: F401
from . import optim  # noqa: F401
from . import fft  # noqa: F401  (torch.fft's transforms; complex as (..., 2))
from . import utils  # noqa: F401  (utils.checkpoint)
from . import models  # noqa: F401  (the built-in models, generation)
from .nn.functional import max_pool2d, avg_pool2d, conv1d  # noqa: F401  (torch.max_pool2d ...)
from .trainer import Trainer, train, Callback, ProgressBar  # noqa: F401

__version__ = "0.1.0"


def set_fused_ops(enabled):
    """Turns the fused paths of linear, cross_entropy, attention and the fused ops on or off (the C
    library's clg_set_fused_ops; $CLGRAD_FUSED=0 at start): off, the same functions compose the
    unfused ops, for comparisons. Returns the previous setting."""
    return _C.set_fused_ops(bool(enabled))


def fused_ops_enabled():
    return _C.fused_ops_enabled()


def precompile(device=None, workload=None, dtype=float32):
    """Makes the device's OpenCL programs ready ahead of their first use (clg_precompile): those
    the workload (a name of your choosing, e.g. "train mlp"; None: none) used on this device in earlier runs and
    the usual ones for dtype, from the disk cache or compiled. Returns how many were made ready
    (0 on the reference)."""
    from ._tensor import _index
    return _C.precompile(_index(device), workload, (dtype if isinstance(dtype, str) else dtype.name))

# ops as functions (torch.exp(x) ...)
def _method(name):
    def f(x, *args, **kw):
        return getattr(x, name)(*args, **kw)
    f.__name__ = name
    f.__doc__ = "clgrad.%s(x, ...) = x.%s(...)" % (name, name)
    return f


for _name in ("exp", "log", "tanh", "relu", "sigmoid", "sqrt", "rsqrt", "abs", "neg", "sum", "mean",
              "max", "min", "argmax", "softmax", "log_softmax", "matmul", "reshape", "permute",
              "transpose", "clamp", "pow", "flatten", "unsqueeze", "squeeze", "argmin", "gather", "index_select"):
    globals()[_name] = _method(_name)
del _name
