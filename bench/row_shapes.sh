#!/bin/bash
# The row kernels' shapes side by side (docs/PERFORMANCE.md, "Row kernels in two shapes"):
# `clgrad bench ops` with CLGRAD_KERNEL_SHAPE=row=gpu (sub-groups off and on) and row=cpu, and a
# "before" binary when given, on one device, ROUNDS times interleaved (shared machines are noisy).
# usage: bench/row_shapes.sh CLGRAD [BEFORE_CLGRAD] [-- bench ops options such as --device Intel]
set -u
clgrad=$1; shift
before=""
if [ $# -gt 0 ] && [ "$1" != "--" ]; then before=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
pattern='^(device|sum|max|softmax|layer_norm|ln_bwd|xent|add)'
for round in $(seq 1 "${ROUNDS:-2}"); do
	if [ -n "$before" ]; then
		echo "### round $round: before ($before)"
		"$before" bench ops --reps 30 "$@" 2>&1 | grep -E "$pattern"
	fi
	for cfg in "gpu 0" "gpu 1" "cpu 1"; do
		shape=${cfg% *} sg=${cfg#* }
		echo "### round $round: row=$shape, CLGRAD_SUBGROUPS=$sg"
		CLGRAD_KERNEL_SHAPE=row=$shape CLGRAD_SUBGROUPS=$sg "$clgrad" bench ops --reps 30 "$@" 2>&1 | grep -E "$pattern"
	done
done
