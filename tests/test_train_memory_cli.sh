#!/usr/bin/env bash
# `clgrad train --recompute --accum-steps` end to end on the default text (the transformer and
# gpt): batches of 8 accumulated twice with recompute give the losses of batches of 16 (within
# 1e-5) with a smaller peak device memory a step (the log's peak_step_bytes); --profile prints the
# estimate beside the measured peak; --accum-steps 0 is refused naming the option.
# usage: test_train_memory_cli.sh CLGRAD_BINARY
set -u
clgrad=$1
if ! "$clgrad" devices --json | grep -q '"type": "cpu"\|"type": "gpu"'; then
	echo "no OpenCL device present: skipped"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for model in transformer gpt; do
	common=(--model "$model" --limit 64 --epochs 1 --dim 64 --heads 4 --layers 4 --seq-len 64 --optimizer sgd --lr 0.1)
	"$clgrad" train "${common[@]}" --batch 16 --log "$work/$model-a.jsonl" > "$work/a.out" 2>&1 ||
		{ cat "$work/a.out"; fail "$model: batch 16"; }
	"$clgrad" train "${common[@]}" --batch 8 --accum-steps 2 --recompute --profile --profile-top 1 \
		--log "$work/$model-b.jsonl" > "$work/b.out" 2>&1 || { cat "$work/b.out"; fail "$model: batch 8 x 2, recompute"; }
	grep -q "recompute; 2 micro-batches of 8 a step" "$work/b.out" || { cat "$work/b.out"; fail "$model: the model line"; }
	grep -q "memory estimate on device .*: .* MiB a step (parameters" "$work/b.out" ||
		{ cat "$work/b.out"; fail "$model: --profile printed no estimate"; }
	python3 - "$work/$model-a.jsonl" "$work/$model-b.jsonl" "$model" <<'PY' || fail "$model: accumulated run"
import json, sys
a, b = (json.loads(open(f).readline()) for f in sys.argv[1:3])
assert a["steps"] == b["steps"] == 4, (a["steps"], b["steps"])
assert abs(a["train_loss"] - b["train_loss"]) <= 1e-5 and abs(a["val_loss"] - b["val_loss"]) <= 1e-5, (a, b)
assert b["peak_step_bytes"][0] < a["peak_step_bytes"][0], (a["peak_step_bytes"], b["peak_step_bytes"])
print(f"{sys.argv[3]}: batch 16 loss {a['train_loss']:.6f}, 8 x 2 with recompute {b['train_loss']:.6f}; "
      f"peak a step {a['peak_step_bytes'][0] / 2**20:.2f} MiB against {b['peak_step_bytes'][0] / 2**20:.2f} MiB")
PY
done
out=$("$clgrad" train --model transformer --accum-steps 0 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q -- "--accum-steps" || fail "--accum-steps 0 accepted: $out"
echo "test_train_memory_cli: passed"
