#!/usr/bin/env bash
# The op suite's small cases of some ops on Oclgrind made to look like a GPU with the given limits
# (CL_DEVICE_MAX_WORK_GROUP_SIZE, CL_DEVICE_LOCAL_MEM_SIZE): every launch must pick a legal
# work-group size and local memory (backend/opencl/cl_launch.c), and Oclgrind must report no
# memory error or data race. Checks first, through clgrad devices --json, that the limit is in effect.
# usage: run_oclgrind_limits.sh SOURCE_DIR CLGRAD_CLI TEST_OPS MAX_WGSIZE LOCAL_MEM OP...
set -u
src=$1 cli=$2 ops=$3 wg=$4 lm=$5
shift 5
export OCLGRIND_MAX_WGSIZE=$wg OCLGRIND_LOCAL_MEM_SIZE=$lm
rt=/usr/lib/oclgrind/liboclgrind-rt-icd.so
[ -e "$rt" ] || rt=$(find /usr/lib -name 'liboclgrind-rt-icd.so' 2>/dev/null | head -1)
if [ -z "$rt" ]; then
	echo "Oclgrind runtime not installed: skipped"
	exit 77
fi
vend=$(mktemp -d)
trap 'rm -rf "$vend"' EXIT
echo "$rt" >"$vend/oclgrind.icd"
if ! OCL_ICD_VENDORS=$vend "$cli" devices --json | tr ',' '\n' | grep -q "\"local_mem_bytes\": $lm\$"; then
	echo "Oclgrind did not take OCLGRIND_LOCAL_MEM_SIZE=$lm:"
	OCL_ICD_VENDORS=$vend "$cli" devices
	exit 1
fi
# one process for every op: the device opens and each program builds once under Oclgrind
list=$(IFS=,; echo "$*")
out=$("$src/tests/run_oclgrind.sh" "$src" "$ops" --small --op "$list" 2>&1)
rc=$?
echo "max work-group $wg, local memory $lm:"
echo "$out" | sed -n '/^op suite tally/,$p'
[ $rc -eq 0 ] || echo "$out" | tail -n 60
exit $rc
