#!/usr/bin/env bash
# `clgrad train --precision mixed` end to end on every OpenCL device, on the first 500 Fashion-MNIST
# samples (MLP, 2 epochs): the final train and test losses within 2% of the fp32 run's, the loss
# scaler reported; a mixed run stopped after one epoch and resumed with --precision fp32 finishes
# near the straight mixed run; a bad --precision is refused.
# usage: test_train_mixed.sh CLGRAD_BINARY
set -u
clgrad=$1
data=/usr/share/datasets/fashion-mnist
if [ ! -e "$data/train-images-idx3-ubyte.gz" ]; then
	echo "Fashion-MNIST not installed ($data): skipped"
	exit 77
fi
devices=$("$clgrad" devices --json | python3 -c '
import json, sys
print(" ".join(str(d["index"]) for d in json.load(sys.stdin)["devices"] if d["type"] != "ref"))')
if [ -z "$devices" ]; then
	echo "no OpenCL device present: skipped"
	exit 77
fi
. "$(dirname "$0")/test_common.sh"
t_workdir
common=(--model mlp --limit 500 --batch 50 --seed 4 --epochs 2)

# "epoch N: train loss A, test accuracy B (test loss C)" -> "A C" of the last epoch
losses() { sed -n 's/^epoch [0-9]*: train loss \([0-9.]*\), test accuracy [0-9.]* (test loss \([0-9.]*\)).*/\1 \2/p' "$1" | tail -1; }
close() { python3 -c 'import sys; a, b, tol = map(float, sys.argv[1:]); sys.exit(0 if abs(a - b) <= tol * abs(b) else 1)' "$@"; }

if "$clgrad" train "${common[@]}" --precision half > "$work/bad.out" 2>&1; then fail "--precision half accepted"; fi
grep -q "precision" "$work/bad.out" || fail "--precision half: the message does not name the option"

for d in $devices; do
	for p in fp32 mixed; do
		"$clgrad" train "${common[@]}" --device "$d" --precision $p > "$work/$p$d.out" 2>&1 ||
			{ cat "$work/$p$d.out"; fail "device $d: training in $p"; }
	done
	grep -q "precision mixed" "$work/mixed$d.out" || fail "device $d: the mixed run does not say so"
	grep -q "loss scale" "$work/mixed$d.out" || fail "device $d: no loss scale reported"
	if grep -q "loss scale" "$work/fp32$d.out"; then fail "device $d: loss scaling in fp32"; fi
	read -r f_train f_test <<< "$(losses "$work/fp32$d.out")"
	read -r m_train m_test <<< "$(losses "$work/mixed$d.out")"
	echo "device $d: fp32 train $f_train test $f_test; mixed train $m_train test $m_test"
	close "$m_train" "$f_train" 0.02 || fail "device $d: mixed train loss $m_train vs fp32 $f_train"
	close "$m_test" "$f_test" 0.02 || fail "device $d: mixed test loss $m_test vs fp32 $f_test"

	# a mixed checkpoint after one epoch, resumed in fp32
	"$clgrad" train "${common[@]}" --device "$d" --precision mixed --stop-after 1 --save "$work/m$d.safetensors" \
		> "$work/s$d.out" 2>&1 || { cat "$work/s$d.out"; fail "device $d: mixed run stopped after one epoch"; }
	"$clgrad" train --limit 500 --epochs 2 --device "$d" --precision fp32 --resume "$work/m$d.safetensors" \
		> "$work/r$d.out" 2>&1 || { cat "$work/r$d.out"; fail "device $d: resumed in fp32"; }
	grep -q "resumed from" "$work/r$d.out" || fail "device $d: the resumed run did not say so"
	grep -q "precision fp32" "$work/r$d.out" || fail "device $d: the resumed run is not fp32"
	read -r r_train r_test <<< "$(losses "$work/r$d.out")"
	echo "device $d: mixed 1 epoch + fp32 1 epoch: train $r_train test $r_test"
	close "$r_test" "$m_test" 0.02 || fail "device $d: resumed test loss $r_test vs straight mixed $m_test"
done
echo "test_train_mixed: passed"
