#!/bin/bash
# The transformer's GEMMs (`clgrad train --model transformer`, batch 16) through two clgrad binaries,
# alternated shape by shape, so both see the same load: GFLOP/s of each (median of the rounds, each
# round `bench gemm` with --reps R, itself a median) and new / old. Linear layers keep W as (out,
# in): forward x @ W^T (Bt; gemm_bias_act's GEMM), dx = g @ W, dW = g^T @ x (At).
#   bench/gemm_old_new.sh OLD_CLGRAD NEW_CLGRAD [--size default|large|both|mlp] [--rounds N] [--reps R]
#                         [--device SPEC]
# default: D 64, T 64, 4 heads (rows 1024); large: D 256, T 128, 8 heads (rows 2048); mlp: the MLP's
# GEMMs (`train --model mlp`, batch 128, 784 -> 512 -> 512 -> 10) and the CNN's linear forward
# (128, 128) K 3136, the shapes below 256 rows (gemm_dot for x @ W^T).
# Where both binaries print the CPU time a call (`bench gemm`, since the gemm_op route for A @ B^T)
# the rate is GFLOP per CPU second of the process (what a loaded machine moves least), else wall
# GFLOP/s; the header says which. OLD_ENV / NEW_ENV: variables for one side only, e.g. the same
# binary twice with OLD_ENV=CLGRAD_GEMM_BT=dot.
set -euo pipefail
old=${1:?usage: $0 OLD_CLGRAD NEW_CLGRAD [--size default|large|both] [--rounds N] [--reps R] [--device SPEC]}
new=${2:?usage: $0 OLD_CLGRAD NEW_CLGRAD ...}
shift 2
size=both rounds=3 reps=5 dev=1
while [ $# -gt 0 ]; do
	case $1 in
	--size) size=$2 ;;
	--rounds) rounds=$2 ;;
	--reps) reps=$2 ;;
	--device) dev=$2 ;;
	*) echo "gemm_old_new.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift 2
done
# label M N K flag, for rows R and width D: qkv (D -> 3D), proj (D -> D), fc1 (D -> 4D), fc2 (4D -> D)
shapes() {
	local R=$1 D=$2 F=$(($2 * 4)) Q=$(($2 * 3))
	echo "qkv_fwd $R $Q $D --transb"; echo "proj_fwd $R $D $D --transb"
	echo "fc1_fwd $R $F $D --transb"; echo "fc2_fwd $R $D $F --transb"
	echo "qkv_dx $R $D $Q -"; echo "fc1_dx $R $D $F -"; echo "fc2_dx $R $F $D -"
	echo "qkv_dW $Q $D $R --transa"; echo "fc1_dW $F $D $R --transa"; echo "fc2_dW $D $F $R --transa"
}
mlp_shapes() {
	echo "fc1_fwd 128 512 784 --transb"; echo "fc2_fwd 128 512 512 --transb"; echo "fc3_fwd 128 10 512 --transb"
	echo "fc2_dx 128 512 512 -"; echo "fc3_dx 128 512 10 -"
	echo "fc1_dW 512 784 128 --transa"; echo "fc2_dW 512 512 128 --transa"; echo "fc3_dW 10 512 128 --transa"
	echo "cnn_fc1 128 128 3136 --transb"
}
case $size in
default | large | both) list=$( { [ "$size" != large ] && shapes 1024 64; [ "$size" != default ] && shapes 2048 256; } || true) ;;
mlp) list=$(mlp_shapes) ;;
*) echo "gemm_old_new.sh: --size is default, large, both or mlp" >&2; exit 2 ;;
esac
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "old: ${OLD_ENV:+$OLD_ENV }$old"
echo "new: ${NEW_ENV:+$NEW_ENV }$new"
while read -r label m n k flag; do
	for r in $(seq "$rounds"); do
		for which in old new; do
			bin=$old
			[ $which = new ] && bin=$new
			f=$flag
			[ "$f" = - ] && f=
			envs=${OLD_ENV:-}
			[ $which = new ] && envs=${NEW_ENV:-}
			res=$(env $envs "$bin" bench gemm --m "$m" --n "$n" --k "$k" $f --reps "$reps" --device "$dev" 2>/dev/null)
			g=$(sed -n 's/.*float32: \([0-9.]*\) GFLOP\/s.*/\1/p' <<<"$res" | head -1)
			c=$(sed -n 's/.*; \([0-9.]*\) GFLOP per CPU second.*/\1/p' <<<"$res" | head -1)
			echo "$label ${m}x${n}x${k}${flag/-/} $which ${g:-nan} ${c:-nan}" >>"$out"
		done
	done
done <<<"$list"
python3 - "$out" <<'PY'
import sys, statistics as st
import math
rows, cpu = {}, True
for line in open(sys.argv[1]):
    lab, dims, which, g, c = line.split()
    cpu = cpu and not math.isnan(float(c))
    rows.setdefault((lab, dims), {}).setdefault(which, []).append((float(g), float(c)))
unit = "GFLOP per CPU second" if cpu else "GFLOP/s (wall)"
print("rates: " + unit + ", median of the rounds")
print("%-10s %-22s %10s %10s %9s" % ("gemm", "M x N x K", "old", "new", "new/old"))
for (lab, dims), v in rows.items():
    v = {w: [x[1] if cpu else x[0] for x in xs] for w, xs in v.items()}
    o, n = st.median(v["old"]), st.median(v["new"])
    print("%-10s %-22s %10.1f %10.1f %9.2f" % (lab, dims, o, n, n / o if o else float("nan")))
PY
