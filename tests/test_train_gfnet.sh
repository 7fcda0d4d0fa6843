#!/usr/bin/env bash
# `clgrad train --model gfnet` end to end on the first 600 Fashion-MNIST samples: two epochs
# straight, and the same run stopped after one (--stop-after) and resumed from its checkpoint naming
# no training options; the resumed second epoch must continue the optimizer's steps and schedule
# (the same learning rate, loss and accuracy as the uninterrupted one), `clgrad eval` of the
# checkpoint must give the training's accuracy, and that accuracy must be well above chance (10%).
# usage: test_train_gfnet.sh CLGRAD_BINARY
set -u
clgrad=$1
data=/usr/share/datasets/fashion-mnist
if [ ! -e "$data/train-images-idx3-ubyte.gz" ]; then
	echo "Fashion-MNIST not installed ($data): skipped"
	exit 77
fi
if ! "$clgrad" devices --json | grep -q '"type": "cpu"\|"type": "gpu"'; then
	echo "no OpenCL device present: skipped"
	exit 77
fi
. "$(dirname "$0")/test_common.sh"
t_workdir
common=(--model gfnet --limit 600 --batch 50 --seed 5 --lr 3e-3 --warmup 5)

"$clgrad" train "${common[@]}" --epochs 2 --log "$work/a.jsonl" --save "$work/a.safetensors" > "$work/a.out" 2>&1 ||
	{ cat "$work/a.out"; fail "training run a"; }
grep -q "model gfnet: [0-9]* parameters" "$work/a.out" || { cat "$work/a.out"; fail "no model line"; }
"$clgrad" train "${common[@]}" --epochs 2 --stop-after 1 --log "$work/b.jsonl" --save "$work/b.safetensors" > "$work/b1.out" 2>&1 ||
	{ cat "$work/b1.out"; fail "training run b, first epoch"; }
"$clgrad" train --limit 600 --epochs 2 --resume "$work/b.safetensors" --log "$work/b.jsonl" \
	--save "$work/b.safetensors" > "$work/b2.out" 2>&1 || { cat "$work/b2.out"; fail "resumed run b"; }
grep -q "resumed from .* after 1 epoch" "$work/b2.out" || { cat "$work/b2.out"; fail "the resumed run did not say so"; }
"$clgrad" eval --checkpoint "$work/b.safetensors" --limit 600 > "$work/eval.out" 2>&1 ||
	{ cat "$work/eval.out"; fail "eval"; }
grep -q "(gfnet, 2 epochs)" "$work/eval.out" || { cat "$work/eval.out"; fail "eval does not name gfnet after 2 epochs"; }

python3 - "$work" <<'PY' || exit 1
import json, re, sys
work = sys.argv[1]
a = [json.loads(l) for l in open(f"{work}/a.jsonl")]
b = [json.loads(l) for l in open(f"{work}/b.jsonl")]
assert len(a) == 2 and len(b) == 2, (len(a), len(b))
assert all(r["model"] == "gfnet" for r in a + b), "log lines name another model"
assert b[1]["epoch"] == 2, f"the resumed run logged epoch {b[1]['epoch']}, not 2"
for key in ("lr", "train_loss", "test_acc", "test_loss"):
    assert abs(a[1][key] - b[1][key]) <= 1e-6, f"resumed epoch 2 {key} {b[1][key]} != uninterrupted {a[1][key]}"
assert a[1]["train_loss"] < a[0]["train_loss"], "the loss does not fall"
assert a[1]["test_acc"] > 0.3, f"test accuracy {a[1]['test_acc']} after 2 epochs: not well above chance (0.1)"
acc = float(re.search(r"test accuracy ([0-9.]+)", open(f"{work}/eval.out").read()).group(1))
assert abs(acc - b[1]["test_acc"]) < 1e-4, f"eval accuracy {acc} != training's {b[1]['test_acc']}"
print(f"gfnet: test accuracy {a[0]['test_acc']:.4f} -> {a[1]['test_acc']:.4f}; resumed epoch 2 equals the uninterrupted one; eval agrees: {acc}")
PY
echo "PASS"
