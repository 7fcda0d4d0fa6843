#!/usr/bin/env bash
# Checks the helper scripts: syntax and executable bits, that setup.sh finds every package
# installed, and that scripts/oclgrind-icd.sh registers Oclgrind beside the system platforms so
# that clgrad sees both.
# usage: test_scripts.sh SOURCE_DIR CLGRAD_BINARY
set -euo pipefail
src=$1 clgrad=$2

for f in "$src"/scripts/*.sh "$src"/.ci/run "$src"/tests/*.sh; do
	bash -n "$f" || { echo "FAIL: syntax error in $f"; exit 1; }
done
# the README runs these directly
for f in "$src"/scripts/*.sh "$src"/.ci/run; do
	[ -x "$f" ] || { echo "FAIL: $f is not executable (chmod +x)"; exit 1; }
done
echo "ok: scripts parse and are executable"

"$src/scripts/setup.sh" --check

# setup_intel_ocl.sh on fake wheels already in its folder (no network): the lib folder leaves out
# libOpenCL*, intel.icd names libintelocl.so by absolute path, a second run changes nothing.
if [ "$(uname -m)" = x86_64 ]; then
	fake=$(mktemp -d)
	mkdir -p "$fake/wheels"
	python3 - "$fake/wheels" <<'PY'
import sys, zipfile
for whl, libs in [("intel_opencl_rt-2026.2.0-py2.py3-none-manylinux_2_28_x86_64.whl",
                   ["libintelocl.so", "libOpenCL.so.1"]),
                  ("tbb-2023.2.0-py2.py3-none-manylinux_2_28_x86_64.whl", ["libtbb.so.12"]),
                  ("intel_cmplr_lib_rt-2026.2.0-py2.py3-none-manylinux_2_28_x86_64.whl", ["libsvml.so"])]:
    with zipfile.ZipFile(f"{sys.argv[1]}/{whl}", "w") as z:
        for lib in libs:
            z.writestr(f"{whl.split('-')[0]}-{whl.split('-')[1]}.data/data/lib/{lib}", "not a library")
PY
	out1=$("$src/scripts/setup_intel_ocl.sh" "$fake") || { echo "FAIL: setup_intel_ocl.sh: $out1"; exit 1; }
	out2=$("$src/scripts/setup_intel_ocl.sh" "$fake") || { echo "FAIL: setup_intel_ocl.sh (2nd run)"; exit 1; }
	echo "$out1"
	grep -q "nothing to download" <<<"$out2" && ! grep -q unpacking <<<"$out2" ||
		{ echo "FAIL: a second run unpacked or downloaded: $out2"; exit 1; }
	[ "$(cat "$fake/icd/intel.icd")" = "$fake/lib/libintelocl.so" ] || { echo "FAIL: intel.icd: $(cat "$fake/icd/intel.icd")"; exit 1; }
	[ -e "$fake/lib/libtbb.so.12" ] && [ -e "$fake/lib/libsvml.so" ] || { echo "FAIL: a library is not linked"; exit 1; }
	! ls "$fake/lib" | grep -q libOpenCL || { echo "FAIL: the wheel's libOpenCL is in the lib folder"; exit 1; }
	for icd in /etc/OpenCL/vendors/*.icd; do
		[ -e "$icd" ] || continue
		cmp -s "$icd" "$fake/icd/$(basename "$icd")" || { echo "FAIL: $icd not copied"; exit 1; }
	done
	# PyPI unreachable: the script fails, setup.sh warns and succeeds (CI goes on with PoCL)
	rm -rf "$fake"/*
	if python3 -m pip --version >/dev/null 2>&1; then
		export PIP_INDEX_URL=http://127.0.0.1:9/simple PIP_NO_INDEX=0
		"$src/scripts/setup_intel_ocl.sh" "$fake" >/dev/null 2>&1 && { echo "FAIL: no PyPI, yet exit status 0"; exit 1; }
		out=$(CLGRAD_INTEL_OCL_DIR=$fake "$src/scripts/setup.sh" 2>&1) || { echo "FAIL: setup.sh failed without PyPI: $out"; exit 1; }
		grep -q "warning: Intel" <<<"$out" || { echo "FAIL: setup.sh did not warn: $out"; exit 1; }
		unset PIP_INDEX_URL PIP_NO_INDEX
	fi
	rm -rf "$fake"
	echo "ok: setup_intel_ocl.sh (fake wheels; no PyPI: a warning)"
fi

# setup_trixie.sh (root only, no network, no debootstrap run): an unreachable mirror gives exit 3
# and test_trixie.sh's stage is skipped (77), `run` without a finished root fails, and mounts left
# in a root by a killed run are removed by the next call.
if [ "$(id -u)" = 0 ] && command -v debootstrap >/dev/null; then
	fake=$(mktemp -d)
	export CLGRAD_TRIXIE_DIR=$fake/root CLGRAD_TRIXIE_MIRROR=http://127.0.0.1:9/debian
	rc=0; "$src/scripts/setup_trixie.sh" >/dev/null 2>&1 || rc=$?
	[ $rc = 3 ] || { echo "FAIL: setup_trixie.sh with an unreachable mirror: exit $rc, not 3"; exit 1; }
	rc=0; out=$("$src/scripts/test_trixie.sh" 2>&1) || rc=$?
	[ $rc = 77 ] && grep -q "skipped" <<<"$out" || { echo "FAIL: test_trixie.sh offline: exit $rc: $out"; exit 1; }
	rc=0; "$src/scripts/setup_trixie.sh" run true >/dev/null 2>&1 || rc=$?
	[ $rc = 1 ] || { echo "FAIL: setup_trixie.sh run without a root: exit $rc, not 1"; exit 1; }
	mkdir -p "$fake/root/proc" "$fake/root/dev" "$fake/root/src"
	if mount -t tmpfs clgrad-test "$fake/root/dev" 2>/dev/null; then
		mkdir "$fake/root/dev/pts"
		mount -t tmpfs clgrad-test "$fake/root/dev/pts"
		mount --bind "$src" "$fake/root/src"
		"$src/scripts/setup_trixie.sh" umount >/dev/null ||
			{ echo "FAIL: setup_trixie.sh umount"; umount -R "$fake/root/dev" "$fake/root/src"; exit 1; }
		! grep -q " $fake/root" /proc/self/mounts || { echo "FAIL: mounts left under $fake/root"; exit 1; }
	fi
	unset CLGRAD_TRIXIE_DIR CLGRAD_TRIXIE_MIRROR
	rm -rf --one-file-system "$fake"
	echo "ok: setup_trixie.sh (unreachable mirror: exit 3, stage skipped; stale mounts removed)"
fi

if [ ! -e /etc/OpenCL/vendors/pocl.icd ] || ! command -v oclgrind >/dev/null; then
	echo "PoCL or Oclgrind not installed: Oclgrind registration not checked"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$src/scripts/oclgrind-icd.sh" "$tmp/vendors"
[ -s "$tmp/vendors/pocl.icd" ] && [ -s "$tmp/vendors/oclgrind.icd" ] ||
	{ echo "FAIL: pocl.icd / oclgrind.icd not written"; exit 1; }
out=$(OCL_ICD_VENDORS=$tmp/vendors "$clgrad" devices)
echo "$out"
grep -q 'Oclgrind' <<<"$out" || { echo "FAIL: Oclgrind not listed"; exit 1; }
grep -q 'Portable Computing Language' <<<"$out" || { echo "FAIL: PoCL not listed"; exit 1; }
echo "PASS: scripts"
