#!/usr/bin/env bash
# Command 2 of the README (and what CI runs through .ci/run): install what is missing, build with
# warnings as errors in build-ci/, run every test. Exits non-zero if any step or test fails.
#   ./scripts/test.sh              (env: CLGRAD_BUILD_DIR to build elsewhere than build-ci/,
#                                   CTEST_ARGS for extra ctest arguments, e.g. "-R test_ops")
# The tests that run on every device include Intel's OpenCL CPU runtime when setup.sh could fetch it
# (tests/intel.cmake); CLGRAD_SKIP_INTEL=1 leaves it out. After the main ctest, the sanitizer stage
# (scripts/sanitize.sh: a clang ASan+UBSan build, a lean set of tests under it on the reference
# backend and PoCL, every fuzz harness for 30 s); CLGRAD_SKIP_SANITIZE=1 leaves it out. Last, the
# Debian 13 stage (scripts/test_trixie.sh: in a cached trixie root, a build and the op, gradient,
# training and compare tests on PoCL 6 and on Mesa's rusticl); CLGRAD_SKIP_TRIXIE=1 leaves it out,
# and it is skipped, not failed, when it is not root or the root cannot be made for want of network.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CLGRAD_BUILD_DIR:-build-ci}
jobs=$(nproc 2>/dev/null || echo 2)

step() { printf '\n==== %s\n' "$*"; }

step "[1/6] setup: Debian packages (scripts/setup.sh)"
bash scripts/setup.sh
step "[2/6] configure: $build (CLGRAD_WERROR=ON)"
cmake -S . -B "$build" -DCLGRAD_WERROR=ON
step "[3/6] build: $build with $jobs jobs"
cmake --build "$build" -j "$jobs"
# One test at a time: two processes compiling the same kernel at once can make PoCL abort
# ("Final linking of kernel ... failed", seen with POCL_KERNEL_CACHE=0 and ctest -j2).
step "[4/6] ctest (one test at a time)"
rc=0
# shellcheck disable=SC2086
(cd "$build" && ctest --output-on-failure --no-tests=error ${CTEST_ARGS:-}) || rc=$?
if [ "$rc" -ne 0 ]; then
	step "test.sh: FAILED (ctest exit $rc); see the output of the failing tests above"
	exit "$rc"
fi
if [ "${CLGRAD_SKIP_SANITIZE:-0}" = 1 ]; then
	step "[5/6] sanitizers: skipped (CLGRAD_SKIP_SANITIZE=1)"
else
	step "[5/6] sanitizers: ASan+UBSan build, lean tests, fuzzing (scripts/sanitize.sh)"
	start=$(date +%s)
	CLGRAD_ASAN_BUILD_DIR=${CLGRAD_ASAN_BUILD_DIR:-$build-asan} bash scripts/sanitize.sh || rc=$?
	echo "sanitizer stage: $(($(date +%s) - start)) s"
	if [ "$rc" -ne 0 ]; then
		step "test.sh: FAILED (sanitizer stage exit $rc); see the report above"
		exit "$rc"
	fi
fi
if [ "${CLGRAD_SKIP_TRIXIE:-0}" = 1 ]; then
	step "[6/6] Debian 13 (PoCL 6, rusticl): skipped (CLGRAD_SKIP_TRIXIE=1)"
else
	step "[6/6] Debian 13 (PoCL 6, rusticl): build and tests in a trixie root (scripts/test_trixie.sh)"
	start=$(date +%s)
	bash scripts/test_trixie.sh || rc=$?
	echo "Debian 13 stage: $(($(date +%s) - start)) s"
	if [ "$rc" = 77 ]; then
		step "[6/6] Debian 13 stage: skipped (the reason is above)"
		rc=0
	elif [ "$rc" -ne 0 ]; then
		step "test.sh: FAILED (Debian 13 stage exit $rc); see the output above"
		exit "$rc"
	fi
fi
step "test.sh: all tests passed"
