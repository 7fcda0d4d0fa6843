#!/usr/bin/env bash
# Issue 12's row floor (>= 50% of the device's copy bandwidth, forward and backward, at (4096, 64)
# and (1024, 512)) over several rounds: `clgrad bench ops --rows` on each device named, the devices
# (and a "before" binary, when given) alternated round by round, then per op, direction, size and
# device the median and the lowest-highest of the rounds, for both columns bench ops --rows prints:
# the fraction of a copy of the same bytes timed alongside (%copy: the launch cost in both) and of
# the device's 64 MiB copy (%64MiB). PoCL's launch cost moves 20-60 us from run to run on a shared
# VM, so one run says little. Only the device's default kernel shape (bench's '*' lines).
# usage: bench/rows_floor.sh [--devices 1,2] [--rounds N] [--reps R] [--before CLGRAD] [CLGRAD]
# (Intel's CPU runtime beside PoCL: OCL_ICD_VENDORS=... LD_LIBRARY_PATH=..., see docs/VENDORS.md)
set -euo pipefail
cd "$(dirname "$0")/.."
devices=1 rounds=5 reps=100 before="" clgrad=build/clgrad
while [ $# -gt 0 ]; do
	case $1 in
	--devices) devices=$2; shift 2 ;;
	--devices=*) devices=${1#*=}; shift ;;
	--rounds) rounds=$2; shift 2 ;;
	--rounds=*) rounds=${1#*=}; shift ;;
	--reps) reps=$2; shift 2 ;;
	--reps=*) reps=${1#*=}; shift ;;
	--before) before=$2; shift 2 ;;
	--before=*) before=${1#*=}; shift ;;
	-h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "rows_floor.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) clgrad=$1; shift ;;
	esac
done
case $rounds in
''|*[!0-9]*|0) echo "rows_floor.sh: --rounds $rounds: expected a whole number from 1" >&2; exit 2 ;;
esac
[ -x "$clgrad" ] || { echo "rows_floor.sh: $clgrad: not an executable (build first, or name the binary)" >&2; exit 2; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
bins=("$clgrad")
[ -n "$before" ] && bins=("$before" "$clgrad")
for r in $(seq 1 "$rounds"); do
	for dev in ${devices//,/ }; do
		for bin in "${bins[@]}"; do
			label=$([ "$bin" = "$clgrad" ] && echo new || echo before)
			[ -n "$before" ] || label=-
			echo "rows_floor.sh: round $r of $rounds, device $dev, $bin" >&2
			# device line: "device: NAME; row kernels by default: ..."; op lines end in %copy %64MiB
			"$bin" bench ops --rows --device "$dev" --reps "$reps" 2>&1 |
				awk -v dev="$dev" -v label="$label" '
					/^device: / { name = $0; sub(/^device: /, "", name); sub(/;.*/, "", name) }
					/ \* / && NF >= 11 && $1 != "shape" { pc = $(NF - 1); pb = $NF; sub(/%/, "", pc); sub(/%/, "", pb)
						print dev "\t" name "\t" label "\t" $1 "\t" $2 "\t" $3 "\t" pc "\t" pb }' >>"$log"
		done
	done
done
echo "| op | dir | rows | device | binary | %copy median (low-high) | %64MiB median (low-high) |"
echo "|---|---|---|---|---|---|---|"
sort -t $'\t' -k1,1 -k4,6 -k3,3 "$log" | awk -F '\t' '
	function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	function flush(   m1, m2) { if (!n) return; lo1 = c[1]; hi1 = c[1]; lo2 = b[1]; hi2 = b[1]
		for (i = 1; i <= n; i++) { if (c[i] < lo1) lo1 = c[i]; if (c[i] > hi1) hi1 = c[i]; if (b[i] < lo2) lo2 = b[i]; if (b[i] > hi2) hi2 = b[i] }
		m1 = med(c, n); m2 = med(b, n)
		printf "| %s | %s | %s | %s | %s | %g%s (%g-%g) | %g%s (%g-%g) |\n", op, dir, rows, name, label, m1, m1 < 50 ? " **<50**" : "", lo1, hi1, m2, m2 < 50 ? " **<50**" : "", lo2, hi2
		n = 0 }
	{ key = $1 FS $3 FS $4 FS $5 FS $6; if (key != last) { flush(); last = key }
	  name = $2; label = $3; op = $4; dir = $5; rows = $6; n++; c[n] = $7; b[n] = $8 }
	END { flush() }'
