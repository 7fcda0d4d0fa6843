"""Host overhead per op of the Python binding against the C API's and PyTorch's, side by side in
one process (the C figures from bench_overhead, run as a subprocess between the Python and the
PyTorch rounds): add on 1-element (1, 1) float32 tensors on the reference backend, grad off and
grad on (each add records a node), the median of R rounds of K adds. The same work on each side,
in two patterns:

- each: `a + b` K times, each result dropped at once (Python frees it when the next replaces it;
  C: clg_add then clg_free, no scope; PyTorch: the same expression). What a Python line costs.
- chain: x = x + b K times from x = a, then the chain dropped, inside the timing (C: bench_overhead's
  chain in a clg_scope, freed by clg_scope_end; grad on, it is a graph of K nodes, alive until the
  end of the round, so its memory grows past the caches: per op it costs more than `each`).

The binding's overhead is python minus C of the same pattern; PyTorch's overhead is its own time
per op (it runs the add on the CPU in place of our reference backend, whose add is a few ns).

    .venv/bin/python bench/bench_python_overhead.py [--bench-overhead build/bench/bench_overhead]
"""
import argparse
import json
import statistics
import subprocess
import time

import clgrad


def rounds_of(fn, k, rounds):
    """Median seconds per op of fn(k) (which runs k ops) over rounds."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn(k)
        times.append((time.perf_counter() - t0) / k)
    return statistics.median(times) * 1e6


def each(a, b):
    def run(k):
        for _ in range(k):
            a + b
    return run


def chain(a, b):
    def run(k):
        x = a
        for _ in range(k):
            x = x + b
        del x
    return run


def measure(make, grad, no_grad, k, rounds):
    a, b = make(True), make(True)
    if grad:
        return {p: rounds_of(f(a, b), k, rounds) for p, f in (("each", each), ("chain", chain))}
    a, b = make(False), make(False)
    with no_grad():
        return {p: rounds_of(f(a, b), k, rounds) for p, f in (("each", each), ("chain", chain))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench-overhead", default="build/bench/bench_overhead")
    ap.add_argument("--ops", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    k, r = args.ops, args.rounds
    rows = {}  # (side, grad) -> {pattern: us/op}
    make = lambda g: clgrad.ones(1, 1, device="ref", requires_grad=g)  # noqa: E731
    for g in (False, True):
        rows[("python", g)] = measure(make, g, clgrad.no_grad, k, r)
    c = json.loads(subprocess.run([args.bench_overhead, "--json", "--ops", str(k), "--rounds", str(r)],
                                  capture_output=True, text=True, check=True).stdout)
    for g, key in ((False, "grad_off"), (True, "grad_on")):
        rows[("C", g)] = {"each": c["add_each_freed"][key], "chain": c["us_per_op"]["add"][key]}
    try:
        import torch
        tmake = lambda g: torch.ones(1, 1, requires_grad=g)  # noqa: E731
        for g in (False, True):
            rows[("torch %s" % torch.__version__, g)] = measure(tmake, g, torch.no_grad, k, r)
    except ImportError:
        pass
    print("us per add, 1-element tensors, median of %d rounds of %d (reference backend; PyTorch on the CPU)" % (r, k))
    print("%-22s %10s %10s %10s %10s" % ("side", "each off", "each on", "chain off", "chain on"))
    for side in dict.fromkeys(s for s, _ in rows):
        off, on = rows[(side, False)], rows[(side, True)]
        print("%-22s %10.3f %10.3f %10.3f %10.3f" % (side, off["each"], on["each"], off["chain"], on["chain"]))
    for p in ("each", "chain"):
        print("binding over the C API, %s: %+.3f us (grad off), %+.3f us (grad on)"
              % (p, rows[("python", False)][p] - rows[("C", False)][p], rows[("python", True)][p] - rows[("C", True)][p]))


if __name__ == "__main__":
    main()
