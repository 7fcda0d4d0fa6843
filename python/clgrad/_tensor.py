"""clgrad.Tensor and the functions that make tensors: Python over clgrad._C."""

import contextlib
import numbers
import threading

import numpy as np

from . import _C


# ---- dtypes -----------------------------------------------------------------------------------

class dtype:
    """A tensor element type: clgrad.float32, float16, bfloat16, float64, int32."""

    __slots__ = ("name", "itemsize", "_np", "is_floating_point")

    def __init__(self, name, itemsize, np_dtype, is_float):
        self.name, self.itemsize, self._np, self.is_floating_point = name, itemsize, np_dtype, is_float

    def __repr__(self):
        return "clgrad." + self.name

    def __reduce__(self):
        return (_dtype_of, (self.name,))


float32 = dtype("float32", 4, np.float32, True)
float16 = dtype("float16", 2, np.float16, True)
bfloat16 = dtype("bfloat16", 2, None, True)  # numpy has none: .numpy() gives float32
float64 = dtype("float64", 8, np.float64, True)
int32 = dtype("int32", 4, np.int32, False)
_DTYPES = {d.name: d for d in (float32, float16, bfloat16, float64, int32)}


def _dtype_of(x):
    """A clgrad dtype from a clgrad dtype, its name, or a numpy dtype."""
    if x is None:
        return None
    if isinstance(x, dtype):
        return x
    if isinstance(x, str) and x in _DTYPES:
        return _DTYPES[x]
    try:
        n = np.dtype(x)
    except TypeError:
        raise TypeError("dtype: expected a clgrad dtype (clgrad.float32, ...), got %r" % (x,)) from None
    for d in _DTYPES.values():
        if d._np is not None and np.dtype(d._np) == n:
            return d
    raise TypeError("dtype: clgrad has no %s (float32, float16, bfloat16, float64, int32)" % n)


# ---- devices ----------------------------------------------------------------------------------

class Device:
    """One device of clgrad.devices(): Device(spec) with an index, "ref", "cpu", "gpu", "auto",
    a vendor ("pocl", "intel") or any part of the platform or device name."""

    __slots__ = ("index",)

    def __init__(self, spec=None):
        if isinstance(spec, Device):
            self.index = spec.index
        elif isinstance(spec, int) and not isinstance(spec, bool):
            self.index = _C.select_device(str(spec))
        elif spec is None or isinstance(spec, str):
            self.index = _C.select_device(None if spec in (None, "auto") else spec)
        else:
            raise TypeError("device: expected an index, a name or a clgrad.Device, got %s" % type(spec).__name__)

    @property
    def info(self):
        return _C.devices()[self.index]

    @property
    def type(self):
        return self.info["type"]

    @property
    def name(self):
        return self.info["name"]

    def __eq__(self, other):
        return isinstance(other, Device) and other.index == self.index

    def __hash__(self):
        return hash(self.index)

    def __repr__(self):
        i = self.info
        return "device(%d, %r, %r)" % (self.index, i["type"], i["name"])


def device(spec=None):
    """clgrad.device(spec): a Device (see Device)."""
    return Device(spec)


def devices():
    """Every device as a dict (the facts of `clgrad devices --json`): the reference first."""
    return _C.devices()


_default = threading.local()


def get_default_device():
    """The device new tensors go to: set_default_device's, else CLGRAD_DEVICE's, else the first
    GPU, else the first OpenCL CPU device, else the reference."""
    d = getattr(_default, "device", None)
    if d is None:
        d = _default.device = Device(None)
    return d


def set_default_device(spec):
    _default.device = None if spec is None else Device(spec)


def _index(dev):
    return get_default_device().index if dev is None else Device(dev).index


# ---- the Tensor class -------------------------------------------------------------------------

def _is_scalar(x):
    return isinstance(x, numbers.Number)


class Tensor(_C.TensorBase):
    """A tensor on one device. Operators broadcast as numpy does and take Python scalars."""

    __slots__ = ()

    # -- properties
    @property
    def dtype(self):
        return _DTYPES[_C.TensorBase.dtype.__get__(self)]

    @property
    def device(self):
        d = Device.__new__(Device)
        d.index = self._device_index
        return d

    @property
    def ndim(self):
        return len(self.shape)

    def dim(self):
        return len(self.shape)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    @property
    def T(self):
        return self.permute(*reversed(range(self.ndim)))

    @property
    def is_leaf(self):
        return True  # the C graph does not expose grad_fn; every tensor the user holds reads as a leaf

    # -- host exchange
    def numpy(self):
        """A numpy copy of the values (bfloat16 comes back as float32)."""
        t = self
        if self.dtype is bfloat16:
            t = self.to(float32)
        arr = np.frombuffer(t.tobytes(), dtype=t.dtype._np)
        return arr.reshape(self.shape).copy()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def tolist(self):
        return self.numpy().tolist()

    def __dlpack__(self, stream=None, **kw):
        return self.numpy().__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU: the exchange goes through host memory

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        if self.numel() != 1:
            raise ValueError("the truth value of a tensor of %d elements is ambiguous" % self.numel())
        return bool(self.item())

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        extra = "" if self.dtype is float32 else ", dtype=%r" % self.dtype
        if self.requires_grad:
            extra += ", requires_grad=True"
        body = np.array2string(self.numpy(), separator=", ", prefix="tensor(", threshold=200)
        return "tensor(%s, device=%d%s)" % (body, self._device_index, extra)

    # -- device and dtype
    def to(self, *args, dtype=None, device=None):
        for a in args:
            if isinstance(a, (dtype_cls, str)) and (isinstance(a, dtype_cls) or a in _DTYPES):
                dtype = a
            else:
                device = a
        t = self
        if device is not None:
            t = t._to_index(Device(device).index)
        if dtype is not None and _dtype_of(dtype) is not t.dtype:
            t = _C.cast(t, _dtype_of(dtype).name)
        return t

    def float(self):
        return self.to(float32)

    def double(self):
        return self.to(float64)

    def half(self):
        return self.to(float16)

    def int(self):
        return self.to(int32)

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad
        return self

    def zero_(self):
        self._assign(zeros_like(self))
        return self

    def fill_(self, value):
        self._assign(full(self.shape, value, dtype=self.dtype, device=self.device))
        return self

    def copy_(self, src):
        src = as_tensor(src, dtype=self.dtype, device=self.device)
        if src.shape != self.shape:
            src = src.expand(*self.shape).contiguous()
        self._assign(src)
        return self

    # -- elementwise
    def _other(self, o):
        if isinstance(o, _C.TensorBase):
            return o
        if isinstance(o, np.ndarray):
            return tensor(o, dtype=self.dtype, device=self.device)
        if _is_scalar(o):
            return full((), o, dtype=self.dtype, device=self.device)
        return NotImplemented

    # + - * / and unary - are C slots of TensorBase (tensors and Python ints and floats); the other
    # operand kinds (numpy arrays and scalars, bools) come here
    def _slow_binop(self, name, a, b):
        a = a if isinstance(a, _C.TensorBase) else self._other(a)
        b = b if isinstance(b, _C.TensorBase) else self._other(b)
        if a is NotImplemented or b is NotImplemented:
            return NotImplemented
        return _C.binary(name, a, b)

    def __pow__(self, o):
        if _is_scalar(o) and float(o) == 2.0:
            return _C.binary("mul", self, self)
        o = self._other(o)
        return o if o is NotImplemented else _C.binary("pow", self, o)

    def __rpow__(self, o):
        o = self._other(o)
        return o if o is NotImplemented else _C.binary("pow", o, self)

    def __matmul__(self, o):
        return self.matmul(o)

    def __rmatmul__(self, o):
        return as_tensor(o, dtype=self.dtype, device=self.device).matmul(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _C.unary("abs", self)

    def _cmp(self, o, c):
        o = self._other(o)
        return o if o is NotImplemented else _C.compare(self, o, c)

    def __eq__(self, o):
        return self._cmp(o, _C.CMP_EQ)

    def __ne__(self, o):
        eq = self._cmp(o, _C.CMP_EQ)
        return eq if eq is NotImplemented else _C.affine(eq, -1.0, 1.0)

    def __lt__(self, o):
        return self._cmp(o, _C.CMP_LT)

    def __le__(self, o):
        return self._cmp(o, _C.CMP_LE)

    def __gt__(self, o):
        return self._cmp(o, _C.CMP_GT)

    def __ge__(self, o):
        return self._cmp(o, _C.CMP_GE)

    def __hash__(self):
        return id(self)

    def add(self, o):
        return self + o

    def sub(self, o):
        return self - o

    def mul(self, o):
        return self * o

    def div(self, o):
        return self / o

    def pow(self, o):
        return self ** o

    def neg(self):
        return -self

    def exp(self):
        return _C.unary("exp", self)

    def log(self):
        return _C.unary("log", self)

    def tanh(self):
        return _C.unary("tanh", self)

    def relu(self):
        return _C.unary("relu", self)

    def sigmoid(self):
        return _C.unary("sigmoid", self)

    def sqrt(self):
        return _C.unary("sqrt", self)

    def rsqrt(self):
        return _C.unary("rsqrt", self)

    def abs(self):
        return _C.unary("abs", self)

    def square(self):
        return self * self

    def clamp(self, min=None, max=None):  # noqa: A002  (PyTorch's names)
        if isinstance(min, Tensor) or isinstance(max, Tensor):  # tensor bounds, broadcast (one kernel)
            if min is None and max is None:
                raise ValueError("clamp: at least one of min and max must not be None")
            lo = None if min is None else as_tensor(min, dtype=self.dtype, device=self.device)
            hi = None if max is None else as_tensor(max, dtype=self.dtype, device=self.device)
            return _C.clamp_tensor(self, lo, hi)
        return _C.clamp(self, -float("inf") if min is None else float(min), float("inf") if max is None else float(max))

    clip = clamp

    # -- reductions
    def _axes(self, dim):
        if dim is None:
            return None
        return [dim] if isinstance(dim, int) else list(dim)

    def sum(self, dim=None, keepdim=False):
        return _C.reduce("sum", self, self._axes(dim), keepdim)

    def mean(self, dim=None, keepdim=False):
        return _C.reduce("mean", self, self._axes(dim), keepdim)

    def _last(self, dim):
        """self with dim moved last (for the C ops that reduce the last dim)."""
        dim = dim % self.ndim
        if dim == self.ndim - 1:
            return self
        perm = [d for d in range(self.ndim) if d != dim] + [dim]
        return self.permute(*perm)

    def _extreme(self, name, dim, keepdim):
        if dim is None:
            return _C.unary(name, self.reshape(-1)).reshape(())
        return MaxResult(*_C.extreme(name, self, dim, keepdim))

    def max(self, dim=None, keepdim=False):
        """max() of all elements, or (values, indices) over dim, as torch.max."""
        return self._extreme("max", dim, keepdim)

    def min(self, dim=None, keepdim=False):
        return self._extreme("min", dim, keepdim)

    def argmax(self, dim=None, keepdim=False):
        if dim is None:
            return _C.arg_extreme("argmax", self.reshape(-1), 0, False).reshape(())
        return _C.arg_extreme("argmax", self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        if dim is None:
            return _C.arg_extreme("argmin", self.reshape(-1), 0, False).reshape(())
        return _C.arg_extreme("argmin", self, dim, keepdim)

    def _index_arg(self, index):
        return index if isinstance(index, Tensor) and index.dtype is int32 else \
            as_tensor(np.asarray(index.numpy() if isinstance(index, Tensor) else index).astype(np.int32),
                      device=self.device)

    def gather(self, dim, index):
        """torch.gather: out[i][j] = self[index[i][j]][j] for dim 0 (likewise any dim); index int32
        with self's number of dims; an index out of range gives 0 (PyTorch raises)."""
        return _C.gather(self, dim % self.ndim, self._index_arg(index))

    def index_select(self, dim, index):
        """torch.index_select: the slices along dim at a 1-D int32 index."""
        return _C.index_select(self, dim % self.ndim, self._index_arg(index).reshape(-1))

    def softmax(self, dim=-1):
        if dim % self.ndim == self.ndim - 1:
            return _C.unary("softmax", self)
        return _C.unary("softmax", self.transpose(dim, -1)).transpose(dim, -1)

    def log_softmax(self, dim=-1):
        if dim % self.ndim == self.ndim - 1:
            return _C.unary("log_softmax", self)
        return _C.unary("log_softmax", self.transpose(dim, -1)).transpose(dim, -1)

    # -- shapes
    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _C.reshape(self, shape)

    view = reshape

    def flatten(self, start_dim=0, end_dim=-1):
        if self.ndim == 0:
            return self.reshape(1)
        s, e = start_dim % self.ndim, end_dim % self.ndim
        return self.reshape(*(self.shape[:s] + (-1,) + self.shape[e + 1:]))

    def unsqueeze(self, dim):
        dim = dim % (self.ndim + 1)
        return self.reshape(*(self.shape[:dim] + (1,) + self.shape[dim:]))

    def squeeze(self, dim=None):
        if dim is None:
            return self.reshape(*[s for s in self.shape if s != 1])
        dim = dim % self.ndim
        if self.shape[dim] != 1:
            return self
        return self.reshape(*(self.shape[:dim] + self.shape[dim + 1:]))

    def permute(self, *dims):
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        return _C.permute(self, dims)

    def transpose(self, d0, d1):
        return _C.transpose(self, d0 % self.ndim, d1 % self.ndim)

    def t(self):
        return self.transpose(0, 1)

    def expand(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = tuple(self.shape[i - (len(shape) - self.ndim)] if s == -1 else s for i, s in enumerate(shape))
        return _C.expand(self, shape)

    def expand_as(self, other):
        return self.expand(*other.shape)

    def matmul(self, o):
        o = as_tensor(o, dtype=self.dtype, device=self.device)
        # torch.matmul's shapes (1-D operands, broadcast batch dims) are the C library's
        return _C.binary("matmul", self, o)

    mm = matmul

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        t, dim, drop = self, 0, []
        if any(k is Ellipsis for k in key):
            i = key.index(Ellipsis)
            fill = self.ndim - (len(key) - 1 - sum(1 for k in key if k is None))
            key = key[:i] + (slice(None),) * fill + key[i + 1:]
        new_axes = []
        for k in key:
            if k is None:
                new_axes.append(dim + len(new_axes))
                continue
            if isinstance(k, bool) or not isinstance(k, (int, slice, _C.TensorBase)):
                raise TypeError("tensor index: expected int, slice, None, Ellipsis or an int32 tensor, got %s"
                                % type(k).__name__)
            if dim >= t.ndim:
                raise IndexError("too many indices for a tensor of %d dims" % self.ndim)
            n = t.shape[dim]
            if isinstance(k, _C.TensorBase):
                from .nn import functional as F
                t = F.index_select(t, dim, k)
                dim += 1
            elif isinstance(k, int):
                if not -n <= k < n:
                    raise IndexError("index %d is out of bounds for dim %d of size %d" % (k, dim, n))
                k %= n
                t = _C.slice(t, dim, k, k + 1, 1)
                drop.append(dim)
                dim += 1
            else:
                start, stop, step = k.indices(n)
                if step < 0:
                    raise ValueError("tensor slices take a positive step")
                t = _C.slice(t, dim, start, max(stop, start), step)
                dim += 1
        shape = [s for i, s in enumerate(t.shape) if i not in drop]
        for a in new_axes:
            shape.insert(a - sum(1 for d in drop if d < a), 1)
        if tuple(shape) != t.shape:
            t = t.reshape(*shape) if t.is_contiguous() else t.contiguous().reshape(*shape)
        return t

    def __setitem__(self, key, value):
        raise TypeError("clgrad tensors take no item assignment; build a new tensor (where, cat) or use copy_()")


dtype_cls = dtype
_C._set_tensor_class(Tensor)


class MaxResult(tuple):
    """(values, indices), as torch.return_types.max."""

    def __new__(cls, values, indices):
        return tuple.__new__(cls, (values, indices))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])


# ---- creation ---------------------------------------------------------------------------------

def _shape(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad = True
    return t


def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of data (a list, a scalar, a numpy array or a tensor). Floats
    default to float32 and ints to int32 (clgrad has no int64)."""
    if isinstance(data, _C.TensorBase):
        t = data.detach().to(device=device, dtype=dtype)
        if t._device_index == data._device_index and t.dtype is data.dtype:
            t = _C.affine(t, 1.0, 0.0)  # a copy, as torch.tensor(t) makes
        return _finish(t, requires_grad)
    arr = np.asarray(data)
    dt = _dtype_of(dtype)
    if dt is None:
        if arr.dtype.kind in "iub":
            dt = int32 if arr.dtype.kind != "b" else float32
        elif arr.dtype == np.float16:
            dt = float16
        elif arr.dtype == np.float64 and not isinstance(data, np.ndarray):
            dt = float32  # Python floats: float32, as torch.tensor
        elif arr.dtype == np.float64:
            dt = float64
        else:
            dt = float32
    if dt is bfloat16:
        return _finish(tensor(arr, float32, device).to(bfloat16), requires_grad)
    arr = np.ascontiguousarray(arr, dtype=dt._np)
    return _finish(_C.from_buffer(arr, arr.shape, dt.name, _index(device)), requires_grad)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, _C.TensorBase) and dtype is None and device is None:
        return data
    if isinstance(data, _C.TensorBase):
        return data.to(device=device, dtype=dtype)
    return tensor(data, dtype, device)


def from_numpy(a):
    """A tensor with a copy of numpy array a (on the default device, a's dtype)."""
    return tensor(np.asarray(a), dtype=_dtype_of(a.dtype))


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    dt = _dtype_of(dtype) or (int32 if isinstance(fill_value, int) and not isinstance(fill_value, bool) else float32)
    return _finish(_C.full(_shape((size,)), float(fill_value), dt.name, _index(device)), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_C.full(_shape(size), 0.0, (_dtype_of(dtype) or float32).name, _index(device)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_C.full(_shape(size), 1.0, (_dtype_of(dtype) or float32).name, _index(device)), requires_grad)


empty = zeros


def zeros_like(t, dtype=None, device=None):
    return zeros(t.shape, dtype=dtype or t.dtype, device=device if device is not None else t.device)


def ones_like(t, dtype=None, device=None):
    return ones(t.shape, dtype=dtype or t.dtype, device=device if device is not None else t.device)


def arange(start, end=None, step=1, dtype=None, device=None):
    if end is None:
        start, end = 0, start
    ints = all(isinstance(v, int) for v in (start, end, step))
    dt = _dtype_of(dtype) or (int32 if ints else float32)
    if dt is int32:  # the device casts floats to floats only: integers come from the host
        return tensor(np.arange(start, end, step, dtype=np.int32), int32, device)
    n = max(0, int(np.ceil((end - start) / step)))
    t = _C.arange(n, dt.name, _index(device))
    return _C.affine(t, float(step), float(start)) if start != 0 or step != 1 else t


class _Seed:
    def __init__(self):
        self.seed, self.count = 0x5EED, 0

    def next(self):
        self.count += 1
        return (self.seed * 1000003 + self.count) & 0xFFFFFFFFFFFFFFFF


_rng = _Seed()


def manual_seed(seed):
    """Seeds rand, randn, dropout and the nn initialisers (counter-based: the same seed gives the
    same numbers on every device)."""
    _rng.seed, _rng.count = int(seed), 0


class Generator:
    """A random stream as torch.Generator: the C library's clg_rng, a Philox stream position
    (seed, offset) that each draw advances by the elements drawn, so successive draws differ and
    two draws of n equal one of 2n; the same numbers on every device. rand, randn and
    nn.functional.dropout take it as generator=. The device argument is accepted for PyTorch's
    signature (a stream is not tied to one)."""

    def __init__(self, device=None):
        self._seed, self.offset = 67280421310721, 0

    def manual_seed(self, seed):
        self._seed, self.offset = int(seed) & 0xFFFFFFFFFFFFFFFF, 0
        return self

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return (self._seed, self.offset)

    def set_state(self, state):
        self._seed, self.offset = int(state[0]), int(state[1])
        return self

    def _draw(self, kind, size, a, b, dtype, device):
        t, self.offset = _C.rng_draw(kind, _shape(size), self._seed, self.offset, float(a), float(b),
                                     (_dtype_of(dtype) or float32).name, _index(device))
        return t


def _generator(g):
    if g is not None and not isinstance(g, Generator):
        raise TypeError("generator: expected a clgrad.Generator, got %s" % type(g).__name__)
    return g


def rand(*size, dtype=None, device=None, requires_grad=False, seed=None, generator=None):
    if _generator(generator) is not None:
        return _finish(generator._draw("uniform", size, 0.0, 1.0, dtype, device), requires_grad)
    s = _rng.next() if seed is None else seed
    return _finish(_C.random("uniform", _shape(size), s, (_dtype_of(dtype) or float32).name, _index(device)),
                   requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False, seed=None, generator=None):
    if _generator(generator) is not None:
        return _finish(generator._draw("normal", size, 0.0, 1.0, dtype, device), requires_grad)
    s = _rng.next() if seed is None else seed
    return _finish(_C.random("normal", _shape(size), s, (_dtype_of(dtype) or float32).name, _index(device)),
                   requires_grad)


def cat(tensors, dim=0):
    tensors = list(tensors)
    if tensors and tensors[0].ndim:
        dim %= tensors[0].ndim
    return _C.concat(tensors, dim)


def stack(tensors, dim=0):
    return cat([t.unsqueeze(dim) for t in tensors], dim)


def where(condition, input, other):  # noqa: A002
    like = input if isinstance(input, _C.TensorBase) else other
    return _C.where(as_tensor(condition, device=like.device, dtype=like.dtype), like._other(input),
                    like._other(other))


# ---- autograd switches --------------------------------------------------------------------------

class no_grad(contextlib.ContextDecorator):
    """Ops inside record no graph (evaluation); a context manager and a decorator."""

    def __enter__(self):
        _C.no_grad_begin()
        return self

    def __exit__(self, *exc):
        _C.no_grad_end()
        return False


class enable_grad(contextlib.ContextDecorator):
    """Ends the innermost no_grad for the block (nesting as in the C library)."""

    def __enter__(self):
        self.was = not _C.grad_enabled()
        if self.was:
            _C.no_grad_end()
        return self

    def __exit__(self, *exc):
        if self.was:
            _C.no_grad_begin()
        return False


def is_grad_enabled():
    return _C.grad_enabled()


def synchronize(device=None):
    """Waits for every op queued on the device."""
    _C.synchronize(_index(device))


def memory_stats(device=None):
    """The device allocator's statistics: bytes in use, peak, cached; allocations, builds, launches."""
    return _C.memory_stats(_index(device))




class profile_ops(contextlib.ContextDecorator):
    """The C library's per-op timer (the one `clgrad train --profile` prints) over a block: every op
    on the device waits for the device before and after it, so the block runs slower; what it gives
    is each op's share. After the block, .rows holds (op and shape, calls, seconds), longest first,
    and .table(top=20, steps=1) formats them per step. With CLGRAD_OP_TIMER=cpu the process's CPU
    time instead of the wall's (steadier on a shared machine)."""

    def __init__(self, device=None):
        self.index = _index(device)
        self.rows = []

    def __enter__(self):
        _C.op_timer_start(self.index)
        return self

    def __exit__(self, *exc):
        self.rows = _C.op_timer_stop(self.index)
        return False

    def table(self, top=20, steps=1):
        total = sum(r[2] for r in self.rows) or 1.0
        lines = ["%-44s %8s %10s %6s" % ("op (dst shape)", "calls", "ms a step", "share")]
        lines += ["%-44s %8.1f %10.3f %5.1f%%" % (k, n / steps, 1e3 * s / steps, 100 * s / total)
                  for k, n, s in self.rows[:top]]
        return "\n".join(lines)
