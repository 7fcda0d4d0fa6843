#!/usr/bin/env python3
"""Alpha-beta model of data-parallel speed-up for clgrad's models (docs/SCALING.md).

Inputs are measurements (see docs/SCALING.md for the commands that produced them) and the
assumptions named below; the outputs are predictions of a model, not measurements.

Usage:
  scripts/scaling_model.py [exchange.txt]            speed-up tables, N = 2 to 64, 25 and 100 Gbit/s
  scripts/scaling_model.py --links [exchange.txt]    the simulated links' cases (N = 2, 3, 4 at 10 and
                                                     1 Gbit/s), to set beside bench/netns_exchange.sh
where exchange.txt is the output of `clgrad bench exchange` (float32, in one process): the host
cost of one exchange (pack, sum, copy back) is fitted to it as alpha + beta * bytes.

Per step, time = T1 / N + host(S) + net(N, S), S the float32 gradient bytes, and net the busiest
link's time (full duplex: a link sends and receives at once at its rate):
  root        every rank's gradients to rank 0, then the parameters back, one after the other
              through rank 0's link: (N-1) (S8 + S) / BW + 2 (N-1) a, S8 the gradients on the
              wire (S, or S / 3.94 with int8: the broadcast parameters are float32 either way)
  allreduce   ring all-reduce (reduce-scatter + all-gather): 2 (N-1)/N S / BW + 2 (N-1) a;
              with int8, an all-gather of the quantized buckets: (N-1) S8 / BW + (N-1) a
  sharded     reduce-scatter of the gradients + all-gather of the parameters: the ring's bytes,
              2 (N-1)/N S / BW + 2 (N-1) a, with 1/N of the optimizer state and step per rank
a = NET_LATENCY per message. No overlap of the exchange with the backward pass is assumed.
"""
import re
import sys

# one-device step time (s) on PoCL, 2-core AMD EPYC Zen 3 (shared/MEASURED.md, 2026-11-23), and the
# trainable parameters (`clgrad train` prints them)
MODELS = {"mlp (batch 128)": (3.8e-3, 669706), "cnn (batch 128)": (58e-3, 421642),
          "transformer D64 (batch 16)": (110e-3, 113996)}
# GPT-2-small class (85M parameters, D 768, 12 layers): not measured here. Its step is ASSUMED:
# 8 sequences of 1024 tokens, 6 * params * tokens FLOPs, on an accelerator sustaining 100 TFLOP/s
GPT2_PARAMS = 85_000_000
GPT2_STEP = 6 * GPT2_PARAMS * 8 * 1024 / 100e12
LINKS_GBIT = (25, 100)
NET_LATENCY = 20e-6          # per message on Ethernet with TCP (an assumption, not measured here)
INT8_RATIO = 3.94            # bytes float32 / int8 blocks of 256 (measured: test_parallel_cli, bench exchange)
DEVICES = (2, 4, 8, 16, 32, 64)
ALGOS = ("root", "allreduce", "sharded")


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


def net_time(algo, n, size, bw, int8=False, latency=NET_LATENCY):
    """seconds the busiest link spends on one exchange of `size` float32 gradient bytes"""
    wire = size / INT8_RATIO if int8 else size
    if algo == "root":
        return (n - 1) * (wire + size) / bw + 2 * (n - 1) * latency
    if algo == "allreduce" and int8:
        return (n - 1) * wire / bw + (n - 1) * latency
    return 2 * (n - 1) / n * size / bw + 2 * (n - 1) * latency


def link_bytes(algo, n, size, state=None):
    """bytes rank 0's link carries a step, both ways (what bench/netns_exchange.sh measures)"""
    state = size if state is None else state
    if algo == "root":
        return (n - 1) * (size + state)
    return 4 * (n - 1) / n * size


def speedup_table(name, t1, params, alpha, beta, int8_ok=True, weak=False):
    """strong scaling (the global batch split N ways: T1 / N a step), or weak (each device keeps the
    one-device batch: N times the samples a step, speed-up N T1 / (T1 + exchange))"""
    size = 4 * params
    print(f"### {name}: {params} parameters, {size / 1e6:.2f} MB of gradients, one step {t1 * 1e3:.1f} ms, "
          f"host cost {1e3 * (alpha + beta * size):.2f} ms a step\n")
    head = " | ".join(f"{g} Gbit/s {c}" for g in LINKS_GBIT for c in (("fp32", "int8") if int8_ok else ("fp32",)))
    print(f"| devices | exchange | {head} |")
    print("|---|---|" + "---|" * (len(LINKS_GBIT) * (2 if int8_ok else 1)))
    for n in DEVICES:
        for algo in ALGOS:
            cells = []
            for g in LINKS_GBIT:
                bw = g * 1e9 / 8
                for int8 in ((False, True) if int8_ok and algo != "sharded" else (False,)):
                    comm = alpha + beta * size + net_time(algo, n, size, bw, int8)
                    cells.append(f"{(n * t1 / (t1 + comm)) if weak else t1 / (t1 / n + comm):.2f}x")
                if int8_ok and algo == "sharded":
                    cells.append("-")  # float32 only (the sharded optimizer refuses --compress int8)
            print(f"| {n} | {algo} | " + " | ".join(cells) + " |")
    print()


def links_table(alpha, beta):
    """the simulated hosts' cases: bench exchange's layer of 669,696 parameters"""
    size = 4 * 669696
    print("| link | N | exchange | predicted exchange ms/step | predicted rank 0 bytes/step |")
    print("|---|---|---|---|---|")
    for g in (10, 1):
        for n in (2, 3, 4):
            for algo in ALGOS:
                t = alpha + beta * size + net_time(algo, n, size, g * 1e9 / 8)
                print(f"| {g}gbit | {n} | {algo} | {1e3 * t:.1f} | {link_bytes(algo, n, size) / 1e6:.2f} MB |")


def main():
    args = [a for a in sys.argv[1:] if a != "--links"]
    alpha, beta, npts = fit_host(args[0] if args else None)
    print(f"host cost of one exchange (pack, sum, copy back), fitted to {npts} measured sizes: "
          f"{alpha * 1e3:.3f} ms + {beta * 1e9:.2f} ns/byte\n")
    if "--links" in sys.argv[1:]:
        links_table(alpha, beta)
        return
    for name, (t1, params) in MODELS.items():
        speedup_table(name, t1, params, alpha, beta)
    name = "GPT-2-small class, 8 x 1024 tokens (one step ASSUMED at 100 TFLOP/s), exchange on the device"
    speedup_table(name, GPT2_STEP, GPT2_PARAMS, 0.0, 0.0)
    speedup_table(name + ", weak scaling (8 x 1024 tokens per device)", GPT2_STEP, GPT2_PARAMS, 0.0, 0.0, weak=True)


if __name__ == "__main__":
    main()
