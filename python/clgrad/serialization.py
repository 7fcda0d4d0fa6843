"""clgrad.save / clgrad.load: state dicts as safetensors files, through the C library's reader and
its atomic writer (the file is replaced whole or not at all). The files are the ones `clgrad train
--save` writes, and are readable by the safetensors package and by PyTorch."""

import collections

import numpy as np

from . import _C
from ._tensor import Tensor, _index, tensor


def save(state_dict, path, metadata=None):
    """Writes a mapping of names to tensors (or numpy arrays) to path; metadata: str -> str."""
    items = []
    for name, t in state_dict.items():
        if not isinstance(name, str):
            raise TypeError("save: tensor names must be str, got %r" % (name,))
        if not isinstance(t, Tensor):
            t = tensor(np.asarray(t), device="ref")
        items.append((name, t))
    meta = {}
    for k, v in (metadata or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError("save: metadata keys and values must be str, got %r: %r" % (k, v))
        meta[k] = v
    _C.save_safetensors(str(path), items, meta)


def load(path, device=None, with_metadata=False):
    """The tensors of a safetensors file, by name in file order, on device (default: the default
    device); with_metadata: (tensors, metadata dict)."""
    items, meta = _C.load_safetensors(str(path), _index(device))
    tensors = collections.OrderedDict(items)
    return (tensors, meta) if with_metadata else tensors
