#!/usr/bin/env bash
# The first `clgrad train` on an empty cache folder, its output in a file (not a terminal):
#   - the first step comes before the whole self-test ran: the cached result lists the ops the MLP
#     used (gemm among them) and not those it never used (im2col, attention), which a test of
#     everything at open would have listed;
#   - the log holds the progress lines a terminal shows (CLGRAD_PROGRESS=1: one per program built);
#   - a second run tests nothing and builds nothing (the cached result and binaries serve it).
# usage: test_first_use.sh CLGRAD
set -u
clgrad=$1
. "$(dirname "$0")/test_common.sh"
need_fashion_mnist
first_opencl_device "$clgrad"
t_workdir
unset CLGRAD_SELFTEST CLGRAD_KERNEL_DIR
export CLGRAD_CACHE_DIR=$work/cache CLGRAD_DEBUG=1 CLGRAD_PROGRESS=1
run=(train --model mlp --limit 256 --batch 128 --epochs 1 --device "$dev" --data "$data")

"$clgrad" "${run[@]}" > "$work/1" 2>&1 || { cat "$work/1"; fail "first run"; }
grep -q "^time to first step" "$work/1" || { cat "$work/1"; fail "no time to first step"; }
grep -q "^clgrad: compiling kernels for '.*': [a-z_]*\.cl (" "$work/1" ||
	{ cat "$work/1"; fail "no build progress lines in the log"; }
result=$(ls "$CLGRAD_CACHE_DIR"/selftest-*.txt 2>/dev/null | head -1)
[ -n "$result" ] || { cat "$work/1"; fail "no cached self-test result"; }
grep -qx "tested gemm" "$result" && grep -qx "tested adam_step" "$result" ||
	{ cat "$result"; fail "the ops the first step used are not in the cached result"; }
! grep -qx "tested im2col" "$result" && ! grep -qx "tested attention_fwd" "$result" ||
	{ cat "$result"; fail "ops the MLP never used were tested: the whole self-test ran before the first step"; }
echo "ok: first run: $(grep -c '^tested ' "$result") ops tested at their first use (of $(grep -c ' cases, ' "$work/1") self-test runs); $(grep -m1 '^time to first step' "$work/1" | cut -c1-80)"

"$clgrad" "${run[@]}" > "$work/2" 2>&1 || { cat "$work/2"; fail "second run"; }
grep -q "self-test on '.*': result from " "$work/2" || { cat "$work/2"; fail "the second run did not read the cached result"; }
! grep -q "self-test on '.*': [0-9]* cases, " "$work/2" || { grep "cases, " "$work/2"; fail "the second run ran self-test cases"; }
! grep -q "compiling kernels for" "$work/2" || { grep "compiling" "$work/2"; fail "the second run built programs"; }
echo "ok: second run: no self-test case, no build"
