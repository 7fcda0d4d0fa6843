"""The MLP of `clgrad train --model mlp` (784-512-512-10, ReLU, Adam 1e-3 on a cosine schedule,
batch 128) written in Python over clgrad: Fashion-MNIST from Debian's dataset-fashion-mnist
through the C loader, 5 epochs, the test accuracy each epoch.

    .venv/bin/python examples/python/mlp.py [--epochs N] [--device SPEC]
"""
import argparse
import os
import sys
import time

import clgrad
import clgrad.nn as nn
from clgrad.data import FASHION_MNIST, DataLoader, FashionMNIST


class MLP(nn.Sequential):
    """784-512-512-10 with ReLUs. A Sequential: each Linear + ReLU runs as one fused op (the
    activation in the GEMM's epilogue) and the names are the CLI's ("1.weight", ...), so
    `clgrad eval` reads what this saves."""

    def __init__(self):
        super().__init__(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--device", default=None)
    args = ap.parse_args()
    if not os.path.exists(os.path.join(FASHION_MNIST, "train-images-idx3-ubyte.gz")):
        sys.exit("mlp.py: Fashion-MNIST not found in %s (apt-get install dataset-fashion-mnist)" % FASHION_MNIST)
    dev = clgrad.device(args.device)
    clgrad.set_default_device(dev)
    clgrad.manual_seed(0)
    train = DataLoader(FashionMNIST(train=True), batch_size=args.batch, shuffle=True, seed=1, device=dev)
    test = DataLoader(FashionMNIST(train=False), batch_size=1000, device=dev)
    model = MLP()
    opt = clgrad.optim.Adam(model.parameters(), lr=args.lr)
    sched = clgrad.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs * len(train))
    loss_fn = nn.CrossEntropyLoss()
    print("device %d %s: %d training images, batch %d" % (dev.index, dev.name, len(train.dataset), args.batch))
    for epoch in range(args.epochs):
        t0, total, n = time.perf_counter(), None, 0
        for x, y in train:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            sched.step()
            total = loss.detach() if total is None else total + loss.detach()  # no host wait a step
            n += 1
        clgrad.synchronize(dev)  # the steps are queued: wait for them before reading the clock
        secs = time.perf_counter() - t0
        correct = 0
        with clgrad.no_grad():
            for x, y in test:
                correct += int((model(x).argmax(1).numpy() == y.numpy()).sum())
        print("epoch %d: loss %.4f, %.2f s, %.0f samples/s, test accuracy %.4f"
              % (epoch + 1, total.item() / n, secs, len(train.dataset) / secs, correct / len(test.dataset)), flush=True)


if __name__ == "__main__":
    main()
