#!/usr/bin/env bash
# Issue 17's done-when for the launch-geometry model: `clgrad bench step --model mlp|cnn --gpu G`
# with the GPU kernel shapes flags no launch, on every modelled GPU (h100, mi300x, a770, rx7900):
# no launch has enough work to fill the GPU yet fewer work-groups than its compute units. The MLP's
# skinny products on an H100 take the own GEMM's split-K (gemm_split_sum present), the CNN's im2col
# its element-per-work-item shape (im2col_px).
# usage: test_bench_step_fill.sh CLGRAD_BINARY
set -u
clgrad=$1
. "$(dirname "$0")/test_common.sh"
t_workdir
dev="Portable Computing Language"
"$clgrad" devices 2>/dev/null | grep -q "$dev" || { echo "PoCL not present: skipped"; exit 77; }
for model in mlp cnn; do
	for gpu in h100 mi300x a770 rx7900; do
		out="$work/$model-$gpu.out"
		CLGRAD_KERNEL_SHAPE=gpu "$clgrad" bench step --model "$model" --gpu "$gpu" --device "$dev" > "$out" 2>&1 ||
			{ cat "$out"; fail "bench step --model $model --gpu $gpu failed"; }
		grep -q "; 0 flagged$" "$out" || { grep -E "FLAG|modelled step" "$out"; fail "$model on $gpu: launches flagged"; }
		grep "modelled step" "$out"
	done
done
grep -q " gemm_split_sum " "$work/mlp-h100.out" || fail "mlp on h100: no split-K sum (gemm_split_sum)"
grep -q " im2col_px " "$work/cnn-h100.out" || fail "cnn on h100: im2col not in its GPU shape (im2col_px)"
echo "ok: mlp and cnn on four GPUs, nothing flagged"
