"""examples/python/mlp.py's MLP trained by clgrad.Trainer: the C library's training loop (the one
`clgrad train` runs) over a model written in Python, with its progress bar, evaluation after each
epoch and a checkpoint.

    .venv/bin/python examples/python/mlp_trainer.py [--epochs N] [--device SPEC] [--save FILE]
"""
import argparse

import clgrad
from clgrad.data import FashionMNIST

from mlp import MLP  # the same model as the manual loop's


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--device", default=None)
    ap.add_argument("--save", default=None)
    args = ap.parse_args()
    clgrad.manual_seed(0)
    model = MLP().to(clgrad.device(args.device))
    trainer = clgrad.Trainer(model, epochs=args.epochs, batch_size=args.batch, optimizer="adam", lr=args.lr,
                             schedule="cosine", save=args.save)
    history = trainer.fit(FashionMNIST(train=True), FashionMNIST(train=False))
    print("test accuracy %.4f after %d epochs, %.2f s an epoch" % (
        history[-1].test_acc, len(history), sum(h.seconds for h in history) / len(history)))


if __name__ == "__main__":
    main()
