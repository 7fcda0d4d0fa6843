#!/usr/bin/env bash
# Installs the Debian packages clgrad needs to build, test and run. Idempotent: installs only what
# is missing, runs `apt-get update` only when something must be installed, and uses sudo only
# when not root.
#   scripts/setup.sh            install what is missing
#   scripts/setup.sh --check    list what is missing; exit 1 if anything is (installs nothing)
set -euo pipefail

PACKAGES=(
	ocl-icd-opencl-dev opencl-headers   # OpenCL ICD loader + headers
	pocl-opencl-icd                     # portable OpenCL CPU device (always present)
	libclblast-dev                      # GEMM
	libclfft-dev                        # FFT
	clinfo oclgrind                     # inspection; Oclgrind: a simulator platform that checks kernels
	cmake gcc make pkg-config           # build
	zlib1g-dev libopenblas-dev          # data loading; CPU BLAS baseline for benchmarks
	python3
	dataset-fashion-mnist               # /usr/share/datasets/fashion-mnist
	openmpi-bin libopenmpi-dev          # clgrad train --mpi (optional at build time)
)

check_only=0
case "${1:-}" in
	"") ;;
	--check) check_only=1 ;;
	-h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "setup: dpkg-query not found: this script supports Debian 12 (and derivatives) only." >&2
	echo "setup: install the equivalents of: ${PACKAGES[*]}" >&2
	exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
	# "ii" = wanted install, currently installed
	if [[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)" != ii* ]]; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "setup: all ${#PACKAGES[@]} required packages are installed"
	exit 0
fi
if [ "$check_only" = 1 ]; then
	echo "setup: missing packages: ${missing[*]}"
	exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "setup: not root and sudo is not available; as root run:" >&2
		echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
		exit 1
	fi
	sudo=(sudo)
fi

echo "setup: installing ${#missing[@]} missing package(s): ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}" </dev/null
echo "setup: installed: ${missing[*]}"
