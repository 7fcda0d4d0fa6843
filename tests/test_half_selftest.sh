#!/usr/bin/env bash
# The float16 self-test (backend/opencl/cl_selftest.c, half_test): on a device that computes
# float16 in half (cl_khr_fp16: Intel's CPU runtime here), an error planted in the native half path
# (CLGRAD_TEST_HALF_WRONG=1, a test-hooks build) must be found at open, native half turned off with
# a note on stderr and in the cached result, and the float16 ops then give right answers (computed
# in float32). The control: with the self-test off the planted error reaches the op suite, which
# must fail. Skips (77) where no device has cl_khr_fp16.
# usage: test_half_selftest.sh CLGRAD TEST_OPS
set -u
clgrad=$1 test_ops=$2
. "$(dirname "$0")/test_common.sh"
t_workdir

export CLGRAD_CACHE_DIR=$work/cache
"$clgrad" devices --json > "$work/devices.json" || fail "clgrad devices --json"
dev=$(python3 - "$work/devices.json" <<'PY'
import json, sys
for d in json.load(open(sys.argv[1]))["devices"]:
    if d.get("type") != "ref" and d.get("fp16_path") == "native":
        print(d["index"]); break
PY
)
if [ -z "$dev" ]; then
	echo "no device computes float16 in half (cl_khr_fp16): skipped"
	exit 77
fi

# the control: no self-test, the planted error reaches the float16 results
CLGRAD_SELFTEST=0 CLGRAD_TEST_HALF_WRONG=1 "$test_ops" --op add > "$work/control.out" 2>&1 &&
	{ tail -3 "$work/control.out"; fail "the planted float16 error went unseen by the op suite (is this a CLGRAD_TEST_HOOKS build?)"; }
grep -q "failed" "$work/control.out" || fail "control run: $(tail -1 "$work/control.out")"

# the self-test finds it: native half off, said on stderr, results right
CLGRAD_TEST_HALF_WRONG=1 "$test_ops" --op add > "$work/run1.out" 2>&1 || { tail -5 "$work/run1.out"; fail "float16 add with native half off"; }
grep -q "native float16 is off: self-test: float16 .* wrong in half" "$work/run1.out" || fail "no note on stderr"
grep -rq "^half off self-test: float16" "$work/cache" || fail "the cached self-test result does not hold it"
# the cached result turns it off again (no second self-test), still said
CLGRAD_TEST_HALF_WRONG=1 "$clgrad" smoke --device "$dev" > "$work/run2.out" 2>&1 || { cat "$work/run2.out"; fail "smoke"; }
grep -q "native float16 is off" "$work/run2.out" || fail "the cached result did not turn native half off"
# the listing, which opens no device, says so too (the verdict on record, cl_half_record.c)
# fp16_path PATH WHY: device dev's fp16_path and whether fp16_off_why is set, from devices --json
fp16_state() { "$clgrad" devices --json | python3 -c 'import json,sys; d=json.load(sys.stdin)["devices"][int(sys.argv[1])]; print(d["fp16_path"], "why" if d["fp16_off_why"] else "-")' "$dev"; }
[ "$(fp16_state)" = "storage only why" ] || fail "devices --json after the self-test turned half off: $(fp16_state)"
"$clgrad" devices | grep -q "fp16: storage only, native half off by the last self-test: self-test: float16" ||
	{ "$clgrad" devices; fail "the devices table does not say native half is off"; }
# without the planted error: native half stays on, nothing said, and the record goes (a new
# self-test: its cached results removed, the half record kept for it to clear)
rm -f "$CLGRAD_CACHE_DIR"/selftest-*.txt
"$clgrad" smoke --device "$dev" > "$work/run3.out" 2>&1 || { cat "$work/run3.out"; fail "smoke without the planted error"; }
! grep -q "native float16 is off" "$work/run3.out" || fail "native half turned off without a planted error: $(grep float16 "$work/run3.out")"
[ "$(fp16_state)" = "native -" ] || fail "devices --json after a passing self-test: $(fp16_state)"
echo "PASS: planted float16 error found by the self-test on device $dev; native half off, results right"
