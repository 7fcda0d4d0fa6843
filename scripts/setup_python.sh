#!/usr/bin/env bash
# Installs the clgrad Python package (python/, built by pip through scikit-build-core and the
# project's CMake) into a virtual environment, with numpy and pytest. Called by quickstart.sh and
# test.sh after setup.sh; safe to run again (the CMake build in build-py/ is kept, so a second
# install rebuilds only what changed).
#   scripts/setup_python.sh            the environment is .venv/ in the repository
#   CLGRAD_VENV=DIR scripts/setup_python.sh    another folder
#   CLGRAD_PYTHON_BIN=python3.12 ...   the interpreter the environment is made from (default python3)
# Why a virtual environment: Debian's python3 refuses system-wide pip installs (PEP 668); a venv
# works the same with Debian's python3 (python3-venv, python3-dev: setup.sh installs them) and
# with a pyenv or other Python. Use it with `.venv/bin/python` or `source .venv/bin/activate`.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${CLGRAD_VENV:-$PWD/.venv}
py=${CLGRAD_PYTHON_BIN:-python3}

if ! command -v "$py" >/dev/null 2>&1; then
	echo "setup-python: $py not found (setup.sh installs python3)" >&2
	exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
	echo "setup-python: making the virtual environment $venv from $($py --version 2>&1)"
	if ! "$py" -m venv "$venv"; then
		echo "setup-python: '$py -m venv' failed; on Debian: apt-get install python3-venv" >&2
		exit 1
	fi
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
echo "setup-python: installing numpy, pytest and safetensors (the tests read clgrad's files with it)"
"$venv/bin/python" -m pip install -q "numpy>=1.22" "pytest>=7" "safetensors>=0.4"
echo "setup-python: building and installing the clgrad package (pip install .; CMake in build-py/)"
start=$(date +%s)
"$venv/bin/python" -m pip install -q --no-deps .
echo "setup-python: clgrad installed in $venv in $(($(date +%s) - start)) s:" \
	"$("$venv/bin/python" -c 'import clgrad; print(clgrad.__version__, clgrad.__file__)')"
