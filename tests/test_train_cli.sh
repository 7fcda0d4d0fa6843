#!/usr/bin/env bash
# `clgrad train` end to end on the first 1000 Fashion-MNIST samples: the JSON log's fields, a
# checkpoint evaluated by `clgrad eval`, and resume equivalence (a 2-epoch run stopped after 1 with
# --stop-after, then resumed, gives the
# same second epoch as 2 epochs straight, with SGD + momentum on a cosine schedule, the resumed run
# naming no training options); bad input fails with a clear message.
# usage: test_train_cli.sh CLGRAD_BINARY
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
common=(--model mlp --limit 1000 --batch 100 --seed 3 --optimizer sgd --lr 0.05 --momentum 0.9 --schedule cosine)

"$clgrad" train "${common[@]}" --epochs 2 --profile --log "$work/a.jsonl" --save "$work/a.safetensors" > "$work/a.out" 2>&1 ||
	{ cat "$work/a.out"; fail "training run a"; }
grep -q "epoch 2: train loss" "$work/a.out" || fail "no epoch summary line"
grep -q "profile: .* kernel launches, .* uploads, .* downloads a step; the host queues a step in" "$work/a.out" ||
	{ cat "$work/a.out"; fail "--profile printed no profile line"; }
grep -q "host: .* ms a step inside the OpenCL runtime's kernel enqueues" "$work/a.out" ||
	{ cat "$work/a.out"; fail "--profile printed no enqueue-time line"; }
# --profile's op table: steps 3-5 of each epoch timed op by op (clg_op_timer.h); the GEMMs are
# there, the shares add up to at most 100%, and the log holds the same entries
python3 - "$work/a.out" "$work/a.jsonl" <<'PY' || { cat "$work/a.out"; fail "--profile's op table"; }
import json, re, sys
out = open(sys.argv[1]).read()
heads = re.findall(r"ops of 3 step\(s\) on device \d+, each op waited for: ([0-9.]+) ms a step", out)
assert len(heads) == 2, "one op table an epoch expected, got %d" % len(heads)
rows = re.findall(r"^    (\S+) \(([0-9, ]+)\)(?: K \d+)?\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)%$", out, re.M)
assert any(r[0] == "gemm" for r in rows), "no gemm row in %r" % rows
for t in (rows[:len(rows) // 2], rows[len(rows) // 2:]):
    share = sum(float(r[4]) for r in t)
    assert 20 < share <= 100.5, "shares add up to %.1f%%" % share
logs = [json.loads(l) for l in open(sys.argv[2])]
assert all(l["op_profile"] and all(e["ms_per_step"] >= 0 and e["calls_per_step"] > 0 for e in l["op_profile"])
           for l in logs), "op_profile missing from the log"
assert any(e["op"].startswith("gemm (") for e in logs[0]["op_profile"])
PY
"$clgrad" train "${common[@]}" --epochs 2 --stop-after 1 --log "$work/b.jsonl" --save "$work/b.safetensors" > "$work/b1.out" 2>&1 ||
	{ cat "$work/b1.out"; fail "training run b, first epoch"; }
# the resumed run names no training options: the checkpoint restores them (optimizer, lr, schedule...)
"$clgrad" train --limit 1000 --epochs 2 --resume "$work/b.safetensors" --log "$work/b.jsonl" \
	--save "$work/b.safetensors" > "$work/b2.out" 2>&1 || { cat "$work/b2.out"; fail "resumed run b"; }
grep -q "resumed from" "$work/b2.out" || fail "the resumed run did not say so"
# AdamW (default weight decay 0.01: biases in a group of their own without it) resumes exactly
# too: the checkpoint's optim.J.* follow the model's order whatever the groups' order
adamw=(--limit 1000 --batch 100 --optimizer adamw --lr 3e-3)
"$clgrad" train "${adamw[@]}" --epochs 2 --log "$work/c.jsonl" > "$work/c.out" 2>&1 || { cat "$work/c.out"; fail "adamw run c"; }
"$clgrad" train "${adamw[@]}" --epochs 2 --stop-after 1 --log "$work/d.jsonl" --save "$work/d.safetensors" > "$work/d1.out" 2>&1 ||
	{ cat "$work/d1.out"; fail "adamw run d, first epoch"; }
"$clgrad" train --limit 1000 --epochs 2 --resume "$work/d.safetensors" --log "$work/d.jsonl" > "$work/d2.out" 2>&1 ||
	{ cat "$work/d2.out"; fail "adamw run d, resumed"; }
python3 - "$work" <<'PY' || fail "adamw resume"
import json, sys
c = [json.loads(l) for l in open(sys.argv[1] + "/c.jsonl")]
d = [json.loads(l) for l in open(sys.argv[1] + "/d.jsonl")]
assert len(c) == 2 and len(d) == 2 and abs(c[1]["train_loss"] - d[1]["train_loss"]) <= 1e-6, (c, d)
print("adamw: resumed epoch 2 loss", d[1]["train_loss"], "= uninterrupted", c[1]["train_loss"])
PY
"$clgrad" eval --checkpoint "$work/a.safetensors" --limit 1000 > "$work/eval.out" 2>&1 ||
	{ cat "$work/eval.out"; fail "eval"; }

python3 - "$work" <<'PY' || exit 1
import json, re, sys
work = sys.argv[1]
a = [json.loads(l) for l in open(f"{work}/a.jsonl")]
b = [json.loads(l) for l in open(f"{work}/b.jsonl")]
assert len(a) == 2 and len(b) == 2, (len(a), len(b))
for rec in a + b:
    for key in ("epoch", "train_loss", "test_acc", "epoch_seconds", "samples_per_s"):
        assert key in rec, f"log line lacks {key}: {rec}"
assert a[1]["train_loss"] < a[0]["train_loss"], "the loss does not fall"
for rec in a:  # --profile's counts (every run logs them): 10 steps of an MLP on an OpenCL device
    assert 0 <= rec["host_seconds"] <= rec["epoch_seconds"], rec
    if "reference" not in rec["device"].lower():  # the reference backend counts no commands
        assert rec["uploads_per_step"] >= 2, f"a step uploads its batch (x and y): {rec}"
        assert 10 <= rec["launches_per_step"] <= 500, f"kernel launches a step: {rec}"
        assert 0 < rec["enqueue_seconds"] <= rec["host_seconds"], f"enqueue time within the host's: {rec}"
for key in ("train_loss", "test_acc", "test_loss"):
    assert abs(a[1][key] - b[1][key]) <= 1e-6, f"resumed epoch 2 {key} {b[1][key]} != uninterrupted {a[1][key]}"
acc = float(re.search(r"test accuracy ([0-9.]+)", open(f"{work}/eval.out").read()).group(1))
assert abs(acc - a[1]["test_acc"]) < 1e-4, f"eval accuracy {acc} != training's {a[1]['test_acc']}"
print("log fields present; resumed epoch 2 equals the uninterrupted one; eval agrees:", acc)
PY

# bad input: a missing data folder and a corrupt checkpoint fail with messages naming the file
if "$clgrad" train --data "$work/nowhere" --epochs 1 > "$work/bad.out" 2>&1; then fail "missing data accepted"; fi
grep -q "nowhere" "$work/bad.out" || { cat "$work/bad.out"; fail "message does not name the missing path"; }
head -c 100 "$work/a.safetensors" > "$work/broken.safetensors"
if "$clgrad" train --resume "$work/broken.safetensors" > "$work/bad2.out" 2>&1; then fail "corrupt checkpoint accepted"; fi
grep -q "broken.safetensors" "$work/bad2.out" || { cat "$work/bad2.out"; fail "message does not name the checkpoint"; }
# --save naming a folder is refused before any training (it used to fail at the rename, an epoch later)
mkdir -p "$work/ckdir"
if "$clgrad" train --limit 1000 --epochs 1 --save "$work/ckdir" > "$work/bad3.out" 2>&1; then fail "--save FOLDER accepted"; fi
grep -q "is a folder" "$work/bad3.out" || { cat "$work/bad3.out"; fail "--save FOLDER: no clear message"; }
grep -q "samples/s" "$work/bad3.out" && { cat "$work/bad3.out"; fail "--save FOLDER: refused only after training"; }
# a NaN loss is written to the JSON log as null (valid JSON), not as nan
"$clgrad" train --limit 500 --epochs 1 --optimizer sgd --lr 1000 --log "$work/nan.jsonl" > "$work/nan.out" 2>&1 ||
	{ cat "$work/nan.out"; fail "a diverging run"; }
python3 -c 'import json,sys; l = [json.loads(x) for x in open(sys.argv[1])]; assert l[0]["train_loss"] is None, l' \
	"$work/nan.jsonl" || { cat "$work/nan.jsonl"; fail "a NaN loss in the JSON log is not null"; }
echo "PASS"
