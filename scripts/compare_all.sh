#!/usr/bin/env bash
# The merged comparison report of every OpenCL stack this machine has, end to end: `clgrad compare`
# on the host (the reference backend, the system's PoCL, Intel's CPU runtime where setup fetched
# it), then Oclgrind where installed (registered alone, below), then in the Debian 13 root of
# scripts/setup_trixie.sh (PoCL 6 and Mesa's rusticl on llvmpipe), then `clgrad compare --merge`
# of the reports and a screenshot of the HTML (scripts/compare_screenshot.sh, where Chromium is).
#   scripts/compare_all.sh [--quick] [--out DIR]     (root, for the Debian 13 part)
# --out: where the merged report goes (default docs/reports: report.json, report.md, report.html,
# report.png); --quick: compare's small workloads instead of the full ones. The two runs' own
# folders, with each device's log, stay in $COMPARE_WORK/{host,oclgrind,trixie} (default build/compare-all).
# Environment: CLGRAD_TRIXIE_DIR (the root; setup_trixie.sh's default), CLGRAD_SKIP_TRIXIE=1 (the
# host alone), CLGRAD_SKIP_INTEL=1, COMPARE_TIMEOUT (seconds per device, default 900: Intel's full
# run took 413 s). Measured on the 2-core machine: 4.9 minutes idle (293 s: host 136, Oclgrind 41),
# 17 to 20 minutes at load 8 to 15 (1006 and 1224 s), 2.6 minutes with --quick (157 s, loaded).
# docs/reports/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "compare-all: $*"; }

mode= out=docs/reports
while [ $# -gt 0 ]; do
	case $1 in
		--quick) mode=--quick ;;
		--full) mode= ;;
		--out) out=$2; shift ;;
		--out=*) out=${1#--out=} ;;
		--inside) break ;;
		-h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
		*) echo "usage: $0 [--quick] [--out DIR]" >&2; exit 2 ;;
	esac
	shift
done
timeout_s=${COMPARE_TIMEOUT:-900}

if [ "${1:-}" = --inside ]; then
	# in the root, in /src (read-only): build clgrad, compare PoCL 6 and rusticl (and no Clover)
	mode=$2 timeout_s=$3 res=/root/$4 build=/root/build-trixie
	[ -e "$build/CMakeCache.txt" ] || cmake -S /src -B "$build" -DCLGRAD_WERROR=ON -DCLGRAD_INTEL_OCL_DIR=OFF >/dev/null
	nice cmake --build "$build" -j "$(nproc)" --target clgrad_cli >"$build.compare-build.log" 2>&1 ||
		{ tail -n 40 "$build.compare-build.log"; exit 1; }
	mkdir -p "$build/icd-compare"
	rm -f "$build/icd-compare"/*.icd
	cp /etc/OpenCL/vendors/pocl.icd /etc/OpenCL/vendors/rusticl.icd "$build/icd-compare/"
	export OCL_ICD_VENDORS=$build/icd-compare
	"$build/clgrad" devices | grep -v '^ *$' || true
	rm -rf "$res"
	# the reference row is the host's (the merge takes the first report's reference for the train
	# divergence): here the two OpenCL stacks only
	rc=0
	# shellcheck disable=SC2086
	"$build/clgrad" compare $mode --devices "Portable,rusticl" --timeout "$timeout_s" --out "$res" || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 3 ] || exit "$rc"
	exit 0
fi

start=$(date +%s)
work=${COMPARE_WORK:-build/compare-all}
[ -x build/clgrad ] || cmake -S . -B build >/dev/null
nice cmake --build build -j "$(nproc)" --target clgrad_cli >/dev/null
mkdir -p "$work" "$out"

# the host's stacks: the system's ICDs, Intel's runtime (as the tests use it) and Oclgrind
icd=$work/icd
rm -rf "$icd" && mkdir -p "$icd"
cp /etc/OpenCL/vendors/*.icd "$icd/" 2>/dev/null || true
intel=${XDG_CACHE_HOME:-$HOME/.cache}/clgrad/intel-ocl
if [ "${CLGRAD_SKIP_INTEL:-0}" != 1 ] && [ -e "$intel/icd/intel.icd" ]; then
	cp "$intel/icd/intel.icd" "$icd/"
	export LD_LIBRARY_PATH=$intel/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
# Oclgrind runs on its own, registered alone: beside Intel's runtime in one process its worker
# ends in a glibc heap-corruption abort after the train section (docs/known-bad/README.md, "Open"),
# which is the two drivers' interaction, not Oclgrind's reading of clgrad
ocl_icd=$work/icd-oclgrind
rm -rf "$ocl_icd" && mkdir -p "$ocl_icd"
bash scripts/oclgrind-icd.sh "$ocl_icd" >/dev/null 2>&1 || say "no Oclgrind (scripts/setup.sh installs it)"
export OCL_ICD_VENDORS=$PWD/$icd
build/clgrad devices | grep -v '^ *$' || true
t0=$(date +%s)
rc=0
# shellcheck disable=SC2086
rm -rf "$work/host"
build/clgrad compare $mode --devices all --timeout "$timeout_s" --out "$work/host" || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 3 ] || { say "host run failed (exit $rc)"; exit 1; }
say "host run: $(($(date +%s) - t0)) s"
reports=("$work/host/report.json")
if ls "$ocl_icd"/*.icd >/dev/null 2>&1; then
	t0=$(date +%s)
	rc=0
	rm -rf "$work/oclgrind"
	# shellcheck disable=SC2086
	OCL_ICD_VENDORS=$PWD/$ocl_icd build/clgrad compare $mode --devices Oclgrind --timeout "$timeout_s" \
		--out "$work/oclgrind" || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 3 ] || { say "Oclgrind run failed (exit $rc)"; exit 1; }
	reports+=("$work/oclgrind/report.json")
	say "Oclgrind run: $(($(date +%s) - t0)) s"
fi

if [ "${CLGRAD_SKIP_TRIXIE:-0}" = 1 ]; then
	say "Debian 13 root skipped (CLGRAD_SKIP_TRIXIE=1)"
elif [ "$(id -u)" != 0 ]; then
	say "Debian 13 root skipped: needs root (scripts/setup_trixie.sh)"
else
	t0=$(date +%s)
	bash scripts/setup_trixie.sh
	root=${CLGRAD_TRIXIE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/clgrad/trixie-root}
	bash scripts/setup_trixie.sh run bash /src/scripts/compare_all.sh --inside "$mode" "$timeout_s" "$(basename "$work")"
	rm -rf "$work/trixie"
	cp -r "$root/root/$(basename "$work")" "$work/trixie"
	reports+=("$work/trixie/report.json")
	say "Debian 13 run: $(($(date +%s) - t0)) s"
fi

rc=0
build/clgrad compare --merge "${reports[@]}" --out "$out" || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 3 ] || { say "merge failed (exit $rc)"; exit 1; }
rm -f "$out"/device-*.log
if bash scripts/compare_screenshot.sh "$out/report.html" "$out/report.png" 1400 2300; then
	:
else
	say "no screenshot (apt-get install chromium)"
fi
say "done in $(($(date +%s) - start)) s: $out/report.html"
