#!/usr/bin/env bash
# Fashion-MNIST training through clgrad (on a device) and PyTorch (CPU) in one run, same workload:
# same data, normalisation, model, batch size, optimizer (Adam) and learning rate. Prints both
# logs and a table of per-epoch time and accuracy with ratios.
# usage: bench/train_vs_pytorch.sh [--model mlp|cnn] [--epochs N] [--limit N] [--device SPEC]
# (build first: cmake -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build; PyTorch from
#  PyPI: pip install torch)
set -euo pipefail
cd "$(dirname "$0")/.."
model=mlp epochs=5 limit=0 device=""
while [ $# -gt 0 ]; do
	case $1 in
	--model) model=$2; shift 2 ;;
	--epochs) epochs=$2; shift 2 ;;
	--limit) limit=$2; shift 2 ;;
	--device) device=$2; shift 2 ;;
	*) echo "unknown option $1"; exit 2 ;;
	esac
done
clgrad=${CLGRAD_BIN:-build/clgrad}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lim=(); [ "$limit" != 0 ] && lim=(--limit "$limit")
dev=(); [ -n "$device" ] && dev=(--device "$device")

echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"
echo "== clgrad: $clgrad train --model $model --epochs $epochs --batch 128 --optimizer adam --lr 1e-3 ${lim[*]} ${dev[*]}"
"$clgrad" train --model "$model" --epochs "$epochs" --batch 128 --optimizer adam --lr 1e-3 "${lim[@]}" "${dev[@]}" \
	--log "$work/clgrad.jsonl" | grep -v '^epoch [0-9]*/[0-9]* step'
echo "== pytorch: bench/pytorch_fashion.py --model $model --epochs $epochs ${lim[*]}"
OPENBLAS_NUM_THREADS=1 python3 bench/pytorch_fashion.py --model "$model" --epochs "$epochs" "${lim[@]}" \
	2>/dev/null | tee "$work/torch.jsonl"
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
c = [json.loads(l) for l in open(f"{w}/clgrad.jsonl")]
t = [json.loads(l) for l in open(f"{w}/torch.jsonl")]
print(f"\n{'epoch':>5}  {'clgrad s':>9} {'acc':>6}  {'pytorch s':>9} {'acc':>6}  {'time ratio clgrad/pytorch':>26}")
for a, b in zip(c, t):
    print(f"{a['epoch']:>5}  {a['epoch_seconds']:>9.1f} {a['test_acc']:>6.4f}  {b['epoch_seconds']:>9.1f} "
          f"{b['test_acc']:>6.4f}  {a['epoch_seconds'] / b['epoch_seconds']:>26.2f}")
print(f"clgrad device: {c[0]['device']}; pytorch: {t[0]['device']}")
PY
