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
