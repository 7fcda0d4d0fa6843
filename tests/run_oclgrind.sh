#!/usr/bin/env bash
# Runs a test binary on the Oclgrind platform only, and fails if Oclgrind reported any error
# (invalid memory access, uninitialised read, data race...).
# usage: run_oclgrind.sh SOURCE_DIR TEST_BINARY [ARGS...]
set -u
src=$1; shift
rt=/usr/lib/oclgrind/liboclgrind-rt-icd.so
[ -e "$rt" ] || rt=$(find /usr/lib -name 'liboclgrind-rt-icd.so' 2>/dev/null | head -1)
if [ -z "$rt" ]; then
	echo "Oclgrind runtime not installed: skipped"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/vendors"
echo "$rt" > "$work/vendors/oclgrind.icd"
export OCL_ICD_VENDORS=$work/vendors OCLGRIND_LOG=$work/oclgrind.log OCLGRIND_DATA_RACES=1
"$@" --device Oclgrind
rc=$?
if [ -s "$work/oclgrind.log" ]; then
	echo "Oclgrind reported errors:"
	head -c 20000 "$work/oclgrind.log"
	exit 1
fi
exit $rc
