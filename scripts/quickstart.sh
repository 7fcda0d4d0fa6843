#!/usr/bin/env bash
# Command 1 of the README: install what is missing, build clgrad (Release) in build/, run the
# main job. Safe to run again: setup and build only do what is left to do.
#   ./scripts/quickstart.sh        (env: CLGRAD_BUILD_DIR to build elsewhere than build/,
#                                   CLGRAD_EPOCHS for another number of epochs than 5)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CLGRAD_BUILD_DIR:-build}
jobs=$(nproc 2>/dev/null || echo 2)

step() { printf '\n==== %s\n' "$*"; }

# The main job: what the quick start demonstrates once clgrad is built. Edit here only.
main_job() {
	step "[4/4] devices: every device clgrad can use (* = the default)"
	"$build/clgrad" devices
	step "[4/4] train: the MLP (784-512-512-10, Adam) on Fashion-MNIST on the default device"
	"$build/clgrad" train --model mlp --epochs "${CLGRAD_EPOCHS:-5}" --schedule cosine --log train_log.jsonl \
		--save mlp.safetensors
}

step "[1/4] setup: Debian packages (scripts/setup.sh), the Python package in .venv/ (scripts/setup_python.sh)"
bash scripts/setup.sh
bash scripts/setup_python.sh
step "[2/4] configure: $build (Release)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
step "[3/4] build: $build with $jobs jobs"
cmake --build "$build" -j "$jobs"
main_job
step "quickstart: done (tests: ./scripts/test.sh)"
