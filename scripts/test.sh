#!/usr/bin/env bash
# Command 2 of the README (and what CI runs through .ci/run): install what is missing, build with
# warnings as errors in build-ci/, run every test. Exits non-zero if any step or test fails.
#   ./scripts/test.sh              (env: CLGRAD_BUILD_DIR to build elsewhere than build-ci/,
#                                   CTEST_ARGS for extra ctest arguments, e.g. "-R test_ops",
#                                   CLGRAD_CTEST_JOBS tests at once, default the number of cores)
# The tests that run on every device include Intel's OpenCL CPU runtime when setup.sh could fetch it
# (tests/intel.cmake); CLGRAD_SKIP_INTEL=1 leaves it out. After the main ctest, the sanitizer stage
# (scripts/sanitize.sh: a clang ASan+UBSan build, a lean set of tests under it on the reference
# backend and PoCL, every fuzz harness for 30 s); CLGRAD_SKIP_SANITIZE=1 leaves it out. pytest runs
# the Python package's tests (python/tests, in .venv/ from scripts/setup_python.sh) after ctest. Last, the
# Debian 13 stage (scripts/test_trixie.sh: in a cached trixie root, a build and the op, gradient,
# training and compare tests on PoCL 6 and on Mesa's rusticl); CLGRAD_SKIP_TRIXIE=1 leaves it out,
# and it is skipped, not failed, when it is not root or the root cannot be made for want of network.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CLGRAD_BUILD_DIR:-build-ci}
jobs=$(nproc 2>/dev/null || echo 2)

step() { printf '\n==== %s\n' "$*"; }

step "[1/7] setup: Debian packages (scripts/setup.sh), the Python package (scripts/setup_python.sh)"
bash scripts/setup.sh
bash scripts/setup_python.sh
step "[2/7] configure: $build (CLGRAD_WERROR=ON)"
# the Python extension too (python/CMakeLists.txt), so that -Werror covers it
cmake -S . -B "$build" -DCLGRAD_WERROR=ON -DCLGRAD_PYTHON=ON -DPython_EXECUTABLE="${CLGRAD_VENV:-$PWD/.venv}/bin/python"
step "[3/7] build: $build with $jobs jobs"
cmake --build "$build" -j "$jobs"
# $jobs tests at a time (CLGRAD_CTEST_JOBS): the PoCL abort that kept ctest to one test at a time
# ("Final linking of kernel ... failed": two processes building the same kernel with PoCL's cache
# off) came from test_cache_timing, which now has a PoCL cache folder of its own.
ctest_jobs=${CLGRAD_CTEST_JOBS:-0}
[ "$ctest_jobs" != 0 ] || ctest_jobs=$jobs
step "[4/7] ctest ($ctest_jobs tests at a time)"
rc=0
# shellcheck disable=SC2086
(cd "$build" && ctest --output-on-failure --no-tests=error -j "$ctest_jobs" ${CTEST_ARGS:-}) || rc=$?
if [ "$rc" -ne 0 ]; then
	step "test.sh: FAILED (ctest exit $rc); see the output of the failing tests above"
	exit "$rc"
fi
# The Python package's tests, on every device present (Intel's runtime beside PoCL where setup
# installed it, as tests/intel.cmake does for ctest).
step "[5/7] pytest: the Python package (python/tests) on every device"
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
	step "[6/7] sanitizers: skipped (CLGRAD_SKIP_SANITIZE=1)"
else
	step "[6/7] sanitizers: ASan+UBSan build, lean tests, fuzzing (scripts/sanitize.sh)"
	start=$(date +%s)
	CLGRAD_ASAN_BUILD_DIR=${CLGRAD_ASAN_BUILD_DIR:-$build-asan} bash scripts/sanitize.sh || rc=$?
	echo "sanitizer stage: $(($(date +%s) - start)) s"
	if [ "$rc" -ne 0 ]; then
		step "test.sh: FAILED (sanitizer stage exit $rc); see the report above"
		exit "$rc"
	fi
fi
if [ "${CLGRAD_SKIP_TRIXIE:-0}" = 1 ]; then
	step "[7/7] Debian 13 (PoCL 6, rusticl): skipped (CLGRAD_SKIP_TRIXIE=1)"
else
	step "[7/7] Debian 13 (PoCL 6, rusticl): build and tests in a trixie root (scripts/test_trixie.sh)"
	start=$(date +%s)
	bash scripts/test_trixie.sh || rc=$?
	echo "Debian 13 stage: $(($(date +%s) - start)) s"
	if [ "$rc" = 77 ]; then
		step "[7/7] Debian 13 stage: skipped (the reason is above)"
		rc=0
	elif [ "$rc" -ne 0 ]; then
		step "test.sh: FAILED (Debian 13 stage exit $rc); see the output above"
		exit "$rc"
	fi
fi
step "test.sh: all tests passed"
