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
from . import amp  # noqa: F401
from .amp import autocast  # noqa: F401
from . import nn  # noqa: F401
from . import optim  # noqa: F401
from .trainer import Trainer, train, Callback, ProgressBar  # noqa: F401

__version__ = "0.1.0"

# ops as functions (torch.exp(x) ...)
def _method(name):
    def f(x, *args, **kw):
        return getattr(x, name)(*args, **kw)
    f.__name__ = name
    f.__doc__ = "clgrad.%s(x, ...) = x.%s(...)" % (name, name)
    return f


for _name in ("exp", "log", "tanh", "relu", "sigmoid", "sqrt", "rsqrt", "abs", "neg", "sum", "mean",
              "max", "min", "argmax", "softmax", "log_softmax", "matmul", "reshape", "permute",
              "transpose", "clamp", "pow", "flatten", "unsqueeze", "squeeze"):
    globals()[_name] = _method(_name)
del _name
