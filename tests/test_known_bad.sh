#!/usr/bin/env bash
# docs/known-bad/: every reason in the known-bad table names an evidence folder that exists, has a
# README and is listed in the index; the two evidence programs run right on PoCL (the minimal
# kernels of rusticl 22.3's bugs give 0 1 2 3 and 2 2 2 2; CLBlast's SGEMM of 256 matches the loop) and fail
# where they must (a kernel that does not build, a run of a kernel the program lacks).
#   test_known_bad.sh CLBUILD SGEMM_CHECK SOURCE_DIR      (exit 77: no OpenCL device)
set -u
clbuild=$1 sgemm=$2 src=$3
kb=$src/docs/known-bad
. "$(dirname "$0")/test_common.sh"
t_workdir

# the reasons: the table's "known-bad: ..." strings
folders=$(grep '"known-bad: ' "$src/backend/opencl/cl_selftest.c" | grep -o 'docs/known-bad/[A-Za-z0-9_-]\+' | sort -u)
[ -n "$folders" ] || fail "no known-bad entry in cl_selftest.c names its evidence folder"
entries=$(grep -c '^	{.*CLG_OP_' "$src/backend/opencl/cl_selftest.c")
named=$(grep -A1 '^	{.*CLG_OP_' "$src/backend/opencl/cl_selftest.c" | grep -c 'docs/known-bad/')
[ "$entries" = "$named" ] || fail "$named of the $entries known-bad entries name an evidence folder in their reason"
for f in $folders $(cd "$kb" && ls -d */ | sed 's|/$||; s|^|docs/known-bad/|'); do
	[ -s "$src/$f/README.md" ] || fail "$f has no README.md"
	grep -q "(${f#docs/known-bad/}/)" "$kb/README.md" || fail "$f is not in docs/known-bad/README.md"
done

CLBUILD_PLATFORM=Portable CLBUILD_ARG1=2,4,4,0,0,0,0,4,1,0,0,0,0 "$clbuild" --run offsets 16 "" \
	"$kb/rusticl-22-struct-arg/minimal.cl" >"$work/run.txt" 2>&1
rc=$?
cat "$work/run.txt"
grep -q "no OpenCL platform\|no device" "$work/run.txt" && { echo "no PoCL device: skipped"; exit 77; }
[ $rc = 0 ] && grep -q "out\[0..3\] = 0 1 2 3" "$work/run.txt" || fail "clbuild: the minimal kernel on PoCL (exit $rc)"
ones=1$(printf ',1%.0s' $(seq 24))   # minimal-2d.cl's struct: 25 ints
CLBUILD_PLATFORM=Portable CLBUILD_ARG1=$ones "$clbuild" --run k2 4 "" "$kb/rusticl-22-struct-arg/minimal-2d.cl" >"$work/run2d.txt" 2>&1
[ $? = 0 ] && grep -q "out\[0..3\] = 2 2 2 2" "$work/run2d.txt" || { cat "$work/run2d.txt"; fail "clbuild: minimal-2d.cl on PoCL"; }
echo '__kernel void broken(__global float *out) { out[0] = undeclared; }' >"$work/broken.cl"
CLBUILD_PLATFORM=Portable "$clbuild" "" "$work/broken.cl" >"$work/broken.txt" 2>&1
[ $? = 1 ] && grep -q "FAILED" "$work/broken.txt" || fail "clbuild: a kernel that does not build must fail"
CLBUILD_PLATFORM=Portable "$clbuild" --run nosuch 16 "" "$kb/rusticl-22-struct-arg/minimal.cl" >"$work/run2.txt" 2>&1
[ $? = 1 ] && grep -q "run nosuch on 16 items: FAILED" "$work/run2.txt" || fail "clbuild: a run that fails must fail"
"$sgemm" 256 Portable >"$work/sgemm.txt" 2>&1 || { cat "$work/sgemm.txt"; fail "sgemm_check 256 on PoCL"; }
grep -q ": ok$" "$work/sgemm.txt" || fail "sgemm_check: no verdict"
cat "$work/sgemm.txt"
echo "test_known_bad: ok ($(echo $folders | wc -w) evidence folder(s) named by the table)"
