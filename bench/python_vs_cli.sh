#!/usr/bin/env bash
# The Python examples beside the CLI in one run, on one device: the MLP (Fashion-MNIST, 5 epochs,
# batch 128, Adam 1e-3, cosine) as `clgrad train --model mlp`, examples/python/mlp_trainer.py
# (clgrad.Trainer) and examples/python/mlp.py (the manual loop); then the character transformer
# (D64 H4 L2 T64) as `clgrad train --model transformer` and examples/python/charlm.py (through
# clgrad.Trainer and its own loop), windows/s. Prints each run's lines and the medians with their
# ratios to the CLI's. On a CPU device (PoCL shares the cores with the host) run it on a quiet
# machine: other load moves each figure by 2x.
#   bench/python_vs_cli.sh [--device SPEC] [--epochs N] [--skip-mlp] [--skip-charlm]
# (build first: build/clgrad; the package importable by $PYTHON, default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
device=pocl epochs=5 mlp=1 lm=1
while [ $# -gt 0 ]; do
	case $1 in
	--device) device=$2; shift 2 ;;
	--epochs) epochs=$2; shift 2 ;;
	--skip-mlp) mlp=0; shift ;;
	--skip-charlm) lm=0; shift ;;
	-h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "python_vs_cli.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
. bench/python_bench_common.sh
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, device $device"
if [ "$mlp" = 1 ]; then
	"$clgrad" train --model mlp --epochs "$epochs" --batch 128 --optimizer adam --lr 1e-3 --schedule cosine \
		--device "$device" | grep -v ' step ' | tee "$work/cli.txt"
	"$py" examples/python/mlp_trainer.py --epochs "$epochs" --device "$device" 2>&1 | tee "$work/trainer.txt"
	"$py" examples/python/mlp.py --epochs "$epochs" --device "$device" | tee "$work/loop.txt"
	cli=$(sed -n 's/.*, \([0-9.]*\) s, .*/\1/p' "$work/cli.txt" | median)
	tr=$(sed -n 's/^epoch .*, \([0-9.]*\) s, .*/\1/p' "$work/trainer.txt" | median)
	lo=$(sed -n 's/^epoch .*, \([0-9.]*\) s, .*/\1/p' "$work/loop.txt" | median)
	awk -v c="$cli" -v t="$tr" -v l="$lo" 'BEGIN {printf "mlp median epoch: clgrad train %.2f s; Trainer %.2f s (%.2fx); manual loop %.2f s (%.2fx)\n", c, t, t / c, l, l / c}'
fi
if [ "$lm" = 1 ]; then
	# the CLI's transformer and charlm.py at the same sizes, batch 32, AdamW 3e-3, cosine, clip 1:
	# windows/s of epochs 2-8 (the first compiles), and of charlm's own loop: steps 51-300 in 50s (the
	# first 50 load the kernels)
	"$clgrad" train --model transformer --epochs 8 --batch 32 --optimizer adamw --lr 3e-3 --schedule cosine \
		--clip 1 --device "$device" | grep -v ' step ' | tee "$work/tf.txt"
	"$py" examples/python/charlm.py --trainer 8 --device "$device" 2>&1 | tee "$work/lmt.txt"
	"$py" examples/python/charlm.py --steps 300 --device "$device" | tee "$work/lml.txt"
	cli=$(sed -n 's/^epoch .*, \([0-9]*\) samples.s.*/\1/p' "$work/tf.txt" | tail -7 | median)
	tr=$(sed -n 's/^epoch .*, \([0-9]*\) samples.s.*/\1/p' "$work/lmt.txt" | tail -7 | median)
	lo=$(sed -n 's/^step .*, \([0-9.]*\) windows.s/\1/p' "$work/lml.txt" | tail -n +2 | median)
	awk -v c="$cli" -v t="$tr" -v l="$lo" 'BEGIN {printf "transformer windows/s: clgrad train %.0f; charlm.py --trainer %.0f (%.2fx); charlm.py loop %.0f (%.2fx)\n", c, t, t / c, l, l / c}'
fi
