#!/usr/bin/env bash
# Issue 12's floors in one table: every workload of bench/train_vs_pytorch.sh (MLP and CNN; the
# transformer at batch 16 and 64 and the larger size; every epoch a row) on each device named, each run
# side by side with PyTorch on the same machine. Prints a Markdown table: clgrad's and PyTorch's
# samples (windows) a second, the speed ratio and its floor. With --rounds N each workload runs N
# times (PyTorch's own rate moves 20-30% from run to run on a shared VM): the medians, and the
# lowest and highest ratio of the rounds.
# usage: bench/vs_pytorch_table.sh [--devices 1,2] [--only mlp,cnn,t16,t64,tlarge] [--rounds N]
# (Intel's CPU runtime beside PoCL: OCL_ICD_VENDORS=... LD_LIBRARY_PATH=..., see docs/VENDORS.md)
set -euo pipefail
cd "$(dirname "$0")/.."
devices=1 only=mlp,cnn,t16,t64,tlarge rounds=1
while [ $# -gt 0 ]; do
	case $1 in
	--devices) devices=$2; shift 2 ;;
	--devices=*) devices=${1#*=}; shift ;;
	--only) only=$2; shift 2 ;;
	--only=*) only=${1#*=}; shift ;;
	--rounds) rounds=$2; shift 2 ;;
	--rounds=*) rounds=${1#*=}; shift ;;
	-h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "vs_pytorch_table.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
log=$(mktemp)
trap 'rm -f "$log" "$log.rows"' EXIT
# name, floor (speed ratio: the issue's time floors 0.6x and 0.9x as speed), train_vs_pytorch.sh args
# (several epochs: the first includes the first use of each kernel; a transformer epoch at batch 64
# is 8 steps, so it is mostly that)
runs=(
	"mlp|1.67|--model mlp --epochs 2"
	"cnn|1.11|--model cnn --epochs 2"
	"t16|1.00|--model transformer --batch 16 --epochs 3"
	"t64|1.00|--model transformer --batch 64 --epochs 3"
	"tlarge|1.00|--model transformer --batch 16 --dim 256 --heads 8 --layers 4 --seq-len 128 --epochs 2"
)
case $rounds in
''|*[!0-9]*|0) echo "vs_pytorch_table.sh: --rounds $rounds: expected a whole number from 1" >&2; exit 2 ;;
esac
if [ "$rounds" = 1 ]; then
	echo "| workload | device | clgrad /s | PyTorch /s | speed ratio | floor |"
	echo "|---|---|---|---|---|---|"
else
	echo "| workload | device | clgrad /s (median) | PyTorch /s (median) | speed ratio (median; lowest-highest of $rounds) | floor |"
	echo "|---|---|---|---|---|---|"
fi
for r in "${runs[@]}"; do
	IFS='|' read -r name floor args <<<"$r"
	[[ ",$only," == *",$name,"* ]] || continue
	for d in ${devices//,/ }; do
		: >"$log.rows"
		for _ in $(seq "$rounds"); do
			# shellcheck disable=SC2086
			bench/train_vs_pytorch.sh $args --device "$d" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
			dev=$(sed -n 's/^clgrad device: \(.*\); pytorch.*/\1/p' "$log")
			# the per-epoch rows: epoch, clgrad s, rate, quality, pytorch s, rate, quality, ratio
			awk '$1 ~ /^[0-9]+$/ && NF == 8 { print $1, $3, $6, $8 }' "$log" >>"$log.rows"
		done
		python3 - "$log.rows" "$name" "$dev" "$floor" "$rounds" <<'PY'
import statistics, sys
rows, name, dev, floor, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
by = {}
for line in open(rows):
    e, c, t, q = line.split()
    by.setdefault(int(e), []).append((float(c), float(t), float(q)))
for e in sorted(by):
    c, t, q = zip(*by[e])
    med = lambda v: statistics.median(v)
    spread = "" if rounds == 1 else f" ({min(q):.2f}-{max(q):.2f})"
    print(f"| {name} (epoch {e}) | {dev} | {med(c):.0f} | {med(t):.0f} | {med(q):.2f}{spread} | {floor} |")
PY
	done
done
