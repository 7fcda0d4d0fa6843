#!/bin/bash
# `clgrad bench ops --rows` (cli/bench_rows.c): the row kernels at (4096, 64) and (1024, 512), both
# kernel shapes, each against a copy of the same bytes. Checks the JSON: every op and direction at
# both sizes and shapes (and the elementwise exp once a size), the default shape marked, bytes as
# operands read + written once (softmax forward (4096, 64): 2 x 1 MiB), positive times, frac_copy =
# gbs / copy_gbs; and that a forced shape (CLGRAD_KERNEL_SHAPE=row=gpu) runs only that shape.
# usage: test_bench_rows.sh <clgrad>. Exit 77 (skipped) without python3.
clgrad=$1
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
unset CLGRAD_KERNEL_SHAPE CLGRAD_KERNEL_DIR
out=$(mktemp) && out2=$(mktemp) || exit 1
trap 'rm -f "$out" "$out2"' EXIT
"$clgrad" bench ops --rows --reps 2 --json >"$out" || { echo "FAILED: bench ops --rows exits non-zero"; exit 1; }
CLGRAD_KERNEL_SHAPE=row=gpu "$clgrad" bench ops --rows --reps 1 --json >"$out2" ||
	{ echo "FAILED: bench ops --rows under row=gpu exits non-zero"; exit 1; }
python3 - "$out" "$out2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
f = json.load(open(sys.argv[2]))
bad = []
def check(ok, what):
    print(("ok: " if ok else "FAILED: ") + what)
    if not ok:
        bad.append(what)
check(r["schema"] == "clgrad-bench-ops-rows/1", "schema")
check(r["copy_64mib_gbs"] > 0 and r["launch_s"] > 0, "the 64 MiB copy has a rate, a launch a time")
ops = {("softmax", "fwd"), ("softmax", "bwd"), ("log_softmax", "fwd"), ("log_softmax", "bwd"),
       ("layer_norm", "fwd"), ("layer_norm", "bwd"), ("sum", "fwd"), ("max", "fwd"),
       ("softmax_xent", "fwd"), ("softmax_xent", "bwd")}
seen = {(e["op"], e["dir"], e["rows"], e["cols"], e["shape"]) for e in r["rows"]}
want = {(o, d, R, C, s) for (o, d) in ops for (R, C) in ((4096, 64), (1024, 512)) for s in ("cpu", "gpu")}
want |= {("exp", "ew", R, C, "-") for (R, C) in ((4096, 64), (1024, 512))}
check(seen == want, "every op, direction, size and shape once (%d rows)" % len(r["rows"]))
check(all(e["default"] == (e["shape"] == r["default_shape"]) for e in r["rows"]), "the default shape is marked")
sm = [e for e in r["rows"] if e["op"] == "softmax" and e["dir"] == "fwd" and e["rows"] == 4096]
check(all(e["bytes"] == 2 * 4096 * 64 * 4 for e in sm), "softmax (4096, 64) moves 2 MiB")
xb = [e for e in r["rows"] if e["op"] == "softmax_xent" and e["dir"] == "bwd" and e["rows"] == 1024]
check(all(e["bytes"] == 4 * (3 * 1024 * 512 + 2 * 1024 + 1) for e in xb), "cross-entropy backward's bytes (row statistics (R, 2))")
check(all(e["s"] > 0 and e["copy_s"] > 0 and abs(e["frac_copy"] - e["gbs"] / e["copy_gbs"]) < 1e-6 * e["frac_copy"]
          for e in r["rows"]), "positive times, frac_copy = gbs / copy_gbs")
check(f["default_shape"] == "gpu" and {e["shape"] for e in f["rows"]} == {"gpu", "-"} and len(f["rows"]) == 22,
      "row=gpu forced: only the GPU shape")
sys.exit(1 if bad else 0)
PY
