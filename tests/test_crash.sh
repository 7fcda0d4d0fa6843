#!/usr/bin/env bash
# A driver crash cannot take clgrad down blind, nor be repeated (issue 18, item 5;
# backend/opencl/cl_crash.c, cli/crash_guard.c). CLGRAD_TEST_CRASH=TEXT (test builds) faults with a
# real SIGSEGV at the first breadcrumb containing TEXT, as a crashing driver would:
#   1. the run dies by SIGSEGV, stderr names the step, no core is dumped (ulimit -c unlimited here);
#   2. the next `clgrad devices` shows the device crashed with that step, `train`, `smoke`,
#      `bench` and `eval` refuse it with one line and exit status 1;
#   3. CLGRAD_FORCE_DEVICE=1 retries it (printing the self-test's progress), and a complete open
#      clears the record;
#   4. a crash in a program build outside the self-test, and CLGRAD_SYNC=1 blaming the op, the same;
#   5. a marker left by a killed process (no crash line) marks nothing and is removed;
#   6. `clgrad compare` keeps a crashed device's capabilities.
# usage: test_crash.sh CLGRAD_BINARY
set -u
clgrad=$1
. "$(dirname "$0")/test_common.sh"
first_opencl_device "$clgrad"
t_workdir
export CLGRAD_CACHE_DIR=$work/cache
unset CLGRAD_FORCE_DEVICE CLGRAD_TEST_CRASH CLGRAD_SYNC CLGRAD_SELFTEST
# in a sanitizer build the crash must reach clgrad's handler and then the default action, not ASan's report
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigill=0:handle_sigfpe=0"
ulimit -c unlimited 2>/dev/null

# runs "$@" in $work, prints "signal core" of its end (0 0 for a normal exit)
crash_run() {
	(cd "$work" && python3 -c 'import os,subprocess,sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=open("err", "w"))
_, st = os.waitpid(p.pid, 0)
print(os.WTERMSIG(st) if os.WIFSIGNALED(st) else 0, 1 if os.WCOREDUMP(st) else 0)' "$@")
}
expect_crash() { # what, expected breadcrumb, command...
	local what=$1 crumb=$2
	shift 2
	read -r sig core < <(crash_run "$@")
	[ "$sig" = 11 ] || { cat "$work/err"; fail "$what: ended by signal '$sig', not SIGSEGV"; }
	[ "$core" = 0 ] || fail "$what: a core was dumped"
	ls "$work" | grep -q '^core' && fail "$what: a core file was written"
	grep -q "^clgrad: fatal signal SIGSEGV while $crumb" "$work/err" || { cat "$work/err"; fail "$what: no breadcrumb '$crumb'"; }
	echo "ok: $what: $(grep 'fatal signal' "$work/err")"
}
expect_refused() { # what, expected reason
	local out
	"$clgrad" devices > "$work/devices.txt" || fail "devices"
	grep -q "CRASHED clgrad in an earlier run: SIGSEGV while $2" "$work/devices.txt" ||
		{ cat "$work/devices.txt"; fail "$1: \`clgrad devices\` does not show the crash"; }
	"$clgrad" devices --json | python3 -c 'import json,re,sys
d=[x for x in json.load(sys.stdin)["devices"] if x["index"] == int(sys.argv[1])][0]
sys.exit(0 if d["crashed"] and re.match("SIGSEGV while " + sys.argv[2], d["crashed"]) else 1)' "$dev" "$2" ||
		fail "$1: devices --json has no 'crashed' reason"
	cmds=("train --model mlp --epochs 1 --device $dev" "smoke --device $dev" "bench gemm --m 8 --n 8 --k 8 --device $dev")
	[ -e "$work/ref.safetensors" ] && cmds+=("eval --model mlp --checkpoint $work/ref.safetensors --data $data --device $dev")
	for cmd in "${cmds[@]}"; do
		# shellcheck disable=SC2086
		"$clgrad" $cmd > "$work/out" 2> "$work/err"
		rc=$?
		[ $rc -eq 1 ] || { cat "$work/err"; fail "$1: clgrad $cmd: exit status $rc, not 1"; }
		[ "$(wc -l < "$work/err")" -eq 1 ] || { cat "$work/err"; fail "$1: clgrad $cmd: not one line"; }
		grep -q "crashed clgrad in an earlier run (SIGSEGV while $2.*CLGRAD_FORCE_DEVICE=1" "$work/err" ||
			{ cat "$work/err"; fail "$1: clgrad $cmd: refusal does not say why"; }
	done
	echo "ok: $1: refused: $(cat "$work/err")"
}

# a checkpoint for `clgrad eval`, from the reference device (where the data is installed)
data=/usr/share/datasets/fashion-mnist
if [ -e "$data/train-images-idx3-ubyte.gz" ]; then
	"$clgrad" train --model mlp --limit 100 --batch 50 --epochs 1 --device 0 --data "$data" \
		--save "$work/ref.safetensors" > /dev/null 2>&1 || fail "training on the reference device"
fi

# 1-3: a crash in the first-use self-test
expect_crash "self-test crash" "self-test im2col case 1 on '" \
	env CLGRAD_TEST_CRASH="self-test im2col" "$clgrad" smoke --device "$dev"
expect_refused "self-test crash" "self-test im2col case 1 on '.*during the first-use self-test"
key=$(ls "$CLGRAD_CACHE_DIR" | sed -n 's/^crashed-\([0-9a-f]*\)\.txt$/\1/p')
[ -n "$key" ] || fail "no crash record in $(ls "$CLGRAD_CACHE_DIR")"
CLGRAD_FORCE_DEVICE=1 CLGRAD_PROGRESS=1 "$clgrad" smoke --device "$dev" > "$work/out" 2> "$work/err" ||
	{ cat "$work/out" "$work/err"; fail "CLGRAD_FORCE_DEVICE=1 did not retry the device"; }
grep -q "first-use self-test of device" "$work/err" && grep -q "self-test of .* done in" "$work/err" ||
	{ cat "$work/err"; fail "no self-test progress with CLGRAD_PROGRESS=1"; }
"$clgrad" devices | grep -q CRASHED && fail "a complete forced open left the crash record"
"$clgrad" smoke --device "$dev" > /dev/null 2>&1 || fail "the device is not usable again after the forced open"
echo "ok: CLGRAD_FORCE_DEVICE=1 retried the device, its self-test printed progress, the record is gone"

# 4: a crash in a kernel program build after the self-test, and an op blamed under CLGRAD_SYNC=1
rm -f "$CLGRAD_CACHE_DIR"/*.bin
expect_crash "build crash" "building elementwise.cl with '" \
	env CLGRAD_TEST_CRASH="building elementwise.cl" "$clgrad" smoke --device "$dev"
expect_refused "build crash" "building elementwise.cl with '.*during a kernel program build"
CLGRAD_FORCE_DEVICE=1 "$clgrad" smoke --device "$dev" > /dev/null 2>&1 || fail "forced open after the build crash"
name=$("$clgrad" devices --json | python3 -c 'import json,sys
print([x["name"] for x in json.load(sys.stdin)["devices"] if x["index"] == int(sys.argv[1])][0])' "$dev")
expect_crash "CLGRAD_SYNC=1" "finishing the queue after gemm (CLGRAD_SYNC=1) on '$name'" \
	env CLGRAD_SYNC=1 CLGRAD_TEST_CRASH="finishing the queue after gemm (CLGRAD_SYNC=1) on '$name'" \
	"$clgrad" smoke --device "$dev"

# 5: a marker whose process was killed (no crash line) marks nothing
sh -c 'exit 0' & dead=$!
wait $dead
printf 'clgrad-inprogress 1\npid %s\nduring the first-use self-test\n' "$dead" > "$CLGRAD_CACHE_DIR/inprogress-$key-$dead.txt"
"$clgrad" devices | grep -q CRASHED && fail "a killed process's marker marked the device crashed"
[ -e "$CLGRAD_CACHE_DIR/inprogress-$key-$dead.txt" ] && fail "a dead process's marker was not removed"
echo "ok: a marker without a crash line (process killed) is removed and marks nothing"

# 6: compare keeps the capabilities of a device that crashes while opening
rm -f "$CLGRAD_CACHE_DIR"/selftest-*
CLGRAD_TEST_CRASH="self-test " "$clgrad" compare --quick --devices "$dev" --suite ops --out "$work/cmp" > /dev/null 2>&1
python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
s=json.dumps(r)
sys.exit(0 if "crashed" in s and "compute_units" in s and "max_alloc" in s else 1)' "$work/cmp/report.json" ||
	fail "compare: the crashed device's capabilities are not in report.json"
echo "ok: compare: the crashed device's report keeps its capabilities"
echo "PASS"
