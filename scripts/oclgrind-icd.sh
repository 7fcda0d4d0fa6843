#!/usr/bin/env bash
# Makes an ICD vendor folder that registers Oclgrind (an OpenCL simulator that reports invalid
# memory accesses, uninitialised reads and data races) next to the system's platforms (PoCL...).
#   scripts/oclgrind-icd.sh DIR
#   OCL_ICD_VENDORS=DIR clinfo -l                      # lists Oclgrind and the system platforms
#   OCL_ICD_VENDORS=DIR build/clgrad smoke --device oclgrind
set -euo pipefail

if [ $# -ne 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	echo "usage: $0 DIR   (then: OCL_ICD_VENDORS=DIR clinfo -l)" >&2
	exit 2
fi
dir=$1

rt=/usr/lib/oclgrind/liboclgrind-rt-icd.so
if [ ! -e "$rt" ]; then
	rt=$( (dpkg -L liboclgrind-21.10 oclgrind 2>/dev/null || true) | grep '/liboclgrind-rt-icd\.so$' | head -n 1)
	[ -n "$rt" ] || rt=$(find /usr/lib /usr/local/lib /usr/lib64 -name liboclgrind-rt-icd.so 2>/dev/null | head -n 1 || true)
fi
if [ -z "$rt" ] || [ ! -e "$rt" ]; then
	echo "oclgrind-icd: liboclgrind-rt-icd.so not found; install oclgrind (scripts/setup.sh)" >&2
	exit 1
fi

mkdir -p "$dir"
# OCL_ICD_VENDORS replaces /etc/OpenCL/vendors, so copy the system's registrations (pocl.icd and
# any other) into DIR as well.
copied=0
for icd in /etc/OpenCL/vendors/*.icd; do
	[ -e "$icd" ] || continue
	[ "$(basename "$icd")" = oclgrind.icd ] && continue
	cp "$icd" "$dir/"
	copied=$((copied + 1))
done
[ -e "$dir/pocl.icd" ] || echo "oclgrind-icd: warning: /etc/OpenCL/vendors/pocl.icd not found (is pocl-opencl-icd installed?)" >&2
echo "$rt" >"$dir/oclgrind.icd"
echo "oclgrind-icd: $dir/oclgrind.icd -> $rt (+ $copied system ICD file(s))"
echo "oclgrind-icd: use it with OCL_ICD_VENDORS=$dir"
