"""clgrad.data over the C readers and loader: Fashion-MNIST, numpy arrays, CSV; batches, order,
errors; and examples/python/mlp.py trained for an epoch."""
import os
import subprocess
import sys

import numpy as np
import pytest

import clgrad
from clgrad.data import DataLoader, TensorDataset

HAVE_FMNIST = os.path.exists(os.path.join(clgrad.data.FASHION_MNIST, "train-images-idx3-ubyte.gz"))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_tensor_dataset_batches(dev):
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    y = np.arange(10) % 3
    ds = TensorDataset(x, y)
    assert len(ds) == 10 and ds.shape == (3,) and ds.num_classes == 3
    got = [(bx.numpy(), by.numpy()) for bx, by in DataLoader(ds, batch_size=4, device=dev)]
    assert [len(b[1]) for b in got] == [4, 4, 2]
    np.testing.assert_array_equal(np.concatenate([b[0] for b in got]), x)
    np.testing.assert_array_equal(np.concatenate([b[1] for b in got]), y)
    assert len(DataLoader(ds, batch_size=4, drop_last=True)) == 2
    # shuffled: a permutation, the same for the same seed, another for the next epoch
    dl = DataLoader(ds, batch_size=10, shuffle=True, seed=7, device=dev)
    e1 = next(iter(dl))[1].numpy()
    e2 = [b for b in dl][0][1].numpy()  # an abandoned epoch: the next iter() starts the next one
    assert sorted(e2.tolist()) == sorted(y.tolist()) and (e2 != e1).any()
    e1b = next(iter(DataLoader(ds, batch_size=10, shuffle=True, seed=7, device=dev)))[1].numpy()
    assert sorted(e1.tolist()) == sorted(y.tolist()) and (e1 == e1b).all()
    one = next(iter(DataLoader(ds, batch_size=2, one_hot=True, device=dev)))[1].numpy()
    np.testing.assert_array_equal(one, [[1, 0, 0], [0, 1, 0]])


def test_bad_input():
    with pytest.raises(ValueError):
        TensorDataset(np.zeros((4, 2)), np.zeros(3))
    with pytest.raises(TypeError):
        DataLoader(np.zeros((4, 2)))
    with pytest.raises(ValueError):
        DataLoader(TensorDataset(np.zeros((4, 2))), batch_size=0)
    with pytest.raises(clgrad.Error, match="nowhere"):
        clgrad.data.FashionMNIST(root="/nowhere")


def test_csv(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("a,b,label\n1.5,2,0\n3,4.25,1\n")
    ds = clgrad.data.CSVDataset(p, label_column=2)
    x, y = next(iter(DataLoader(ds, batch_size=2)))
    np.testing.assert_array_equal(x.numpy(), [[1.5, 2], [3, 4.25]])
    assert y.numpy().tolist() == [0, 1]


@pytest.mark.skipif(not HAVE_FMNIST, reason="Fashion-MNIST not installed")
def test_fashion_mnist():
    tr, te = clgrad.data.FashionMNIST(train=True), clgrad.data.FashionMNIST(train=False)
    assert (len(tr), len(te), tr.shape, tr.num_classes) == (60000, 10000, (1, 28, 28), 10)
    mean, std = tr.channel_stats(1)
    assert abs(mean[0]) < 1e-3 and abs(std[0] - 1) < 1e-3  # normalised by the training statistics
    assert len(DataLoader(tr, batch_size=128)) == 469


@pytest.mark.skipif(not HAVE_FMNIST, reason="Fashion-MNIST not installed")
def test_mlp_example_learns(cl_dev):
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", "mlp.py"), "--epochs", "1",
                          "--device", str(cl_dev.index)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    acc = float(out.stdout.strip().split("test accuracy")[-1])
    assert acc >= 0.84, out.stdout


@pytest.mark.skipif(not os.path.exists("/usr/share/common-licenses/GPL-3"), reason="no GPL-3 text")
def test_charlm_example_learns(cl_dev):
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", "charlm.py"), "--steps", "100",
                          "--device", str(cl_dev.index)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    val = float(out.stdout.split("step 100:")[1].split("validation")[1].split()[0])
    assert val < 3.0, out.stdout  # the unigram baseline of this text is 3.50 nats
