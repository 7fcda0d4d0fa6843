#!/usr/bin/env bash
# The character transformer (D64 H4 L2 T64, batch 32, AdamW 3e-3 in two groups, cosine, clip 1,
# float32) three ways in one run, alternating round by round: `clgrad train --model transformer`
# (windows/s: median of epochs 2-8), examples/python/charlm.py's own loop and its PyTorch twin
# bench/pytorch_charlm.py on the CPU (each: median windows/s of steps 51-300 in 50s; the first 50
# load clgrad's kernels and warm PyTorch up). PyTorch runs with its default threads (the cores);
# --torch-threads N adds a second PyTorch run with N threads (on a loaded machine PyTorch's
# OpenMP threads wait for each other: 1 thread can run 10x faster than 2). Prints each run's
# figure, then each side's median over the rounds and the ratios.
#   bench/charlm_vs_pytorch.sh [--device SPEC] [--rounds N] [--torch-threads N]
# (build first: build/clgrad; clgrad and torch importable by $PYTHON, default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
device=pocl rounds=3 tthreads=0
while [ $# -gt 0 ]; do
	case $1 in
	--device) device=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--torch-threads) tthreads=$2; shift 2 ;;
	-h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "charlm_vs_pytorch.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
. bench/python_bench_common.sh
loop_rate() { sed -n 's/^step .*, \([0-9.]*\) windows.s/\1/p' "$1" | tail -n +2 | median; }
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, device $device, $(git rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
	"$clgrad" train --model transformer --epochs 8 --batch 32 --optimizer adamw --lr 3e-3 --schedule cosine \
		--clip 1 --device "$device" | grep '^epoch [0-9]*:' >"$work/cli.txt"
	sed -n 's/^epoch .*, \([0-9]*\) samples.s.*/\1/p' "$work/cli.txt" | tail -7 | median >>"$work/cli.r"
	"$py" examples/python/charlm.py --steps 300 --device "$device" >"$work/lm.txt"
	loop_rate "$work/lm.txt" >>"$work/lm.r"
	"$py" bench/pytorch_charlm.py --steps 300 >"$work/pt.txt"
	loop_rate "$work/pt.txt" >>"$work/pt.r"
	line="round $r: clgrad train $(tail -1 "$work/cli.r"); charlm.py $(tail -1 "$work/lm.r"); $(head -1 "$work/pt.txt" | cut -d: -f1) $(tail -1 "$work/pt.r")"
	if [ "$tthreads" != 0 ]; then
		"$py" bench/pytorch_charlm.py --steps 300 --threads "$tthreads" >"$work/pt1.txt"
		loop_rate "$work/pt1.txt" >>"$work/pt1.r"
		line="$line; $tthreads thread(s) $(tail -1 "$work/pt1.r")"
	fi
	echo "$line windows/s (load $(cut -d' ' -f1 /proc/loadavg))"
done
cli=$(median <"$work/cli.r") lm=$(median <"$work/lm.r") pt=$(median <"$work/pt.r")
awk -v c="$cli" -v l="$lm" -v p="$pt" 'BEGIN {printf "median windows/s of %s: clgrad train %.0f; charlm.py %.0f (%.2fx the CLI, %.2fx PyTorch); PyTorch %.0f\n", "'"$rounds"' rounds", c, l, l / c, l / p, p}'
if [ "$tthreads" != 0 ]; then
	p1=$(median <"$work/pt1.r")
	awk -v l="$lm" -v p="$p1" 'BEGIN {printf "PyTorch with '"$tthreads"' thread(s): %.0f windows/s (charlm.py %.2fx)\n", p, l / p}'
fi
