#!/usr/bin/env bash
# Installs the Debian packages clgrad needs to build, test and run, then Intel's OpenCL CPU runtime
# (a second vendor for the tests, from PyPI into a cache folder: scripts/setup_intel_ocl.sh).
# Idempotent: installs only what is missing, runs `apt-get update` only when something must be
# installed, and uses sudo only when not root. Without PyPI the Intel step warns and the rest goes on.
#   scripts/setup.sh            install what is missing
#   scripts/setup.sh --check    list what is missing; exit 1 if a package is (installs nothing)
#   CLGRAD_SKIP_INTEL=1 scripts/setup.sh      skip Intel's runtime (PoCL and Oclgrind only)
set -euo pipefail

PACKAGES=(
	ocl-icd-opencl-dev opencl-headers   # OpenCL ICD loader + headers
	pocl-opencl-icd                     # portable OpenCL CPU device (always present)
	libclblast-dev                      # GEMM
	libclfft-dev                        # FFT
	clinfo oclgrind                     # inspection; Oclgrind: a simulator platform that checks kernels
	cmake gcc make pkg-config           # build
	clang libclang-rt-14-dev llvm       # sanitizer stage: ASan/UBSan/libFuzzer runtimes, llvm-symbolizer
	zlib1g-dev libopenblas-dev          # data loading; CPU BLAS baseline for benchmarks
	libfftw3-dev                        # FFTW: clgrad bench fft's CPU baseline (optional at build time)
	libcjson-dev                        # JSON: safetensors headers, reports, tune and sweep files
	python3 python3-venv python3-dev    # the Python package's virtual environment and its C extension
	dataset-fashion-mnist               # /usr/share/datasets/fashion-mnist
	fortunes                            # /usr/share/games/fortunes: a 2.6 MB text corpus for the language models
	openmpi-bin libopenmpi-dev          # clgrad train --mpi (optional at build time)
	debootstrap                         # test.sh's Debian 13 stage: scripts/setup_trixie.sh
)

check_only=0
case "${1:-}" in
	"") ;;
	--check) check_only=1 ;;
	-h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac
with_intel=1
[ "${CLGRAD_SKIP_INTEL:-0}" = 1 ] && with_intel=0
[ "$(uname -m)" = x86_64 ] || with_intel=0
# pip downloads Intel's wheels
if [ "$with_intel" = 1 ] && ! python3 -m pip --version >/dev/null 2>&1; then
	PACKAGES+=(python3-pip)
fi

# Intel's runtime: installed after the packages, never fatal (CI then runs PoCL and Oclgrind only)
intel_ocl() {
	[ "$with_intel" = 1 ] || { echo "setup: Intel's OpenCL CPU runtime skipped (CLGRAD_SKIP_INTEL=1 or not x86_64)"; return 0; }
	if [ "$check_only" = 1 ]; then
		local d=${CLGRAD_INTEL_OCL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/clgrad/intel-ocl}
		if [ -e "$d/icd/intel.icd" ]; then echo "setup: Intel's OpenCL CPU runtime is in $d"
		else echo "setup: Intel's OpenCL CPU runtime is not installed (optional; scripts/setup_intel_ocl.sh)"; fi
		return 0
	fi
	bash "$(dirname "$0")/setup_intel_ocl.sh" ||
		echo "setup: warning: Intel's OpenCL CPU runtime not installed; the tests run on PoCL (and Oclgrind) only" >&2
}

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
	intel_ocl
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
intel_ocl
