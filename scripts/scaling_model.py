#!/usr/bin/env python3
"""Alpha-beta model of data-parallel speed-up for clgrad's models (docs/SCALING.md).

Inputs are measurements (see docs/SCALING.md for the commands that produced them); the outputs are
predictions of a model, not measurements. Usage: scripts/scaling_model.py [exchange.txt]
where exchange.txt is the output of `clgrad bench exchange` (float32, in one process): the host
cost of one exchange (pack, sum, copy back) is fitted to it as alpha + beta * bytes.
"""
import re
import sys

# one-device step time (s) on PoCL, 2-core AMD EPYC Zen 3 (shared/MEASURED.md, 2026-11-23), and the
# trainable parameters (`clgrad train` prints them)
MODELS = {"mlp (batch 128)": (3.8e-3, 669706), "cnn (batch 128)": (58e-3, 421642),
          "transformer D64 (batch 16)": (110e-3, 113996)}
LINKS_GBIT = (10, 25, 100)
NET_LATENCY = 20e-6          # per message on Ethernet with TCP (an assumption, not measured here)
INT8_RATIO = 3.94            # bytes float32 / int8 blocks of 256 (measured: test_parallel_cli, bench exchange)
DEVICES = (2, 4, 8)


def fit_host(path):
    """least squares alpha + beta * bytes over the float32 rows of `clgrad bench exchange`"""
    pts = []
    if path:
        for line in open(path):
            if line.startswith("gradient exchange") and pts:
                break  # first table only: float32 in one process
            m = re.match(r"\s*(\d+)\s+(\d+)\s+([\d.]+)\s+[\d.]+(\s+\d+\s+\d+)?\s*$", line)
            if m:
                pts.append((float(m.group(2)), float(m.group(3)) * 1e-3))
    if len(pts) < 2:
        return 2.5e-4, 3.6e-9, 0
    n = len(pts)
    sx = sum(p[0] for p in pts); sy = sum(p[1] for p in pts)
    sxx = sum(p[0] ** 2 for p in pts); sxy = sum(p[0] * p[1] for p in pts)
    beta = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    return max((sy - beta * sx) / n, 0.0), beta, n


def net_time(algo, n, size, bw):
    """seconds for one exchange of `size` bytes per device over links of bw bytes/s"""
    if algo == "ring":       # ring all-reduce: reduce-scatter + all-gather
        return 2 * (n - 1) / n * size / bw + 2 * (n - 1) * NET_LATENCY
    # clgrad today: every rank's gradients to rank 0 and the parameters back, through rank 0's link
    return 2 * (n - 1) * (size / bw + NET_LATENCY)


def main():
    alpha, beta, npts = fit_host(sys.argv[1] if len(sys.argv) > 1 else None)
    print(f"host cost of one exchange (pack, sum, copy back), fitted to {npts} measured sizes: "
          f"{alpha * 1e3:.3f} ms + {beta * 1e9:.2f} ns/byte\n")
    for name, (t1, params) in MODELS.items():
        size = 4 * params
        print(f"### {name}: {params} parameters, {size / 1e6:.2f} MB of gradients, one step {t1 * 1e3:.1f} ms\n")
        head = " | ".join(f"{g} Gbit/s {c}" for g in LINKS_GBIT for c in ("fp32", "int8"))
        print(f"| devices | exchange | {head} |")
        print("|---|---|" + "---|" * (2 * len(LINKS_GBIT)))
        for n in DEVICES:
            for algo in ("root", "ring"):
                cells = []
                for g in LINKS_GBIT:
                    bw = g * 1e9 / 8
                    for ratio in (1.0, INT8_RATIO):
                        wire = size / ratio
                        comm = alpha + beta * size + net_time(algo, n, wire, bw)
                        cells.append(f"{t1 / (t1 / n + comm):.2f}x")
                label = "gather to rank 0 + broadcast (clgrad)" if algo == "root" else "ring all-reduce"
                print(f"| {n} | {label} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main()
