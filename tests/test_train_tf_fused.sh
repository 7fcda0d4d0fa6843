#!/usr/bin/env bash
# The transformer's fused step (residual add + layer norm in one op, Q, K, V as one GEMM) end to
# end on every OpenCL device: fp32 and mixed precision train (a float16 branch meets the float32
# residual stream: the composite add takes it) and land within 1% of each other and of the
# composite path (CLGRAD_FUSED=0); the fused step launches fewer kernels than the composite.
# usage: test_train_tf_fused.sh CLGRAD_BINARY
set -u
clgrad=$1
devices=$("$clgrad" devices --json | python3 -c '
import json, sys
print(" ".join(str(d["index"]) for d in json.load(sys.stdin)["devices"] if d["type"] != "ref"))')
if [ -z "$devices" ]; then
	echo "no OpenCL device present: skipped"
	exit 77
fi
. "$(dirname "$0")/test_common.sh"
t_workdir
common=(--model transformer --epochs 1 --batch 8 --limit 3000 --seed 3 --profile)
val() { sed -n 's/^epoch 1: .*validation loss \([0-9.]*\).*/\1/p' "$1"; }
launches() { sed -n 's/^ *profile: \([0-9.]*\) kernel launches.*/\1/p' "$1" | tail -1; }
close() { python3 -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(0 if abs(a - b) <= 0.01 * abs(b) else 1)' "$@"; }

for d in $devices; do
	"$clgrad" train "${common[@]}" --device "$d" > "$work/fp32.$d" 2>&1 || fail "device $d fp32: $(tail -2 "$work/fp32.$d")"
	"$clgrad" train "${common[@]}" --device "$d" --precision mixed > "$work/mixed.$d" 2>&1 ||
		fail "device $d mixed: $(tail -2 "$work/mixed.$d")"
	CLGRAD_FUSED=0 "$clgrad" train "${common[@]}" --device "$d" > "$work/comp.$d" 2>&1 ||
		fail "device $d composite: $(tail -2 "$work/comp.$d")"
	a=$(val "$work/fp32.$d") b=$(val "$work/mixed.$d") c=$(val "$work/comp.$d")
	[ -n "$a" ] && [ -n "$b" ] && [ -n "$c" ] || fail "device $d: no validation loss ($a, $b, $c)"
	close "$b" "$a" || fail "device $d: mixed validation loss $b, fp32 $a"
	close "$c" "$a" || fail "device $d: composite validation loss $c, fused $a"
	la=$(launches "$work/fp32.$d") lc=$(launches "$work/comp.$d")
	python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)' "$la" "$lc" ||
		fail "device $d: $la launches a step fused, $lc composed"
	echo "device $d: validation loss fp32 $a, mixed $b, composite $c; launches a step $la fused, $lc composed"
done
echo "test_train_tf_fused: passed"
