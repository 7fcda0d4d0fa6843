#!/usr/bin/env bash
# One training workload through clgrad (on a device) and PyTorch (CPU, or CUDA) in one run, side by side:
# same data, model, batch size, optimizer (Adam) and learning rate. Prints both logs and a table of
# per-epoch time, samples (windows for the transformer) a second and quality, with ratios.
#   mlp, cnn: Fashion-MNIST (bench/pytorch_fashion.py)
#   transformer: the character-level LM on GPL-3 (bench/pytorch_transformer.py), default D=64,
#   4 heads, 2 layers, T=64, batch 16; larger: --dim 256 --heads 8 --layers 4 --seq-len 128
# usage: bench/train_vs_pytorch.sh [--model mlp|cnn|transformer] [--epochs N] [--limit N]
#        [--device SPEC] [--batch N] [--dim D --heads H --layers L --seq-len T] [--threads N]
#        [--data DIR|FILE] [--torch-device cpu|cuda]
#   (--torch-device cuda: PyTorch on an NVIDIA GPU, to set beside clgrad's --device gpu)
# (build first: cmake -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build; PyTorch from
#  PyPI: pip install torch)
set -euo pipefail
cd "$(dirname "$0")/.."
model=mlp epochs="" limit=0 device="" batch="" threads=0 tf=() tdev=cpu data=()
while [ $# -gt 0 ]; do
	case $1 in
	--model) model=$2; shift 2 ;;
	--epochs) epochs=$2; shift 2 ;;
	--limit) limit=$2; shift 2 ;;
	--device) device=$2; shift 2 ;;
	--batch) batch=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--torch-device) tdev=$2; shift 2 ;;
	--data) data=(--data "$2"); shift 2 ;;
	--dim|--heads|--layers|--seq-len) tf+=("$1" "$2"); shift 2 ;;
	-h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "train_vs_pytorch.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
case $model in
mlp|cnn) twin=bench/pytorch_fashion.py; : "${epochs:=5}" "${batch:=128}"
	[ ${#tf[@]} -eq 0 ] || { echo "train_vs_pytorch.sh: ${tf[0]} is for --model transformer" >&2; exit 2; } ;;
transformer) twin=bench/pytorch_transformer.py; : "${epochs:=1}" "${batch:=16}" ;;
*) echo "train_vs_pytorch.sh: --model $model: expected mlp, cnn or transformer" >&2; exit 2 ;;
esac
clgrad=${CLGRAD_BIN:-build/clgrad}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lim=(); [ "$limit" != 0 ] && lim=(--limit "$limit")
dev=(); [ -n "$device" ] && dev=(--device "$device")
thr=(); [ "$threads" != 0 ] && thr=(--threads "$threads")
[ "$model" = transformer ] || thr=()

echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"
args=(--model "$model" --epochs "$epochs" --batch "$batch" --optimizer adam --lr 1e-3 "${lim[@]}" "${tf[@]}" "${data[@]}")
echo "== clgrad: $clgrad train ${args[*]} ${dev[*]}"
"$clgrad" train "${args[@]}" "${dev[@]}" --log "$work/clgrad.jsonl" | grep -v '^epoch [0-9]*/[0-9]* step'
targs=(--epochs "$epochs" --batch "$batch" --device "$tdev" "${lim[@]}" "${thr[@]}" "${data[@]}")
[ "$model" = transformer ] && targs+=("${tf[@]}") || targs+=(--model "$model")
echo "== pytorch: $twin ${targs[*]}"
OPENBLAS_NUM_THREADS=1 python3 "$twin" "${targs[@]}" 2>/dev/null | tee "$work/torch.jsonl"
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
c = [json.loads(l) for l in open(f"{w}/clgrad.jsonl")]
t = [json.loads(l) for l in open(f"{w}/torch.jsonl")]
q = "val_loss" if "val_loss" in c[0] else "test_acc"
unit = "windows/s" if q == "val_loss" else "samples/s"
print(f"\n{'epoch':>5}  {'clgrad s':>9} {unit:>10} {q:>9}  {'pytorch s':>9} {unit:>10} {q:>9}  {'speed clgrad/pytorch':>21}")
for a, b in zip(c, t):
    print(f"{a['epoch']:>5}  {a['epoch_seconds']:>9.1f} {a['samples_per_s']:>10.0f} {a[q]:>9.4f}  "
          f"{b['epoch_seconds']:>9.1f} {b['samples_per_s']:>10.0f} {b[q]:>9.4f}  "
          f"{a['samples_per_s'] / b['samples_per_s']:>21.2f}")
print(f"clgrad device: {c[0]['device']}; pytorch: {t[0]['device']}")
print("epoch time on both sides: the epoch's training pass only, from its shuffle to its last step done "
      "(shuffle, batch gather, clgrad's host-to-device upload, forward, loss, backward, Adam, the running "
      "loss); the test-set evaluation after it is outside on both sides")
PY
