#!/usr/bin/env bash
# Command 2 of the README (and what CI runs through .ci/run): install what is missing, build with
# warnings as errors in build-ci/, run every test. Exits non-zero if any step or test fails.
#   ./scripts/test.sh              (env: CLGRAD_BUILD_DIR to build elsewhere than build-ci/,
#                                   CTEST_ARGS for extra ctest arguments, e.g. "-R test_ops")
# The tests that run on every device include Intel's OpenCL CPU runtime when setup.sh could fetch it
# (tests/intel.cmake); CLGRAD_SKIP_INTEL=1 leaves it out. After the main ctest, the sanitizer stage
# (scripts/sanitize.sh: a clang ASan+UBSan build, a lean set of tests under it on the reference
# backend and PoCL, every fuzz harness for 30 s); CLGRAD_SKIP_SANITIZE=1 leaves it out.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CLGRAD_BUILD_DIR:-build-ci}
jobs=$(nproc 2>/dev/null || echo 2)

step() { printf '\n==== %s\n' "$*"; }

step "[1/6] setup: Debian packages (scripts/setup.sh), the Python package (scripts/setup_python.sh)"
bash scripts/setup.sh
bash scripts/setup_python.sh
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
# The Python package's tests, on every device present (Intel's runtime beside PoCL where setup
# installed it, as tests/intel.cmake does for ctest).
step "[5/6] pytest: the Python package (python/tests) on every device"
intel=${CLGRAD_INTEL_OCL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/clgrad/intel-ocl}
venv=${CLGRAD_VENV:-$PWD/.venv}
pyenv=(env CLGRAD_SELFTEST=0 "CLGRAD_CACHE_DIR=$(cd "$build" && pwd)/test-cache" "CLGRAD_BIN=$(cd "$build" && pwd)/clgrad")
if [ "${CLGRAD_SKIP_INTEL:-0}" != 1 ] && [ -e "$intel/icd/intel.icd" ]; then
	pyenv+=("OCL_ICD_VENDORS=$intel/icd" "LD_LIBRARY_PATH=$intel/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
fi
(cd python/tests && "${pyenv[@]}" "$venv/bin/python" -m pytest -q -p no:cacheprovider .) || rc=$?
if [ "$rc" -ne 0 ]; then
	step "test.sh: FAILED (pytest exit $rc); see its output above"
	exit "$rc"
fi
if [ "${CLGRAD_SKIP_SANITIZE:-0}" = 1 ]; then
	step "[6/6] sanitizers: skipped (CLGRAD_SKIP_SANITIZE=1)"
else
	step "[6/6] sanitizers: ASan+UBSan build, lean tests, fuzzing (scripts/sanitize.sh)"
	start=$(date +%s)
	CLGRAD_ASAN_BUILD_DIR=${CLGRAD_ASAN_BUILD_DIR:-$build-asan} bash scripts/sanitize.sh || rc=$?
	echo "sanitizer stage: $(($(date +%s) - start)) s"
	if [ "$rc" -ne 0 ]; then
		step "test.sh: FAILED (sanitizer stage exit $rc); see the report above"
		exit "$rc"
	fi
fi
step "test.sh: all tests passed"
