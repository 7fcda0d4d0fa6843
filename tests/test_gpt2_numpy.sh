#!/usr/bin/env bash
# GPT-2's layout in and out of the gpt model, against numpy (tests/check_gpt2_numpy.py makes the
# weights and numpy's logits, test_gpt2_load loads them on every device and writes them back, the
# script checks what it wrote). Needs a python with numpy: the first of the arguments after the
# binary that has it (the repository's .venv, python3), else skipped.
# usage: test_gpt2_numpy.sh TEST_GPT2_LOAD SCRIPT PYTHON...
set -u
bin=$1 script=$2
shift 2
py=
for p in "$@"; do
	if [ -x "$(command -v "$p" 2>/dev/null)" ] && "$p" -c "import numpy" 2>/dev/null; then
		py=$p
		break
	fi
done
[ -n "$py" ] || { echo "no python with numpy among: $*: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" "$script" make "$work" || { echo "FAIL: making the weights"; exit 1; }
"$bin" "$work" || exit 1
"$py" "$script" check "$work" || { echo "FAIL: the weights written back"; exit 1; }
