"""clgrad.data.Subset and random_split (clg_dataset_select, subset, split) against numpy indexing:
the samples and labels selected, a split's parts disjoint and covering the set, one permutation per
seed. Host data: runs once, not per device."""
import numpy as np
import pytest

import clgrad

X = np.arange(40, dtype=np.float32).reshape(20, 2)
Y = np.arange(20) % 4


def rows(d):
    x, y = next(iter(clgrad.data.DataLoader(d, batch_size=len(d), device="ref")))
    return x.numpy(), y.numpy()


def test_subset():
    ds = clgrad.data.TensorDataset(X, Y)
    for idx in ([3, 1, 3, 19], np.array([0, 5]), range(4, 9), range(0, 10, 3)):
        x, y = rows(clgrad.data.Subset(ds, idx))
        want = list(idx)
        np.testing.assert_array_equal(x, X[want])
        np.testing.assert_array_equal(y, Y[want])
    with pytest.raises(ValueError):
        clgrad.data.Subset(ds, [20])
    with pytest.raises(TypeError, match="Dataset"):
        clgrad.data.Subset(X, [0])


def test_random_split():
    ds = clgrad.data.TensorDataset(X, Y)
    parts = clgrad.data.random_split(ds, [10, 6, 4], seed=5)
    assert [len(p) for p in parts] == [10, 6, 4]
    firsts = np.concatenate([rows(p)[0][:, 0] for p in parts])
    assert sorted(firsts.tolist()) == sorted(X[:, 0].tolist())  # disjoint, covering
    for p in parts:  # labels stay with their samples
        x, y = rows(p)
        np.testing.assert_array_equal(y, Y[(x[:, 0] // 2).astype(int)])
    again = np.concatenate([rows(p)[0][:, 0] for p in clgrad.data.random_split(ds, [10, 6, 4], seed=5)])
    np.testing.assert_array_equal(firsts, again)
    other = np.concatenate([rows(p)[0][:, 0] for p in clgrad.data.random_split(ds, [10, 6, 4], seed=6)])
    assert not np.array_equal(firsts, other)
    assert not np.array_equal(firsts, X[:, 0])  # shuffled
    a, b = clgrad.data.random_split(ds, [0.75, 0.25], generator=clgrad.Generator().manual_seed(5))
    assert (len(a), len(b)) == (15, 5)
    np.testing.assert_array_equal(rows(a)[0][:, 0], firsts[:15])  # the same permutation for the same seed
    with pytest.raises(ValueError, match="sum"):
        clgrad.data.random_split(ds, [10, 5])
