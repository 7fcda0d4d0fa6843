"""clgrad.fft: torch.fft's transforms on the C library's (frontend/clgrad_fft.h).

clgrad has no complex dtype: a complex tensor of shape (..., N) is a float32 or float64 tensor of
shape (..., N, 2) holding (re, im) pairs (the C library's layout; torch.view_as_real's). So fft,
ifft, fft2, ifft2, irfft and irfft2 take such tensors, rfft and rfft2 take real ones, and `dim`
counts the complex dims (the trailing 2 is not one). All are differentiable.
"""

from . import _C
from ._tensor import Tensor, cat, zeros

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "complex_mul"]


def _norm(norm):
    if norm not in (None, "backward", "ortho", "forward"):
        raise ValueError("norm: expected 'backward', 'ortho', 'forward' or None, got %r" % (norm,))
    return norm


def _check(x, what):
    if not isinstance(x, Tensor):
        raise TypeError("%s: input: expected a clgrad.Tensor, got %s" % (what, type(x).__name__))


def _complex(x, what):
    _check(x, what)
    if x.ndim < 2 or x.shape[-1] != 2:
        raise ValueError("%s: a complex tensor is (..., 2) (re, im) pairs (clgrad has no complex dtype); got shape %s"
                         % (what, tuple(x.shape)))


def _resize(x, dim, n):
    """x cut or zero-padded to n along dim (torch.fft's n / s)."""
    m = x.shape[dim]
    if n is None or n == m:
        return x
    if n < 1:
        raise ValueError("fft: invalid length %d (at least 1)" % n)
    if n < m:
        return x[(slice(None),) * dim + (slice(0, n),)]
    pad = list(x.shape)
    pad[dim] = n - m
    return cat([x, zeros(*pad, dtype=x.dtype, device=x.device)], dim)


def _along(x, dim, nd, f):
    """f on x with dim (of nd transform dims, counted without the trailing 2 of complex tensors
    where x has one: nd = x.ndim - 1) moved last, moved back after."""
    d = dim % nd
    last = nd - 1
    if d == last:
        return f(x)
    return f(x.transpose(d, last)).transpose(d, last)


def fft(input, n=None, dim=-1, norm=None):  # noqa: A002  (torch.fft's names)
    """torch.fft.fft of a complex (..., N, 2) input: (..., n, 2)."""
    _complex(input, "fft")
    nd = input.ndim - 1
    return _along(input, dim, nd, lambda x: _C.fft("fft", _resize(x, nd - 1, n), _norm(norm)))


def ifft(input, n=None, dim=-1, norm=None):  # noqa: A002
    _complex(input, "ifft")
    nd = input.ndim - 1
    return _along(input, dim, nd, lambda x: _C.fft("ifft", _resize(x, nd - 1, n), _norm(norm)))


def rfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """torch.fft.rfft of a real (..., N) input: (..., n // 2 + 1, 2)."""
    _check(input, "rfft")
    nd = input.ndim
    d = dim % nd
    x = input if d == nd - 1 else input.transpose(d, nd - 1)
    y = _C.fft("rfft", _resize(x, nd - 1, n), _norm(norm))
    return y if d == nd - 1 else y.transpose(d, nd - 1)


def irfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """torch.fft.irfft of a complex (..., M, 2) half spectrum: real (..., n), n = 2 (M - 1) by default."""
    _complex(input, "irfft")
    nd = input.ndim - 1
    d = dim % nd
    x = input if d == nd - 1 else input.transpose(d, nd - 1)
    y = _C.fft("irfft", x, _norm(norm), 0 if n is None else int(n))
    return y if d == nd - 1 else y.transpose(d, nd - 1)


def _dims2(dim, nd, what):
    if len(dim) != 2:
        raise NotImplementedError("%s: two dims only (the C library's 2-D transforms), got %r" % (what, dim))
    a, b = dim[0] % nd, dim[1] % nd
    if a == b:
        raise ValueError("%s: dims %r repeat" % (what, dim))
    return a, b


def _last2(x, a, b, nd):
    """x with complex dims a, b moved to nd - 2, nd - 1 (the trailing 2 kept last), and the
    permutation back."""
    order = [i for i in range(nd) if i not in (a, b)] + [a, b]
    extra = list(range(nd, x.ndim))
    perm = order + extra
    inv = [perm.index(i) for i in range(x.ndim)]
    return (x if perm == list(range(x.ndim)) else x.permute(*perm)), inv


def _two(kind, input, s, dim, norm, real_in):
    nd = input.ndim if real_in else input.ndim - 1
    a, b = _dims2(dim, nd, kind)
    x, inv = _last2(input, a, b, nd)
    if s is not None and kind != "irfft2":
        x = _resize(_resize(x, nd - 2, s[0]), nd - 1, s[1])
    if kind == "irfft2":
        h, w = (0, 0) if s is None else (int(s[0]), int(s[1]))
        y = _C.fft(kind, x, _norm(norm), h, w)
    else:
        y = _C.fft(kind, x, _norm(norm))
    if inv == list(range(len(inv))):
        return y
    if real_in and kind == "rfft2":  # the result gained a trailing 2
        inv = inv + [len(inv)]
    elif kind == "irfft2":  # the result lost its trailing 2
        inv = inv[:-1]
    return y.permute(*inv)


def fft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    """torch.fft.fft2 of a complex (..., H, W, 2) input."""
    _complex(input, "fft2")
    return _two("fft2", input, s, dim, norm, False)


def ifft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    _complex(input, "ifft2")
    return _two("ifft2", input, s, dim, norm, False)


def rfft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    """torch.fft.rfft2 of a real (..., H, W) input: (..., H, W // 2 + 1, 2)."""
    _check(input, "rfft2")
    return _two("rfft2", input, s, dim, norm, True)


def irfft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    """torch.fft.irfft2 of a complex (..., H, M, 2) half spectrum: real (..., s[0], s[1])."""
    _complex(input, "irfft2")
    return _two("irfft2", input, s, dim, norm, False)


def complex_mul(a, b, conj=False):
    """The complex product a * b (a * conj(b) where conj) of (..., 2) tensors that broadcast:
    what torch writes `a * b` (or `a * b.conj()`) on complex tensors. clgrad's own name."""
    _complex(a, "complex_mul")
    _complex(b, "complex_mul")
    return _C.complex_mul(a, b, bool(conj))
