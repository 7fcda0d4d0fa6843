#!/usr/bin/env bash
# Data-parallel `clgrad train` end to end on 2000 Fashion-MNIST samples, two epochs of the MLP:
# - two devices in one process (--devices) give the single-device run's losses within 1e-4
#   relative (1e-3 when one is the reference, which computes in double), with identical replicas
#   every epoch; int8 compression sends about 4x fewer bytes;
# - two MPI ranks on loopback (when Open MPI is present) give the same with the gradients gathered
#   in buckets, also int8-compressed, and a checkpoint they wrote resumes in a single process;
# - a rank killed mid-run ends the run with an error, well before the watchdog;
# - bad device lists are refused with one clear line.
# usage: test_parallel_cli.sh CLGRAD_BINARY
set -u
clgrad=$1
data=/usr/share/datasets/fashion-mnist
[ -e "$data/train-images-idx3-ubyte.gz" ] || { echo "Fashion-MNIST not installed: skipped"; exit 77; }
. "$(dirname "$0")/test_common.sh"
t_workdir
# the first two OpenCL devices, or the reference and the only one
ndev=$("$clgrad" devices --json | python3 -c 'import json,sys; print(sum(1 for d in json.load(sys.stdin)["devices"] if d["type"] in ("cpu","gpu","accelerator")))')
[ "$ndev" -ge 1 ] || { echo "no OpenCL device present: skipped"; exit 77; }
if [ "$ndev" -ge 2 ]; then d0=1 d1=2; else d0=0 d1=1; fi
common=(--model mlp --limit 2000 --batch 100 --seed 5 --epochs 2 --lr 0.002)

"$clgrad" train "${common[@]}" --device $d1 --log "$work/one.jsonl" > "$work/one.out" 2>&1 || { cat "$work/one.out"; fail "single device"; }
"$clgrad" train "${common[@]}" --devices $d0,$d1 --shares equal --log "$work/two.jsonl" > "$work/two.out" 2>&1 ||
	{ cat "$work/two.out"; fail "two devices"; }
grep -q "data parallel: device $d0 50 rows" "$work/two.out" || { cat "$work/two.out"; fail "no shares line"; }
"$clgrad" train "${common[@]}" --devices $d0,$d1 --log "$work/bal.jsonl" > "$work/bal.out" 2>&1 ||
	{ cat "$work/bal.out"; fail "two devices, balanced"; }
"$clgrad" train "${common[@]}" --devices $d0,$d1 --shares equal --compress int8 --log "$work/q8.jsonl" > "$work/q8.out" 2>&1 ||
	{ cat "$work/q8.out"; fail "two devices, int8"; }

# bad device lists: one line each naming the problem, exit 1
"$clgrad" train "${common[@]}" --devices $d0,$d0 > "$work/bad1.out" 2>&1 && fail "a device named twice was accepted"
grep -q "named twice" "$work/bad1.out" || { cat "$work/bad1.out"; fail "no 'named twice' message"; }
"$clgrad" train "${common[@]}" --devices $d0,nosuchdevice > "$work/bad2.out" 2>&1 && fail "a missing device was accepted"
grep -q "nosuchdevice" "$work/bad2.out" || { cat "$work/bad2.out"; fail "the missing device is not named"; }
"$clgrad" train "${common[@]}" --devices $d0, > "$work/bad3.out" 2>&1 && fail "an empty list entry was accepted"

mpi=0
if command -v mpirun > /dev/null && "$clgrad" train --mpi --help > /dev/null 2>&1; then
	mpi=1
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo
	run_mpi() { timeout 300 mpirun -np 2 --oversubscribe "$clgrad" train --mpi --devices $d0,$d1 "$@"; }
	# 64 KiB buckets: each of the MLP's tensors is gathered on its own, as soon as backward made it
	CLGRAD_DP_BUCKET_KB=64 run_mpi "${common[@]}" --log "$work/mpi.jsonl" --save "$work/mpi.safetensors" > "$work/mpi.out" 2>&1 ||
		{ cat "$work/mpi.out"; fail "two MPI ranks"; }
	run_mpi "${common[@]}" --compress int8 --log "$work/mpi_q8.jsonl" > "$work/mpi_q8.out" 2>&1 ||
		{ cat "$work/mpi_q8.out"; fail "two MPI ranks, int8"; }
	# stopped after one epoch by 2 ranks, resumed by one process on one device
	run_mpi "${common[@]}" --stop-after 1 --save "$work/half.safetensors" > "$work/half.out" 2>&1 ||
		{ cat "$work/half.out"; fail "two MPI ranks, first epoch"; }
	"$clgrad" train --limit 2000 --epochs 2 --device $d1 --resume "$work/half.safetensors" --log "$work/resumed.jsonl" \
		> "$work/resumed.out" 2>&1 || { cat "$work/resumed.out"; fail "resume in one process"; }
	# a rank killed at its 5th exchange: the run ends with an error long before the 60 s watchdog
	start=$(date +%s)
	CLGRAD_TEST_MPI_DIE=1:5 run_mpi "${common[@]}" --mpi-timeout 60 > "$work/die.out" 2>&1 && fail "a dead rank went unnoticed"
	took=$(( $(date +%s) - start ))
	[ "$took" -lt 55 ] || fail "the run took ${took} s to notice a dead rank"
	grep -qi "signal\|killed\|no answer\|aborted" "$work/die.out" || { cat "$work/die.out"; fail "no clear message for the dead rank"; }
	echo "dead rank noticed after ${took} s: $(grep -i -m1 'signal\|killed\|no answer' "$work/die.out")"
else
	echo "mpirun or an MPI build missing: the MPI part is skipped"
fi

# the reference computes in double: beside a float32 device its trajectory drifts a little more
tol=1e-4
[ "$d0" = 0 ] && tol=1e-3
python3 - "$work" "$mpi" "$tol" <<'PY' || exit 1
import json, sys
work, mpi, tol = sys.argv[1], sys.argv[2] == "1", float(sys.argv[3])
def log(name): return [json.loads(l) for l in open(f"{work}/{name}.jsonl")]
one, two, bal, q8 = log("one"), log("two"), log("bal"), log("q8")
def close(a, b, key):
    for e, (x, y) in enumerate(zip(a, b)):
        if abs(x[key] - y[key]) > tol * abs(x[key]):
            sys.exit(f"FAIL: epoch {e+1} {key}: {x[key]} vs single device {y[key]}")
for run, name in ((two, "two devices"), (bal, "balanced shares")) + (((log("mpi"), "two MPI ranks"),) if mpi else ()):
    assert len(run) == 2, name
    close(run, one, "train_loss"); close(run, one, "test_loss")
    for e in run:
        if not e["replicas_identical"]:
            sys.exit(f"FAIL: {name}: replicas differ at epoch {e['epoch']}")
    print(f"{name}: train loss {[e['train_loss'] for e in run]} vs one device {[e['train_loss'] for e in one]}; shares {run[-1]['shares']}")
assert sum(bal[-1]["shares"]) == 100 and min(bal[-1]["shares"]) >= 1, bal[-1]["shares"]
ratio = two[-1]["exchange_bytes_per_step"] / q8[-1]["exchange_bytes_per_step"]
if not 3.5 < ratio < 4.1:
    sys.exit(f"FAIL: int8 sends {ratio:.2f}x fewer bytes, expected about 4")
if abs(q8[-1]["test_acc"] - one[-1]["test_acc"]) > 0.02:
    sys.exit(f"FAIL: int8 accuracy {q8[-1]['test_acc']} vs {one[-1]['test_acc']}")
print(f"int8: {ratio:.2f}x fewer bytes, accuracy {q8[-1]['test_acc']:.4f} vs {one[-1]['test_acc']:.4f}")
if mpi:
    m, mq = log("mpi"), log("mpi_q8")
    if m[-1]["exchange_buckets"] < 3:
        sys.exit(f"FAIL: MPI with 64 KiB buckets gathered in {m[-1]['exchange_buckets']} parts")
    # int8 over two ranks = int8 over two devices in one process (the same shares and residuals)
    close(mq, q8, "train_loss"); close(mq, q8, "test_loss")
    if mq[-1]["exchange_bytes_per_step"] != q8[-1]["exchange_bytes_per_step"]:
        sys.exit(f"FAIL: MPI int8 sends {mq[-1]['exchange_bytes_per_step']} bytes a step, in-process {q8[-1]['exchange_bytes_per_step']}")
    print(f"MPI: {m[-1]['exchange_buckets']} buckets a step; int8 over MPI as in one process: test loss {mq[-1]['test_loss']:.6f}")
    res = log("resumed")
    assert len(res) == 1 and res[0]["epoch"] == 2, res
    close(res, one[1:], "train_loss"); close(res, one[1:], "test_loss")
    print("resumed in one process after 2 MPI ranks: epoch 2 as the single-device run")
print("test_parallel_cli: passed")
PY
