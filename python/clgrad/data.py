"""clgrad.data: datasets held by the C library and its shuffling, prefetching DataLoader.

    train = clgrad.data.FashionMNIST(train=True)         # Debian's dataset-fashion-mnist
    for x, y in clgrad.data.DataLoader(train, batch_size=128, shuffle=True, device="pocl"):
        ...                                               # x (128, 1, 28, 28) float32, y (128,) int32

The loader gathers the next batch on the host and starts its upload while the current step runs
(frontend/clgrad_data.h), so the host's work overlaps the device's."""

import numpy as np

from . import _C
from ._tensor import _index

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


class Dataset:
    """Samples x (n, *shape) float32 or int32 and labels y (n,) or (n, T) int32, held in C."""

    def __init__(self, c):
        self._c = c

    def __len__(self):
        return self._c.n

    @property
    def shape(self):
        return self._c.shape

    @property
    def num_classes(self):
        return self._c.num_classes

    def channel_stats(self, channels=1):
        """(means, stds) over `channels` equal slices of each sample (the image channels)."""
        return self._c.channel_stats(channels)

    def normalize(self, mean, std):
        """x = (x - mean[c]) / std[c] per channel, in place; returns self."""
        self._c.normalize([float(m) for m in mean], [float(s) for s in std])
        return self


def FashionMNIST(root=FASHION_MNIST, train=True, normalize=True):  # noqa: N802  (torchvision's name)
    """Fashion-MNIST's IDX files as (n, 1, 28, 28) in [0, 1]; normalize: by the training split's
    mean and std (0.2860, 0.3530), as `clgrad train` does."""
    ds = Dataset(_C.dataset_idx(str(root), "train" if train else "t10k"))
    return ds.normalize([0.2860], [0.3530]) if normalize else ds


def CIFAR10(root, train=True):  # noqa: N802
    """CIFAR-10's binary batches (data_batch_*.bin, test_batch.bin) as (n, 3, 32, 32) in [0, 1]."""
    return Dataset(_C.dataset_cifar10(str(root), "train" if train else "test"))


def CSVDataset(path, label_column=None, header=None, delimiter=","):  # noqa: N802
    """Rows of numbers; label_column: the integer class column (None: no labels); header: True,
    False or None (detected)."""
    return Dataset(_C.dataset_csv(str(path), -1 if label_column is None else int(label_column),
                                  -1 if header is None else int(bool(header)), delimiter))


def TensorDataset(x, y=None, num_classes=None):  # noqa: N802
    """A dataset of numpy arrays (copied): x float32 (or int ids) (n, ...); y int class labels
    (n,) or (n, T), or float targets (n,) or (n, K) (a regression's: float32, no classes)."""
    x = np.asarray(x)
    is_int = x.dtype.kind in "iu"
    x = np.ascontiguousarray(x, dtype=np.int32 if is_int else np.float32)
    y_numel, y_float = 0, False
    if y is not None:
        y = np.asarray(y)
        y_float = y.dtype.kind == "f"
        y = np.ascontiguousarray(y, dtype=np.float32 if y_float else np.int32)
        if len(y) != len(x):
            raise ValueError("TensorDataset: %d samples of x, %d labels" % (len(x), len(y)))
        y_numel = int(np.prod(y.shape[1:])) if y.ndim > 1 else 1
        if num_classes is None and not y_float:
            num_classes = int(y.max()) + 1 if y.size else 0
    return Dataset(_C.dataset_arrays(x, x.shape, is_int, y, y_numel, int(num_classes or 0), y_float))


def TextDataset(path, seq_len, stride=None, train=True, val_fraction=0.1, tokenizer="chars"):  # noqa: N802
    """Next-token windows of a text (clgrad.text.Text(path, val_fraction, tokenizer).windows):
    samples int32 (seq_len,) ids, labels the ids one further; num_classes the vocabulary's size."""
    from .text import Text
    return Text(path, val_fraction, tokenizer).windows(seq_len, stride, train)


def Subset(dataset, indices):  # noqa: N802  (torch.utils.data's name)
    """The samples of dataset at indices, in that order (an index may repeat), as torch's Subset;
    a copy held in C (torch's is a view). A range of step 1 is copied as one block."""
    if not isinstance(dataset, Dataset):
        raise TypeError("Subset: dataset: expected a clgrad.data.Dataset, got %s" % type(dataset).__name__)
    if isinstance(indices, range) and indices.step == 1:
        return Dataset(_C.dataset_subset(dataset._c, indices.start, len(indices)))
    return Dataset(_C.dataset_select(dataset._c, [int(i) for i in np.asarray(indices).reshape(-1)]))


def random_split(dataset, lengths, generator=None, seed=None):
    """torch.utils.data.random_split: datasets of the given lengths (or fractions summing to 1, the
    remainder given out one by one from the first) over one permutation of the samples: the C
    loader's epoch-0 shuffle for seed (generator.initial_seed() where a clgrad.Generator is given,
    else the next of manual_seed's stream). Copies held in C."""
    if not isinstance(dataset, Dataset):
        raise TypeError("random_split: dataset: expected a clgrad.data.Dataset, got %s" % type(dataset).__name__)
    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(isinstance(f, float) for f in lengths) and abs(sum(lengths) - 1) < 1e-9:
        counts = [int(n * f) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n or any(int(k) != k or k < 0 for k in lengths):
        raise ValueError("random_split: lengths %r do not sum to the dataset's %d samples" % (lengths, n))
    if seed is None:
        from ._tensor import _rng
        seed = generator.initial_seed() if generator is not None else _rng.next()
    seed = int(seed) or 1  # seed 0 would keep the file's order
    parts, rest = [], dataset._c
    for i, k in enumerate(lengths[:-1]):
        a, rest = _C.dataset_split(rest, int(k), seed if i == 0 else 0)  # later cuts keep the permutation
        parts.append(Dataset(a))
    parts.append(Dataset(rest) if len(lengths) > 1 else Dataset(_C.dataset_split(rest, n, seed)[0]))
    return parts


class DataLoader:
    """Batches of a Dataset as tensors on a device: PyTorch's batch_size, shuffle and drop_last;
    seed fixes the order (epoch e's permutation depends on (seed, e) alone); one_hot: y as float32
    one-hot rows instead of int32 classes."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=0, device=None, one_hot=False):
        if not isinstance(dataset, Dataset):
            raise TypeError("DataLoader: expected a clgrad.data.Dataset (TensorDataset wraps numpy arrays)")
        if batch_size < 1:
            raise ValueError("batch_size: expected >= 1, got %r" % (batch_size,))
        flags = (_C.LOADER_SHUFFLE if shuffle else 0) | (_C.LOADER_DROP_LAST if drop_last else 0)
        flags |= _C.LOADER_ONE_HOT if one_hot else 0
        self.dataset, self.batch_size, self.device = dataset, batch_size, device
        self._l = _C.Loader(dataset._c, int(batch_size), int(seed), flags)

    def __len__(self):
        return self._l.batches_per_epoch()

    def __iter__(self):
        """One epoch. An epoch left unfinished (a loop that broke out) is not resumed: the next
        iteration starts the following epoch, as each iter() of a PyTorch DataLoader does."""
        dev = _index(self.device)
        _, epoch, pos = self._l.state()
        if pos != 0:
            self._l.set_state(epoch + 1, 0)
        while True:
            b = self._l.next(dev)
            if b is None:
                return
            yield b
