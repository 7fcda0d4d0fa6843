"""The MLP of `clgrad train --model mlp` (784-512-512-10, ReLU, Adam 1e-3, batch 128) written in
Python over clgrad: Fashion-MNIST from Debian's dataset-fashion-mnist, 5 epochs, test accuracy.

    .venv/bin/python examples/python/mlp.py [--epochs N] [--device SPEC] [--limit N]
"""
import argparse
import gzip
import os
import sys
import time

import numpy as np

import clgrad
import clgrad.nn as nn

DATA = os.environ.get("CLGRAD_DATA", "/usr/share/datasets/fashion-mnist")


def idx(name):
    """An IDX file (gzipped) as a numpy array."""
    with gzip.open(os.path.join(DATA, name), "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = np.frombuffer(raw, ">i4", ndim, 4)
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(kind, limit):
    x = idx("%s-images-idx3-ubyte.gz" % kind)[:limit].reshape(-1, 784).astype(np.float32) / 255.0
    y = idx("%s-labels-idx1-ubyte.gz" % kind)[:limit].astype(np.int32)
    return (x - 0.2860) / 0.3530, y  # Fashion-MNIST's mean and std, as the CLI normalises


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 512)
        self.fc2 = nn.Linear(512, 512)
        self.fc3 = nn.Linear(512, 10)

    def forward(self, x):
        return self.fc3(self.fc2(self.fc1(x).relu()).relu())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--device", default=None)
    ap.add_argument("--limit", type=int, default=None, help="use the first N training images")
    args = ap.parse_args()
    if not os.path.exists(os.path.join(DATA, "train-images-idx3-ubyte.gz")):
        sys.exit("mlp.py: Fashion-MNIST not found in %s (apt-get install dataset-fashion-mnist)" % DATA)
    dev = clgrad.device(args.device)
    clgrad.set_default_device(dev)
    clgrad.manual_seed(0)
    xtr, ytr = load("train", args.limit)
    xte, yte = load("t10k", None)
    model = MLP()
    opt = clgrad.optim.Adam(model.parameters(), lr=args.lr)
    sched = clgrad.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs * (len(xtr) // args.batch))
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(0)
    print("device %d %s: %d training images, batch %d" % (dev.index, dev.name, len(xtr), args.batch))
    for epoch in range(args.epochs):
        perm = rng.permutation(len(xtr))
        t0, total, n = time.perf_counter(), None, 0
        for b in range(len(xtr) // args.batch):
            sel = perm[b * args.batch:(b + 1) * args.batch]
            x, y = clgrad.tensor(xtr[sel]), clgrad.tensor(ytr[sel])
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            sched.step()
            total = loss.detach() if total is None else total + loss.detach()  # no host wait a step
            n += 1
        clgrad.synchronize(dev)  # the steps are queued: wait for them before reading the clock
        secs = time.perf_counter() - t0
        with clgrad.no_grad():
            correct = 0
            for b in range(0, len(xte), 1000):
                pred = model(clgrad.tensor(xte[b:b + 1000])).argmax(1).numpy()
                correct += int((pred == yte[b:b + 1000]).sum())
        print("epoch %d: loss %.4f, %.1f s, %.0f samples/s, test accuracy %.4f"
              % (epoch + 1, total.item() / n, secs, n * args.batch / secs, correct / len(xte)), flush=True)


if __name__ == "__main__":
    main()
