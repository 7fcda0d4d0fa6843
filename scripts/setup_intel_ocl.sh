#!/usr/bin/env bash
# Installs Intel's OpenCL CPU runtime (a second real OpenCL vendor beside PoCL; runs on AMD CPUs
# too) from its PyPI wheels into a cache folder, without root and without touching the system.
#   scripts/setup_intel_ocl.sh [DIR]
#     DIR defaults to $CLGRAD_INTEL_OCL_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/clgrad/intel-ocl
#   then: OCL_ICD_VENDORS=DIR/icd LD_LIBRARY_PATH=DIR/lib clinfo -l   (Intel + the system's platforms)
# DIR/wheels  the three wheels (about 270 MB), downloaded once: a second run downloads nothing
# DIR/unpack  the unpacked wheels (about 1 GB)
# DIR/lib     links to every library of the wheels except their libOpenCL* (which would shadow
#             the system's ICD loader and needs libsvml): the folder for LD_LIBRARY_PATH
# DIR/icd     intel.icd (the absolute path of libintelocl.so) and a copy of each system ICD file
#             (OCL_ICD_VENDORS replaces /etc/OpenCL/vendors, so PoCL must be registered here too)
# Exit status: 0 installed (or already there), 1 failed (e.g. PyPI unreachable): a caller that can
# do without Intel (scripts/setup.sh) warns and goes on.
set -euo pipefail

if [ "${1:-}" = -h ] || [ "${1:-}" = --help ] || [ $# -gt 1 ]; then
	sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
	[ $# -gt 1 ] && exit 2
	exit 0
fi
dir=${1:-${CLGRAD_INTEL_OCL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/clgrad/intel-ocl}}
# the wheels, by pip requirement and by the file name pip gives each
SPECS=(intel-opencl-rt==2026.2.0 'tbb==2023.*' intel-cmplr-lib-rt==2026.2.0)
GLOBS=('intel_opencl_rt-2026.2.0-*.whl' 'tbb-2023.*-*.whl' 'intel_cmplr_lib_rt-2026.2.0-*.whl')

say() { echo "setup-intel-ocl: $*"; }
die() { echo "setup-intel-ocl: error: $*" >&2; exit 1; }

[ "$(uname -m)" = x86_64 ] || die "Intel's OpenCL CPU runtime is x86_64 only (this machine: $(uname -m))"
command -v python3 >/dev/null || die "python3 not found"
mkdir -p "$dir/wheels" "$dir/unpack" "$dir/lib" "$dir/icd"
dir=$(cd "$dir" && pwd)

# 1. download what is missing (pip download checks PyPI even for a file it has, so skip it then)
missing=()
for i in "${!SPECS[@]}"; do
	compgen -G "$dir/wheels/${GLOBS[$i]}" >/dev/null || missing+=("${SPECS[$i]}")
done
if [ ${#missing[@]} -eq 0 ]; then
	say "wheels already in $dir/wheels: nothing to download"
else
	python3 -m pip --version >/dev/null 2>&1 || die "pip not found (Debian: apt-get install python3-pip)"
	say "downloading ${missing[*]} from PyPI into $dir/wheels (about 270 MB in all, once)"
	python3 -m pip download --no-deps --only-binary=:all: --disable-pip-version-check \
		--progress-bar off --timeout 30 --retries 2 --dest "$dir/wheels" "${missing[@]}" ||
		die "pip download failed (is PyPI reachable?)"
fi

# 2. unpack each wheel once (a wheel is a zip); a marker says the unpacking finished
for whl in "$dir"/wheels/*.whl; do
	name=$(basename "$whl" .whl)
	[ -e "$dir/unpack/$name/.unpacked" ] && continue
	say "unpacking $(basename "$whl")"
	rm -rf "$dir/unpack/$name"
	python3 -m zipfile -e "$whl" "$dir/unpack/$name" || die "cannot unpack $whl"
	touch "$dir/unpack/$name/.unpacked"
done

# 3. one library folder: links to everything but the wheels' ICD loader
find "$dir/lib" -maxdepth 1 -type l -delete
n=0
while IFS= read -r so; do
	case $(basename "$so") in libOpenCL*) continue ;; esac
	ln -sf "$so" "$dir/lib/$(basename "$so")"
	n=$((n + 1))
done < <(find "$dir"/unpack/*/*.data/data/lib -maxdepth 1 -name '*.so*' \( -type f -o -type l \) | sort)
[ -e "$dir/lib/libintelocl.so" ] || die "libintelocl.so not found in the unpacked wheels"
say "$dir/lib: $n libraries linked (libOpenCL* left out)"

# 4. the ICD folder: Intel plus the system's registrations (refreshed on every run)
find "$dir/icd" -maxdepth 1 -name '*.icd' -delete
copied=0
for icd in /etc/OpenCL/vendors/*.icd; do
	[ -e "$icd" ] || continue
	cp "$icd" "$dir/icd/"
	copied=$((copied + 1))
done
echo "$dir/lib/libintelocl.so" >"$dir/icd/intel.icd"
say "$dir/icd: intel.icd + $copied system ICD file(s)"
say "use it with OCL_ICD_VENDORS=$dir/icd LD_LIBRARY_PATH=$dir/lib"
