#!/usr/bin/env bash
# Runs the libFuzzer harnesses of the file readers (tests/fuzz/fuzz_<target>.c, tests/fuzz.cmake)
# for a bounded time each, seeded with the committed corpora, and prints one summary line per target.
#   scripts/fuzz.sh [--seconds N] [--jobs J] [--build BUILD] [--out DIR] [target ...] [-- libFuzzer flags]
#     --seconds N   time per target (default 60)
#     --jobs J      targets fuzzed at once (default 1; one core each)
#     --build BUILD the clang ASan+UBSan+libFuzzer build (default build-fuzz; configured and built
#                   here when needed: -DCMAKE_C_COMPILER=clang -DCLGRAD_SANITIZE=ON -DCLGRAD_FUZZ=ON)
#     --out DIR     outside the repo (default $XDG_CACHE_HOME/clgrad/fuzz, i.e. ~/.cache/clgrad/fuzz):
#                   DIR/<target>/corpus   inputs libFuzzer found (kept: the next run starts from them)
#                   DIR/<target>/findings crashes, leaks, OOMs and timeouts of the latest run
#                   DIR/<target>/log      the latest run's libFuzzer output
#     target        idx csv safetensors cifar text checkpoint tune progcache tokenizer (default: all)
#     -- flags      passed on to every target, after ours (e.g. -- -dict=FILE -rss_limit_mb=512)
# Exits 1 if any target found something (its input is in findings/: replay it with
# BUILD/tests/fuzz_<target> <file>, fix the reader, and add the file to tests/fuzz/corpus/<target>/ so
# that the replay test keeps it fixed; the tally in tests/fuzz.cmake counts it), 2 on a usage or
# build error.
# The whole script is one { } block, parsed before it starts: bash reads a script as it runs it, and
# an edit or a checkout under a long run would make it go on from the wrong offset.
{
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

seconds=60 jobs=1 build=build-fuzz out=${XDG_CACHE_HOME:-$HOME/.cache}/clgrad/fuzz
targets=() extra=()
usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "fuzz.sh: $*" >&2; exit 2; }
posint() { [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "$1 must be a whole number >= 1, got '$2'"; }
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds) [ $# -ge 2 ] || die "--seconds needs a value"; posint --seconds "$2"; seconds=$2; shift 2 ;;
	--seconds=*) posint --seconds "${1#*=}"; seconds=${1#*=}; shift ;;
	--jobs) [ $# -ge 2 ] || die "--jobs needs a value"; posint --jobs "$2"; jobs=$2; shift 2 ;;
	--jobs=*) posint --jobs "${1#*=}"; jobs=${1#*=}; shift ;;
	--build) [ $# -ge 2 ] || die "--build needs a value"; build=$2; shift 2 ;;
	--build=*) build=${1#*=}; shift ;;
	--out) [ $# -ge 2 ] || die "--out needs a value"; out=$2; shift 2 ;;
	--out=*) out=${1#*=}; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; extra=("$@"); break ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) targets+=("${1#fuzz_}"); shift ;;
	esac
done

all=$(sed -n 's/^set(CLG_FUZZ_READERS \(.*\))$/\1/p' tests/fuzz.cmake)
[ -n "$all" ] || die "no CLG_FUZZ_READERS in tests/fuzz.cmake"
[ ${#targets[@]} -gt 0 ] || read -r -a targets <<<"$all"
for t in "${targets[@]}"; do
	[[ " $all " == *" $t "* ]] || die "unknown target '$t' (targets: $all)"
done

# Findings and the grown corpora stay out of the repo (a finding is committed by hand, as a seed).
mkdir -p "$out"
out=$(cd "$out" && pwd)
case "$out/" in "$repo"/*) die "--out must be outside the repo ($out)" ;; esac

# The build: configured here if it is not a libFuzzer build yet, then only the targets asked for.
if ! grep -qs '^CLGRAD_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
	command -v clang >/dev/null || die "clang not found (scripts/setup.sh installs it)"
	echo "fuzz.sh: configuring $build (clang, ASan+UBSan, libFuzzer)"
	cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCLGRAD_SANITIZE=ON -DCLGRAD_FUZZ=ON \
		-DCLGRAD_WERROR=ON >/dev/null || die "configuring $build failed"
fi
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" \
	--target "${targets[@]/#/fuzz_}" >/dev/null || die "building the fuzz targets in $build failed"

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

# One target: libFuzzer writes new inputs into the first corpus folder (ours, out of the repo) and
# only reads the committed seeds. Limits as in tests/fuzz.cmake: inputs of at most max_len bytes,
# a malloc of more than 64 MB is a finding (a reader must size from the file, not from a header).
fuzz_one() {
	local t=$1 dir=$out/$1 maxlen
	maxlen=$(sed -n "s/^set(CLG_FUZZ_MAXLEN_$t \([0-9]*\))$/\1/p" tests/fuzz.cmake)
	mkdir -p "$dir/corpus"
	rm -rf "$dir/findings"
	mkdir -p "$dir/findings"
	"$build/tests/fuzz_$t" -max_total_time="$seconds" -max_len="${maxlen:-4096}" \
		-malloc_limit_mb=64 -rss_limit_mb=2048 -timeout=60 -print_final_stats=1 \
		-artifact_prefix="$dir/findings/" ${extra[@]+"${extra[@]}"} \
		"$dir/corpus" "$repo/tests/fuzz/corpus/$t" \
		>"$dir/log" 2>&1
}

# One line per target from its log: executions (final stats), coverage (the last status line:
# cov = edges, ft = features, corp = corpus size), findings.
summary() {
	local t=$1 rc=$2 dir=$out/$1 execs secs rate cov ft corp n status
	secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$dir/log" | tail -n 1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$dir/log" | tail -n 1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$dir/log" | tail -n 1 | cut -d' ' -f2)
	corp=$(grep -o 'corp: [0-9]*' "$dir/log" | tail -n 1 | cut -d' ' -f2)
	n=$(find "$dir/findings" -type f | wc -l)
	status=ok
	if [ "$n" -gt 0 ] || [ "$rc" -ne 0 ]; then
		status="FOUND (exit $rc): $(find "$dir/findings" -type f | head -n 3 | tr '\n' ' ')see $dir/log"
	fi
	printf 'fuzz: %-11s %9s execs in %ss (%s/s), cov %s, ft %s, corpus %s, findings %d: %s\n' \
		"$t" "${execs:-?}" "${secs:-<$seconds}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$n" "$status"
	[ "$status" = ok ]
}

main() {
	declare -A pid_of=()
	echo "fuzz.sh: ${#targets[@]} target(s) for ${seconds}s each, $jobs at a time; findings under $out"
	failed=0
	reap() { # waits for one target (any), prints its line
		local p t rc=0
		wait -n -p p || rc=$?
		t=${pid_of[$p]}
		unset "pid_of[$p]"
		summary "$t" "$rc" || failed=1
	}
	for t in "${targets[@]}"; do
		[ ${#pid_of[@]} -lt "$jobs" ] || reap
		fuzz_one "$t" &
		pid_of[$!]=$t
	done
	while [ ${#pid_of[@]} -gt 0 ]; do reap; done
	if [ "$failed" -ne 0 ]; then
		echo "fuzz.sh: FINDINGS (see above); each target's input is in its findings folder"
		return 1
	fi
	echo "fuzz.sh: no findings"
}
main
exit
}
