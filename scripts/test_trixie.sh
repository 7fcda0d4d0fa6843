#!/usr/bin/env bash
# The Debian 13 (trixie) stage of CI (scripts/test.sh runs it after the main ctest): clgrad built in
# the trixie root of scripts/setup_trixie.sh (warnings as errors, Intel's runtime left out), then
# the op suite, the gradient checks, the training tests (test_train: devices against the
# reference; test_trainer) and `clgrad compare --quick`, in one ctest pass per OpenCL stack:
# PoCL 6 and Mesa's rusticl on llvmpipe. Each pass sees only its own platform (OCL_ICD_VENDORS).
#   scripts/test_trixie.sh   (root; env: CLGRAD_TRIXIE_DIR, CLGRAD_TRIXIE_MIRROR as setup_trixie.sh)
# Exit status: 0 passed, 1 a build or test failed, 77 skipped: not root, or the root cannot be made
# because the mirror is unreachable (a root already made needs no network, so its tests always run).
set -euo pipefail
cd "$(dirname "$0")/.."

# the tests, and the targets they run
TESTS=(test_ops test_grad test_train test_trainer test_compare_quick)
TARGETS=(test_ops test_grad test_train test_trainer clgrad_cli)
# name:ICD file in the root's /etc/OpenCL/vendors
STACKS=(pocl6:pocl.icd rusticl:rusticl.icd)

if [ "${1:-}" = --inside ]; then
	# in the root, in /src (read-only); the build stays in the root
	build=/root/build-trixie
	jobs=$(nproc 2>/dev/null || echo 2)
	start=$(date +%s)
	echo "test-trixie: configure $build (CLGRAD_WERROR=ON, no Intel): $(gcc --version | head -n 1), $(cmake --version | head -n 1)"
	cmake -S /src -B "$build" -DCLGRAD_WERROR=ON -DCLGRAD_INTEL_OCL_DIR=OFF >"$build.configure.log" 2>&1 ||
		{ cat "$build.configure.log"; exit 1; }
	echo "test-trixie: build ${TARGETS[*]} with $jobs jobs"
	nice cmake --build "$build" -j "$jobs" --target "${TARGETS[@]}" >"$build.build.log" 2>&1 ||
		{ tail -n 60 "$build.build.log"; echo "test-trixie: build failed (log: $build.build.log in the root)"; exit 1; }
	echo "test-trixie: configured and built in $(($(date +%s) - start)) s"
	regex="^($(IFS='|'; echo "${TESTS[*]}"))\$"
	rc=0
	for s in "${STACKS[@]}"; do
		name=${s%%:*} icd=/etc/OpenCL/vendors/${s#*:}
		[ -e "$icd" ] || { echo "test-trixie: $icd missing"; exit 1; }
		mkdir -p "$build/icd-$name"
		rm -f "$build/icd-$name"/*.icd
		cp "$icd" "$build/icd-$name/"
		export OCL_ICD_VENDORS=$build/icd-$name
		echo
		echo "test-trixie: ---- $name: ${TESTS[*]}"
		"$build/clgrad" devices | grep -v '^ *$' || true
		t0=$(date +%s)
		(cd "$build" && ctest --output-on-failure --no-tests=error -j "$jobs" -R "$regex") || rc=1
		# what the op suite ran on this stack (ctest keeps every test's output in LastTest.log)
		awk -v p="test-trixie: $name: test_ops: " '/Testing: test_ops$/ { on = 1 } /^"test_ops" end time/ { on = 0 }
			on && /^(device [0-9]+:|op cases:)/ { print p $0 }' "$build/Testing/Temporary/LastTest.log"
		echo "test-trixie: $name: $(($(date +%s) - t0)) s"
	done
	exit "$rc"
fi

if [ "$(id -u)" != 0 ]; then
	echo "test-trixie: skipped: needs root for debootstrap, chroot and mount (CI runs as root)"
	exit 77
fi
rc=0
bash scripts/setup_trixie.sh || rc=$?
if [ "$rc" = 3 ]; then
	echo "test-trixie: skipped: no trixie root and Debian's mirror cannot be reached (see above)"
	exit 77
fi
[ "$rc" = 0 ] || { echo "test-trixie: setup_trixie.sh failed (exit $rc)"; exit 1; }
# the tests' status is never 77: only the setup above can skip the stage
rc=0
bash scripts/setup_trixie.sh run bash /src/scripts/test_trixie.sh --inside || rc=$?
[ "$rc" = 0 ] || { echo "test-trixie: FAILED (exit $rc inside the root)"; exit 1; }
echo "test-trixie: passed on ${STACKS[*]%%:*}"
