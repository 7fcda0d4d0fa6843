"""Host overhead per op of the Python binding against the C API's, side by side in one run: add on
1-element tensors on the reference backend, grad off and grad on (a node recorded), the median of
R rounds of K ops. The C figures come from bench_overhead (same ops, same backend), run here as a
subprocess; PyTorch's own per-op overhead beside them where torch is importable.

    .venv/bin/python bench/bench_python_overhead.py [--bench-overhead build/bench/bench_overhead]
"""
import argparse
import json
import statistics
import subprocess
import time

import clgrad


def per_op(fn, k, rounds):
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(k):
            fn()
        times.append((time.perf_counter() - t0) / k)
    return statistics.median(times) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench-overhead", default="build/bench/bench_overhead")
    ap.add_argument("--ops", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    rows = {}
    a, b = clgrad.ones(1, device="ref"), clgrad.ones(1, device="ref")
    with clgrad.no_grad():
        rows["python grad off"] = per_op(lambda: a + b, args.ops, args.rounds)
    ga, gb = clgrad.ones(1, device="ref", requires_grad=True), clgrad.ones(1, device="ref", requires_grad=True)
    rows["python grad on"] = per_op(lambda: ga + gb, args.ops, args.rounds)
    c = json.loads(subprocess.run([args.bench_overhead, "--json", "--ops", str(args.ops), "--rounds", str(args.rounds)],
                                  capture_output=True, text=True, check=True).stdout)
    add = c["us_per_op"]["add"]
    rows["C grad off"], rows["C grad on"] = add["grad_off"], add["grad_on"]
    try:
        import torch
        ta, tb = torch.ones(1), torch.ones(1)
        with torch.no_grad():
            rows["torch grad off"] = per_op(lambda: ta + tb, args.ops, args.rounds)
        tga, tgb = torch.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)
        rows["torch grad on"] = per_op(lambda: tga + tgb, args.ops, args.rounds)
    except ImportError:
        pass
    for k, v in rows.items():
        print("%-16s %7.3f us/op" % (k, v))
    for mode in ("off", "on"):
        print("binding's overhead, grad %s: %+.3f us/op over the C API" % (mode, rows["python grad " + mode]
                                                                          - rows["C grad " + mode]))


if __name__ == "__main__":
    main()
