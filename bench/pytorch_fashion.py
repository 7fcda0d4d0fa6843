#!/usr/bin/env python3
"""The same training workload as `clgrad train` in PyTorch (on the CPU, or a CUDA GPU with --device cuda), for side-by-side figures:
Fashion-MNIST from the same IDX files, normalised with the training set's mean and std, the same
models (mlp 784-512-512-10; cnn conv32-pool-conv64-pool-fc128-fc10), batch size, Adam and learning
rate. Prints one JSON object per epoch with the same fields as clgrad's --log.

usage: pytorch_fashion.py --model mlp|cnn [--epochs N] [--batch N] [--lr X] [--limit N] [--data DIR]
                          [--device cpu|cuda]
"""
import argparse, gzip, json, struct, sys, time

import torch
import torch.nn as nn
import torch.nn.functional as F


def read_idx(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    t = torch.frombuffer(bytearray(data[4 + 4 * ndim:]), dtype=torch.uint8)
    return t.reshape(dims)


def model_of(name):
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                             nn.Linear(512, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="mlp")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (PyTorch's own GPU backend)")
    a = ap.parse_args()
    dev = torch.device(a.device)
    torch.manual_seed(a.seed)
    xs = read_idx(f"{a.data}/train-images-idx3-ubyte.gz").float().div(255).unsqueeze(1)
    ys = read_idx(f"{a.data}/train-labels-idx1-ubyte.gz").long()
    xt = read_idx(f"{a.data}/t10k-images-idx3-ubyte.gz").float().div(255).unsqueeze(1)
    yt = read_idx(f"{a.data}/t10k-labels-idx1-ubyte.gz").long()
    if a.limit:
        xs, ys, xt, yt = xs[:a.limit], ys[:a.limit], xt[:a.limit], yt[:a.limit]
    mean, std = xs.mean(), xs.std(unbiased=False)
    xs, xt = (xs - mean) / std, (xt - mean) / std
    xs, ys, xt, yt = (t.to(dev) for t in (xs, ys, xt, yt))  # clgrad uploads each batch; PyTorch gets it free
    model = model_of(a.model).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    for epoch in range(1, a.epochs + 1):
        model.train()
        t0, total, steps = time.perf_counter(), 0.0, 0  # the shuffle counts, as in clgrad's epoch
        perm = torch.randperm(len(xs), device=dev)
        for i in range(0, len(xs), a.batch):
            idx = perm[i:i + a.batch]
            loss = F.cross_entropy(model(xs[idx]), ys[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            steps += 1
        secs = time.perf_counter() - t0
        model.eval()
        with torch.no_grad():
            correct = sum((model(xt[i:i + 1000]).argmax(1) == yt[i:i + 1000]).sum().item()
                          for i in range(0, len(xt), 1000))
        print(json.dumps({"epoch": epoch, "model": a.model, "device": f"pytorch {torch.__version__} "
                          + (torch.cuda.get_device_name(dev) if dev.type == "cuda" else
                             f"cpu ({torch.get_num_threads()} threads)"), "train_loss": total / steps,
                          "test_acc": correct / len(xt), "epoch_seconds": secs,
                          "samples_per_s": len(xs) / secs}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
