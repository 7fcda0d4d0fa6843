#!/usr/bin/env bash
# `clgrad sweep` end to end on 256 Fashion-MNIST samples (MLP, 2 epochs): a grid of three runs on
# one device where the second run crashes (SIGSEGV) and the third hangs past --timeout; both are
# recorded and the first finishes; a second invocation keeps the finished runs (none started
# again), --retry-failed runs the failed ones; a sweep interrupted by SIGINT resumes without
# re-running its finished run; a different grid in the same folder is refused; bad options get one
# line naming the option. Reports: results.json (checked), results.md, results.html (SVG curves).
# usage: test_sweep.sh CLGRAD_BINARY
set -u
clgrad=$1
data=/usr/share/datasets/fashion-mnist
[ -e "$data/train-images-idx3-ubyte.gz" ] || { echo "Fashion-MNIST not installed: skipped"; exit 77; }
. "$(dirname "$0")/test_common.sh"
t_workdir
ndev=$("$clgrad" devices --json | python3 -c 'import json,sys; print(sum(1 for d in json.load(sys.stdin)["devices"] if d["type"] in ("cpu","gpu","accelerator")))')
[ "$ndev" -ge 1 ] || { echo "no OpenCL device present: skipped"; exit 77; }
grid=(--model mlp --lr 1e-3,2e-3,3e-3 --epochs 2 --limit 256 --batch 64 --devices 1)

# bad options: exit 2 and one line that names what is wrong
check_bad() {
	local want=$1; shift
	"$clgrad" sweep "$@" > "$work/bad.out" 2>&1; rc=$?
	[ $rc -eq 2 ] || { cat "$work/bad.out"; fail "sweep $* exited $rc, not 2"; }
	[ "$(wc -l < "$work/bad.out")" -eq 1 ] || { cat "$work/bad.out"; fail "sweep $*: more than one line"; }
	grep -q -- "$want" "$work/bad.out" || { cat "$work/bad.out"; fail "sweep $*: '$want' not named"; }
}
check_bad "--out DIR is required" --model mlp,cnn
check_bad "--lr '1e-3,,2e-3'" --out "$work/x" --lr 1e-3,,2e-3
check_bad "--nosuch" --out "$work/x" --nosuch 1
check_bad "--save is set by the sweep" --out "$work/x" --save a.safetensors
check_bad "--timeout=0" --out "$work/x" --timeout 0
check_bad "named twice" --out "$work/x" --devices 1,1
check_bad "'1e-3' listed twice" --out "$work/x" --lr 1e-3,1e-3
"$clgrad" sweep --out "$work/x" --model mlp,cnn --lr=1e-3,3e-3 --dry-run > "$work/dry.out" 2>&1 || fail "dry run"
grep -q "r003  model=cnn lr=3e-3" "$work/dry.out" || { cat "$work/dry.out"; fail "dry run does not list the grid"; }
[ -e "$work/x" ] && fail "a dry run created its folder"

# 1. a crash and a hang do not stop the sweep
sw=$work/sw
CLGRAD_SWEEP_RUN_ENV="1:CLGRAD_TEST_TRAIN_FAULT=crash:2;2:CLGRAD_TEST_TRAIN_FAULT=hang:2" \
	"$clgrad" sweep --out "$sw" "${grid[@]}" --timeout 30 > "$work/s1.out" 2>&1; rc=$?
cat "$work/s1.out"
[ $rc -eq 3 ] || fail "a sweep with a crashed run exited $rc, not 3"
grep -q "r001 lr=2e-3 on device 1: crashed" "$work/s1.out" || fail "the crash is not reported"
grep -q "r002 lr=3e-3 on device 1: timeout" "$work/s1.out" || fail "the hang is not reported as a timeout"
python3 - "$sw/results.json" <<'PY' || fail "results.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema"] == "clgrad-sweep/1" and r["n_runs"] == 3, r
st = [x["status"] for x in r["runs"]]
assert st == ["ok", "crashed", "timeout"], st
ok = r["runs"][0]
assert len(ok["epochs"]) == 2 and 0 < ok["epochs"][-1]["test_acc"] <= 1, ok
assert r["runs"][1]["detail"] == "SIGSEGV" and r["best"] == "r000", r
PY
grep -q "<polyline" "$sw/results.html" || fail "no loss curve in results.html"
grep -q "| r001 | lr=2e-3 | crashed |" "$sw/results.md" || fail "results.md"

# 2. run again: nothing finished is started again
"$clgrad" sweep --out "$sw" "${grid[@]}" --timeout 30 > "$work/s2.out" 2>&1; rc=$?
[ $rc -eq 3 ] || { cat "$work/s2.out"; fail "the resumed sweep exited $rc, not 3"; }
grep -q "3 run(s) finished earlier are kept" "$work/s2.out" || { cat "$work/s2.out"; fail "finished runs not kept"; }
grep -q "started" "$work/s2.out" && { cat "$work/s2.out"; fail "a finished run was started again"; }
# ... --retry-failed runs the two failed ones, now without the faults
"$clgrad" sweep --out "$sw" "${grid[@]}" --retry-failed > "$work/s3.out" 2>&1; rc=$?
[ $rc -eq 0 ] || { cat "$work/s3.out"; fail "--retry-failed exited $rc"; }
[ "$(grep -c started "$work/s3.out")" -eq 2 ] || { cat "$work/s3.out"; fail "--retry-failed did not run exactly the 2 failed runs"; }
# ... a different grid in the same folder is refused
"$clgrad" sweep --out "$sw" --model mlp --lr 1e-3,5e-3 --epochs 2 --limit 256 > "$work/s4.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "holds a different sweep" "$work/s4.out" || { cat "$work/s4.out"; fail "a different grid was not refused"; }

# 3. interrupted (SIGINT while the second run hangs), then resumed: the first run is not run again
sw2=$work/sw2
CLGRAD_SWEEP_RUN_ENV="1:CLGRAD_TEST_TRAIN_FAULT=hang:1" "$clgrad" sweep --out "$sw2" "${grid[@]}" > "$work/i1.out" 2>&1 &
pid=$!
for _ in $(seq 600); do grep -q "r001 lr=2e-3: started" "$work/i1.out" && break; sleep 0.2; done
sleep 1
kill -INT $pid
wait $pid; rc=$?
[ $rc -eq 130 ] || { cat "$work/i1.out"; fail "an interrupted sweep exited $rc, not 130"; }
[ -e "$sw2/runs/r000/result.json" ] && [ ! -e "$sw2/runs/r001/result.json" ] || fail "interrupted: wrong results on disk"
pgrep -f "$sw2/runs/r001" > /dev/null && fail "the interrupted run's process is still alive"
"$clgrad" sweep --out "$sw2" "${grid[@]}" > "$work/i2.out" 2>&1; rc=$?
[ $rc -eq 0 ] || { cat "$work/i2.out"; fail "the resumed sweep exited $rc"; }
grep -q "r000 lr=1e-3: started" "$work/i2.out" && fail "the finished run was run again"
grep -q "1 run(s) finished earlier are kept" "$work/i2.out" || { cat "$work/i2.out"; fail "no kept run"; }
echo "test_sweep: all checks passed"
