"""clgrad.nn: Module (subclassed as in PyTorch), the built-in layers and losses."""

import collections
import math

from .. import _C
from .._tensor import Tensor, _index, _rng, tensor, zeros, ones
from . import functional  # noqa: F401
from . import functional as F


class Parameter(Tensor):
    """A tensor a Module trains: requires_grad on, found by Module.parameters()."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = zeros(0)
        p = Tensor.__new__(cls, data.detach())
        p.requires_grad = requires_grad
        return p

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)


def _uniform(shape, bound, device=None):
    """U(-bound, bound) from the package's seeded stream (clgrad.manual_seed)."""
    u = _C.random("uniform", tuple(shape), _rng.next(), "float32", _index(device))
    return _C.affine(u, 2.0 * bound, -bound)


class Module:
    """Base class of every layer and model: parameters, buffers and children are found through
    attribute assignment; call the module to run forward."""

    def __init__(self):
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_modules", collections.OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign %r before Module.__init__() (call super().__init__())" % name)
        for d in (self._parameters, self._buffers, self._modules):
            d.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)
            return
        self.__dict__.pop(name, None)

    def __getattr__(self, name):
        d = self.__dict__
        for k in ("_parameters", "_buffers", "_modules"):
            if k in d and name in d[k]:
                return d[k][name]
        raise AttributeError("%r object has no attribute %r" % (type(self).__name__, name))

    def __delattr__(self, name):
        for d in (self._parameters, self._buffers, self._modules):
            if name in d:
                del d[name]
                return
        object.__delattr__(self, name)

    def register_buffer(self, name, value, persistent=True):
        self.__dict__.pop(name, None)
        self._buffers[name] = value

    def register_parameter(self, name, param):
        self.__setattr__(name, param)

    def add_module(self, name, module):
        self._modules[name] = module

    def forward(self, *args, **kw):
        raise NotImplementedError("%s.forward is not written" % type(self).__name__)

    def __call__(self, *args, **kw):
        return self.forward(*args, **kw)

    # -- traversal
    def named_modules(self, prefix=""):
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(prefix + ("." if prefix else "") + name)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def children(self):
        return iter(m for m in self._modules.values() if m is not None)

    def named_children(self):
        return iter(self._modules.items())

    def named_parameters(self, prefix="", recurse=True):
        seen = set()
        mods = self.named_modules(prefix) if recurse else [(prefix, self)]
        for mp, m in mods:
            for name, p in m._parameters.items():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    yield mp + ("." if mp else "") + name, p

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix=""):
        for mp, m in self.named_modules(prefix):
            for name, b in m._buffers.items():
                if b is not None:
                    yield mp + ("." if mp else "") + name, b

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    # -- modes and devices
    def train(self, mode=True):
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad = requires_grad
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            p.grad = None

    def to(self, *args, **kw):
        """Moves (copies) every parameter and buffer to a device and/or dtype, as Module.to."""
        for m in self.modules():
            for name, p in list(m._parameters.items()):
                if p is not None:
                    q = p.to(*args, **kw)
                    if not q._same(p):
                        m._parameters[name] = Parameter(q, p.requires_grad)
            for name, b in list(m._buffers.items()):
                if b is not None:
                    m._buffers[name] = b.to(*args, **kw)
        return self

    # -- state
    def state_dict(self):
        """Every parameter and buffer by dotted name (the tensors themselves, as PyTorch)."""
        out = collections.OrderedDict()
        for name, p in self.named_parameters():
            out[name] = p
        for name, b in self.named_buffers():
            out[name] = b
        return out

    def load_state_dict(self, state_dict, strict=True):
        """Copies the values of state_dict's tensors (or numpy arrays) into this module's. strict:
        every key must match and every shape agree; ValueError lists what does not."""
        own = self.state_dict()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        bad = []
        for k, t in own.items():
            if k in state_dict:
                v = state_dict[k]
                shape = tuple(v.shape)
                if shape != t.shape:
                    bad.append("%s: %s in the state, %s in the module" % (k, shape, t.shape))
        if bad or (strict and (missing or unexpected)):
            parts = []
            if missing:
                parts.append("missing: " + ", ".join(missing))
            if unexpected:
                parts.append("unexpected: " + ", ".join(unexpected))
            if bad:
                parts.append("shape mismatch: " + "; ".join(bad))
            raise ValueError("load_state_dict for %s: %s" % (type(self).__name__, "; ".join(parts)))
        for k, t in own.items():
            if k in state_dict:
                v = state_dict[k]
                t._assign(tensor(v, dtype=t.dtype, device=t.device) if not isinstance(v, Tensor)
                          or v.dtype is not t.dtype or v._device_index != t._device_index else v.contiguous())
        return collections.namedtuple("IncompatibleKeys", "missing_keys unexpected_keys")(missing, unexpected)

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [type(self).__name__ + "(" + self.extra_repr()]
        for name, m in self._modules.items():
            sub = repr(m).replace("\n", "\n  ")
            lines.append("  (%s): %s" % (name, sub))
        return lines[0] + ")" if len(lines) == 1 else "\n".join(lines) + "\n)"


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, device=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        self.weight = Parameter(_uniform((out_features, in_features), bound, device))
        self.bias = Parameter(_uniform((out_features,), bound, device)) if bias else None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return "in_features=%d, out_features=%d, bias=%s" % (self.in_features, self.out_features,
                                                             self.bias is not None)


class Conv2d(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, device=None):
        super().__init__()
        kh, kw = F._pair(kernel_size)
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        fan_in = in_channels // groups * kh * kw
        bound = 1.0 / math.sqrt(fan_in)
        self.weight = Parameter(_uniform((out_channels, in_channels // groups, kh, kw), bound, device))
        self.bias = Parameter(_uniform((out_channels,), bound, device)) if bias else None

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv1d(Module):
    """torch.nn.Conv1d (padding_mode 'zeros'): F.conv1d, the FFT or im2col as the C library chooses."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None):
        super().__init__()
        if padding_mode != "zeros":
            raise NotImplementedError("Conv1d: only padding_mode='zeros' is offered")
        if in_channels % groups or out_channels % groups:
            raise ValueError("Conv1d: %d and %d channels do not split into %d groups" % (in_channels, out_channels, groups))
        k = F._single(kernel_size)
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        bound = 1.0 / math.sqrt(in_channels // groups * k)
        self.weight = Parameter(_uniform((out_channels, in_channels // groups, k), bound, device))
        self.bias = Parameter(_uniform((out_channels,), bound, device)) if bias else None

    def forward(self, x):
        return F.conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class ConvTranspose2d(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None):
        super().__init__()
        if padding_mode != "zeros":
            raise ValueError("ConvTranspose2d: only padding_mode='zeros' is offered (PyTorch's only one too)")
        if in_channels % groups or out_channels % groups:
            raise ValueError("ConvTranspose2d: %d and %d channels do not split into %d groups"
                             % (in_channels, out_channels, groups))
        kh, kw = F._pair(kernel_size)
        self.stride, self.padding, self.output_padding = stride, padding, output_padding
        self.groups, self.dilation = groups, dilation
        # PyTorch's fan-in of the (in, out / groups, kh, kw) weight: its dim 1 times the kernel
        bound = 1.0 / math.sqrt(out_channels // groups * kh * kw)
        self.weight = Parameter(_uniform((in_channels, out_channels // groups, kh, kw), bound, device))
        self.bias = Parameter(_uniform((out_channels,), bound, device)) if bias else None

    def forward(self, x):
        return F.conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                                  self.groups, self.dilation)


class Upsample(Module):
    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, x):
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners, self.recompute_scale_factor)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, device=None):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, device=device))
            self.bias = Parameter(zeros(self.normalized_shape, device=device))
        else:
            self.weight = self.bias = None

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("GroupNorm: num_channels %d must be divisible by num_groups %d" % (num_channels, num_groups))
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.weight = Parameter(ones(num_channels, device=device)) if affine else None
        self.bias = Parameter(zeros(num_channels, device=device)) if affine else None

    def forward(self, x):
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = Parameter(ones(self.normalized_shape, device=device)) if elementwise_affine else None

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)


class BatchNorm2d(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, device=None):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = Parameter(ones(num_features, device=device)) if affine else None
        self.bias = Parameter(zeros(num_features, device=device)) if affine else None
        self.register_buffer("running_mean", zeros(num_features, device=device))
        self.register_buffer("running_var", ones(num_features, device=device))

    def forward(self, x):
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, self.training,
                            self.momentum, self.eps)


BatchNorm1d = BatchNorm2d


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, device=None):
        super().__init__()
        self.weight = Parameter(_C.random("normal", (num_embeddings, embedding_dim), _rng.next(), "float32",
                                          _index(device)))

    def forward(self, idx):
        return F.embedding(idx, self.weight)


class _RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, gates, device):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        k = 1.0 / math.sqrt(hidden_size)  # PyTorch's U(-1/sqrt(H), 1/sqrt(H)) for every tensor
        self.weight_ih = Parameter(_uniform((gates * hidden_size, input_size), k, device))
        self.weight_hh = Parameter(_uniform((gates * hidden_size, hidden_size), k, device))
        self.bias_ih = Parameter(_uniform((gates * hidden_size,), k, device)) if bias else None
        self.bias_hh = Parameter(_uniform((gates * hidden_size,), k, device)) if bias else None

    def _zeros(self, x):
        return zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)


class GRUCell(_RNNCellBase):
    """h' = GRU(x (N, input), h (N, hidden)), PyTorch's gates (r, z, n) and names."""

    def __init__(self, input_size, hidden_size, bias=True, device=None):
        super().__init__(input_size, hidden_size, bias, 3, device)

    def forward(self, x, hx=None):
        return _C.rnn_cell("gru", x, self._zeros(x) if hx is None else hx, None, self.weight_ih, self.weight_hh,
                           self.bias_ih, self.bias_hh)


class LSTMCell(_RNNCellBase):
    """(h', c') = LSTM(x, (h, c)), PyTorch's gates (i, f, g, o) and names."""

    def __init__(self, input_size, hidden_size, bias=True, device=None):
        super().__init__(input_size, hidden_size, bias, 4, device)

    def forward(self, x, hx=None):
        h, c = (self._zeros(x), self._zeros(x)) if hx is None else hx
        return _C.rnn_cell("lstm", x, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


class Dropout(Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)


def _activation(name, fn):
    class Act(Module):
        def forward(self, x):
            return fn(x)
    Act.__name__ = Act.__qualname__ = name
    return Act


ReLU = _activation("ReLU", F.relu)
GELU = _activation("GELU", F.gelu)
SiLU = _activation("SiLU", F.silu)
Tanh = _activation("Tanh", F.tanh)
Sigmoid = _activation("Sigmoid", F.sigmoid)


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, self.negative_slope)


class Softmax(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return x.softmax(self.dim)


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return x.flatten(self.start_dim, self.end_dim)


class Identity(Module):
    def forward(self, x):
        return x


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        if return_indices:
            raise NotImplementedError("MaxPool2d: return_indices is not offered")
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.ceil_mode = dilation, ceil_mode

    def forward(self, x):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, divisor_override

    def forward(self, x):
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                            self.divisor_override)


class ModuleList(Module):
    def __init__(self, modules=()):
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, m):
        self.add_module(str(len(self._modules)), m)
        return self

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class Sequential(ModuleList):
    """Children called in order; Sequential(OrderedDict(name=module)) names them."""

    def __init__(self, *modules):
        if len(modules) == 1 and isinstance(modules[0], collections.OrderedDict):
            super().__init__()
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            super().__init__(modules)

    def forward(self, x):
        mods = [m for m in self._modules.values() if m is not None]
        i = 0
        while i < len(mods):
            act = _fused_act(mods[i], mods[i + 1]) if i + 1 < len(mods) else 0
            if act:  # a Linear then ReLU / GELU: one fused op, as the C library's Sequential runs it
                x = F._linear_act(x, mods[i].weight, mods[i].bias, act)
                i += 2
            else:
                x = mods[i](x)
                i += 1
        return x


def _fused_act(m, nxt):
    """The C activation a Linear m and the module after it fuse into (0: they do not)."""
    if type(m) is not Linear:
        return 0
    return _C.ACT_RELU if type(nxt) is ReLU else _C.ACT_GELU if type(nxt) is GELU else 0


class ModuleDict(Module):
    def __init__(self, modules=None):
        super().__init__()
        for k, m in (modules or {}).items():
            self.add_module(k, m)

    def __getitem__(self, k):
        return self._modules[k]

    def __setitem__(self, k, m):
        self.add_module(k, m)

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()


class _Loss(Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction


class CrossEntropyLoss(_Loss):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        self.weight, self.ignore_index, self.label_smoothing = weight, ignore_index, label_smoothing

    def forward(self, input, target):  # noqa: A002
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing)


class NLLLoss(_Loss):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input, target):  # noqa: A002
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class MSELoss(_Loss):
    def forward(self, input, target):  # noqa: A002
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    def forward(self, input, target):  # noqa: A002
        return F.l1_loss(input, target, self.reduction)


class utils:  # noqa: N801  (torch.nn.utils)
    @staticmethod
    def clip_grad_norm_(parameters, max_norm):
        """Scales the gradients so that their global L2 norm is at most max_norm, on the device;
        returns the norm before clipping (a one-element tensor)."""
        ps = [p for p in ([parameters] if isinstance(parameters, Tensor) else parameters) if p.grad is not None]
        if not ps:
            return tensor(0.0)
        return _C.clip_grad_norm(ps, float(max_norm))




from .attention import MultiheadAttention  # noqa: E402,F401  (it builds on Linear above)
