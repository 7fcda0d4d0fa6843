#!/bin/bash
# The self-test's cached result is keyed by the library's build identity (clg_build_id, a hash of
# its sources): a second start of the same build reads it, a changed library runs the self-test
# again. CLGRAD_TEST_BUILD_ID (a CLGRAD_TEST_HOOKS build) stands in for the changed library.
# usage: test_selftest_build_id.sh <clgrad>. Exit 77 (skipped) without an OpenCL device.
clgrad=$1
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
unset CLGRAD_SELFTEST CLGRAD_TEST_BUILD_ID CLGRAD_KERNEL_DIR
export CLGRAD_CACHE_DIR=$dir CLGRAD_DEBUG=1
ran() { grep -q "self-test on '.*': [0-9]* cases, " "$1"; }
cached() { grep -q "self-test on '.*': result from " "$1"; }

"$clgrad" smoke >/dev/null 2>"$dir/1" || { cat "$dir/1"; echo "FAIL: clgrad smoke"; exit 1; }
if ! ran "$dir/1"; then
	grep -q "self-test" "$dir/1" || { echo "no OpenCL device (no self-test): skipped"; exit 77; }
	cat "$dir/1"; echo "FAIL: the first start ran no self-test"; exit 1
fi
"$clgrad" smoke >/dev/null 2>"$dir/2"
cached "$dir/2" && ! ran "$dir/2" || { cat "$dir/2"; echo "FAIL: a second start of the same build re-ran the self-test"; exit 1; }
CLGRAD_TEST_BUILD_ID=another-build "$clgrad" smoke >/dev/null 2>"$dir/3"
ran "$dir/3" && ! cached "$dir/3" || { cat "$dir/3"; echo "FAIL: a changed library read the old self-test result"; exit 1; }
echo "ok: cached for the same build, re-run for another"
