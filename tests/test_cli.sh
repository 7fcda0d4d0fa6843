#!/bin/sh
# The clgrad command-line tool: `devices` (table) and `smoke` succeed, and a nonsense device spec
# makes `smoke` fail with a message on stderr instead of crashing or succeeding.
# usage: test_cli.sh <path to clgrad>
clgrad=$1
fail=0
unset CLGRAD_DEVICE CLGRAD_KERNEL_DIR
out=$(mktemp) && err=$(mktemp) || exit 1
trap 'rm -f "$out" "$err"' EXIT

check() { # description, condition result
	if [ "$2" -ne 0 ]; then
		echo "FAILED: $1" >&2
		echo "--- stdout:" >&2; cat "$out" >&2
		echo "--- stderr:" >&2; cat "$err" >&2
		fail=1
	else
		echo "ok: $1"
	fi
}

"$clgrad" devices >"$out" 2>"$err"; rc=$?
check "clgrad devices exits 0 (got $rc)" "$rc"
grep -q "reference" "$out"; check "clgrad devices lists the reference backend" $?
grep -q "default device" "$out"; check "clgrad devices marks the default device" $?

"$clgrad" smoke >"$out" 2>"$err"; rc=$?
check "clgrad smoke exits 0 (got $rc)" "$rc"
grep -q "OK" "$out"; check "clgrad smoke reports OK" $?

CLGRAD_DEVICE=nonsense "$clgrad" smoke >"$out" 2>"$err"; rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ]; check "CLGRAD_DEVICE=nonsense clgrad smoke fails cleanly (got $rc)" $?
grep -q "nonsense" "$err"; check "the failure message on stderr names the spec" $?

"$clgrad" smoke --device no-such-device >"$out" 2>"$err"; rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ]; check "clgrad smoke --device no-such-device fails cleanly (got $rc)" $?
grep -q "no-such-device" "$err"; check "the failure message names the --device spec" $?

"$clgrad" no-such-command >"$out" 2>"$err"; rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ]; check "an unknown command fails (got $rc)" $?

exit $fail
