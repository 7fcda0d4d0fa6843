#!/usr/bin/env bash
# The gradient exchange on simulated hosts (scripts/netns_hosts.sh): exchange time a step and the
# bytes each rank's link carries a step, for --exchange root, --exchange allreduce and
# --shard-optimizer at N = 2, 3, 4 ranks and two links (10 Gbit/s, 1 Gbit/s token buckets, plus
# 100 us of delay where the kernel has sch_netem). The model is `clgrad bench exchange`'s one layer
# of 669,696 float32 parameters (the MLP's 2.68 MB of gradients). Bytes come from each host's veth
# counters: a run of LONG steps minus one of SHORT steps, over LONG - SHORT (MPI's start-up, the
# first broadcast and the epoch's checksum cancel out). Run as root, by hand (minutes):
#   bench/netns_exchange.sh BUILD/clgrad [OUT.tsv]
# Prints a markdown table; OUT.tsv (default netns_exchange.tsv) gets the rows. INT8=1: the gradients
# int8-compressed; LINKS="1gbit 100us" (pairs of rate and delay), NS="2 3" and KINDS="root sharded"
# choose the cases.
set -u
clgrad=${1:?usage: bench/netns_exchange.sh CLGRAD_BINARY [OUT.tsv]}
out=${2:-netns_exchange.tsv}
hosts=$(dirname "$0")/../scripts/netns_hosts.sh
short=${SHORT:-4} long=${LONG:-16} params=${PARAMS:-669706}
dev=$("$clgrad" devices --json | python3 -c 'import json,sys; print(next((d["index"] for d in json.load(sys.stdin)["devices"] if d["type"] in ("cpu","gpu","accelerator")), 0))')
export POCL_MAX_PTHREAD_COUNT=${POCL_MAX_PTHREAD_COUNT:-1} CLGRAD_SELFTEST=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'link\tranks\texchange\tms_per_step\trank0_bytes_per_step\tmax_rank_bytes_per_step\tmodel_link_bytes\toptimizer_state_bytes\n' > "$out"
echo "| link | N | exchange | exchange ms/step | rank 0 link bytes/step (measured) | busiest rank | by the algorithm's count | optimizer state/rank |"
echo "|---|---|---|---|---|---|---|---|"
kinds=${KINDS:-root allreduce sharded} comp=()
[ "${INT8:-0}" = 1 ] && comp=(--compress int8)
links=${LINKS:-10gbit 100us 1gbit 100us}
set -- $links
pairs=()
while [ $# -ge 2 ]; do pairs+=("$1 $2"); shift 2; done
for link in "${pairs[@]}"; do
	set -- $link
	rate=$1 delay=$2
	for np in ${NS:-2 3 4}; do
		for kind in $kinds; do
			args=(--exchange "$kind")
			[ "$kind" = sharded ] && args=(--shard-optimizer)
			for steps in "$short" "$long"; do
				bash "$hosts" --np "$np" --rate "$rate" --delay "$delay" --tag clgb --timeout 300 \
					--stats "$work/stats$steps" -- "$clgrad" bench exchange --mpi --devices "$dev" \
					--sizes "$params" --steps "$steps" "${args[@]}" "${comp[@]}" > "$work/out$steps" 2> "$work/err$steps" ||
					{ cat "$work/out$steps" "$work/err$steps"; echo "FAIL: $rate N=$np $kind"; exit 1; }
			done
			python3 - "$work" "$short" "$long" "$rate" "$np" "$kind" "$out" <<'PY'
import sys
work, short, long_, rate, np_, kind, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:]
def stats(steps):
    return [int(l.split()[1]) + int(l.split()[2]) for l in open(f"{work}/stats{steps}")]
a, b = stats(short), stats(long_)
per = [(y - x) / (long_ - short) for x, y in zip(a, b)]
row = next(l.split() for l in open(f"{work}/out{long_}") if l.split() and l.split()[0].isdigit())
ms, link, state = float(row[2]), float(row[4]), float(row[5])
kind += " int8" if "int8" in open(f"{work}/out{long_}").readline() else ""
print(f"| {rate} | {np_} | {kind} | {ms:.1f} | {per[0]/1e6:.2f} MB | {max(per)/1e6:.2f} MB | {link/1e6:.2f} MB | {state/1e6:.2f} MB |")
with open(out, "a") as f:
    f.write(f"{rate}\t{np_}\t{kind}\t{ms:.3f}\t{per[0]:.0f}\t{max(per):.0f}\t{link:.0f}\t{state:.0f}\n")
PY
		done
	done
done
