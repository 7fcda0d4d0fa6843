#!/usr/bin/env bash
# Simulated hosts for MPI: N network namespaces (and UTS namespaces: a host name each), each joined
# by a veth pair to one bridge, with a `tc` limit on each host's link (both ways), and Open MPI over TCP on
# those links only; runs one mpirun command across them and always cleans up (namespaces, links,
# every process left in them), also when the command fails, times out or is interrupted.
#
# usage: scripts/netns_hosts.sh [--np N] [--rate RATE] [--delay DELAY] [--timeout S] [--tag TAG]
#                               [--stats FILE] -- PROGRAM ARGS...
#   --np N       hosts, one rank each [2]
#   --rate RATE  each host's egress limit as tc takes it (10gbit, 1gbit; "none": unlimited) [10gbit]
#   --delay D    one-way delay added to each host's egress (100us; needs the kernel's sch_netem;
#                without it the delay is left out and a line says so) [none]
#   --timeout S  the whole mpirun ends after S seconds (exit 124) [120]
#   --tag TAG    names: TAG0.. for namespaces, TAGbr for the bridge (several runs at once) [clgns]
#   --stats FILE per host, the bytes its link sent and received during the run (TSV: host, tx, rx)
#   PROGRAM runs under `mpirun -np N` with one rank per host; every CLGRAD_*, POCL_*, OCL_* and
#   OMPI_MCA_* variable of the caller's environment goes with it (mpirun -x).
# Exit status: the command's; 77 when namespaces cannot be made here (not root, no iproute2, no
# veth or bridge support), with the reason on stderr.
set -u
np=2 rate=10gbit delay= limit=120 tag=clgns stats=
while [ $# -gt 0 ]; do
	case $1 in
	--np) np=$2; shift 2 ;;
	--rate) rate=$2; shift 2 ;;
	--delay) delay=$2; shift 2 ;;
	--timeout) limit=$2; shift 2 ;;
	--tag) tag=$2; shift 2 ;;
	--stats) stats=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "netns_hosts.sh: unknown option '$1' (see the header of $0)" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || { echo "netns_hosts.sh: no program after --" >&2; exit 2; }
case $np in '' | *[!0-9]*) echo "netns_hosts.sh: --np must be a number of hosts in [1, 200], not '$np'" >&2; exit 2 ;; esac
[ "$np" -ge 1 ] && [ "$np" -le 200 ] || { echo "netns_hosts.sh: --np must be in [1, 200], not $np" >&2; exit 2; }
skip() { echo "netns_hosts.sh: skipped: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip > /dev/null || skip "no 'ip' (install iproute2: scripts/setup.sh does)"
command -v tc > /dev/null || skip "no 'tc' (install iproute2: scripts/setup.sh does)"
command -v mpirun > /dev/null || skip "no mpirun (Open MPI)"
command -v unshare > /dev/null || skip "no unshare (util-linux)"

net=10.77.$(( $(printf '%s' "$tag" | cksum | cut -d' ' -f1) % 200 + 20 ))
bridge=${tag}br
work=$(mktemp -d)
made=() # namespaces made, for the cleanup
mpirun_pid=

cleanup() {
	local pids
	trap - EXIT INT TERM
	[ -n "$mpirun_pid" ] && kill -KILL "$mpirun_pid" 2> /dev/null
	for ns in "${made[@]}"; do # every process still in a namespace of ours, by its id
		pids=$(ip netns pids "$ns" 2> /dev/null)
		[ -n "$pids" ] && kill -KILL $pids 2> /dev/null
	done
	for ns in "${made[@]}"; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do # the kills take a moment to land
			[ -z "$(ip netns pids "$ns" 2> /dev/null)" ] && break
			sleep 0.1
		done
		ip netns del "$ns" 2> /dev/null
	done
	ip link del "$bridge" 2> /dev/null
	# the host ends of the veth pairs go with their namespace, but the kernel removes them a moment
	# later (while a killed rank's last process still exits): delete them and wait until they are gone
	for _ in $(seq 1 30); do
		links=$(ip -o link show 2> /dev/null | grep -o "${tag}v[0-9]*" | sort -u)
		[ -z "$links" ] && break
		for l in $links; do ip link del "$l" 2> /dev/null; done
		sleep 0.1
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ip link add "$bridge" type bridge 2> "$work/err" || skip "cannot make a bridge: $(cat "$work/err")"
ip addr add "$net.254/24" dev "$bridge" && ip link set "$bridge" up || exit 1
netem=1
for ((i = 0; i < np; i++)); do
	ns=$tag$i
	ip netns add "$ns" 2> "$work/err" || skip "cannot make a network namespace: $(cat "$work/err")"
	made+=("$ns")
	ip link add "${tag}v$i" type veth peer name eth0 netns "$ns" 2> "$work/err" ||
		skip "cannot make a veth pair: $(cat "$work/err")"
	ip link set "${tag}v$i" master "$bridge" up
	ip -n "$ns" addr add "$net.$((i + 1))/24" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" link set lo up
	# the host's ingress (the bridge side's egress: a full-duplex NIC limits both ways), then its egress:
	# netem for the delay (and the rate), else a token bucket for the rate alone
	if [ "$rate" != none ]; then
		tc qdisc add dev "${tag}v$i" root tbf rate "$rate" burst 256kb latency 50ms ||
			{ echo "netns_hosts.sh: tc refused rate '$rate'" >&2; exit 1; }
	fi
	if [ -n "$delay" ] && [ "$netem" = 1 ]; then
		if ip netns exec "$ns" tc qdisc add dev eth0 root netem delay "$delay" \
			$([ "$rate" != none ] && echo rate "$rate") limit 100000 2> "$work/err"; then
			continue
		fi
		echo "netns_hosts.sh: no delay: $(head -1 "$work/err") (this kernel lacks sch_netem); the rate alone" >&2
		netem=0
	fi
	if [ "$rate" != none ]; then
		ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "$rate" burst 256kb latency 50ms ||
			{ echo "netns_hosts.sh: tc refused rate '$rate'" >&2; exit 1; }
	fi
done

# Open MPI's launcher reaches each host through this agent (in place of ssh): the daemon runs in
# the host's namespaces, named as the host
cat > "$work/agent" << EOF
#!/bin/sh
host=\$1
shift
exec ip netns exec "\$host" unshare --uts sh -c 'hostname "\$0" && exec sh -c "\$*"' "\$host" "\$@"
EOF
chmod +x "$work/agent"
for ((i = 0; i < np; i++)); do echo "$tag$i slots=1"; done > "$work/hosts"
envs=()
for v in $(env | sed -n 's/^\(\(CLGRAD\|POCL\|OCL\|OMPI_MCA\)_[A-Za-z0-9_]*\)=.*/\1/p'); do
	envs+=(-x "$v")
done
envs+=(-x PATH)
[ -n "${LD_LIBRARY_PATH:-}" ] && envs+=(-x LD_LIBRARY_PATH)
for ((i = 0; i < np; i++)); do # the links' counters before
	ip netns exec "$tag$i" cat /sys/class/net/eth0/statistics/tx_bytes /sys/class/net/eth0/statistics/rx_bytes \
		> "$work/before$i"
done
began=$(date +%s)
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	timeout -k 5 "$limit" mpirun --allow-run-as-root -np "$np" --hostfile "$work/hosts" --map-by node \
	--mca plm_rsh_agent "$work/agent" --mca btl self,tcp --mca btl_tcp_if_include "$net.0/24" \
	--mca oob_tcp_if_include "$net.0/24" --mca pml ob1 "${envs[@]}" "$@" &
mpirun_pid=$!
wait "$mpirun_pid"
rc=$?
mpirun_pid=
# 124: timeout ended it; 137 is also what mpirun returns when a rank was killed, so the clock decides
if [ "$rc" = 124 ] || { [ "$rc" = 137 ] && [ $(($(date +%s) - began)) -ge "$limit" ]; }; then
	echo "netns_hosts.sh: mpirun ran past ${limit} s: ended" >&2
	rc=124
fi
if [ -n "$stats" ]; then
	: > "$stats"
	for ((i = 0; i < np; i++)); do
		read -r tx0 < <(sed -n 1p "$work/before$i")
		read -r rx0 < <(sed -n 2p "$work/before$i")
		tx1=$(ip netns exec "$tag$i" cat /sys/class/net/eth0/statistics/tx_bytes)
		rx1=$(ip netns exec "$tag$i" cat /sys/class/net/eth0/statistics/rx_bytes)
		printf '%s\t%s\t%s\n' "$tag$i" $((tx1 - tx0)) $((rx1 - rx0)) >> "$stats"
	done
fi
exit "$rc"
