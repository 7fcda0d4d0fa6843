#!/usr/bin/env bash
# MPI ranks on simulated hosts (scripts/netns_hosts.sh: a network namespace each, veth pairs to a
# bridge, 10 Gbit/s token buckets both ways, Open MPI over TCP on those links only), a tiny MLP run:
# - at N = 2 and 3, --exchange allreduce gives --exchange root's losses within 1e-6 relative, with
#   identical replicas, and int8 over all-reduce gives int8 over root's;
# - a rank killed at its 3rd collective ends the job with an error naming it, within 30 s;
# - no namespace, link or process of the run is left behind (after the kill too).
# Skipped (77) where namespaces cannot be made (not root, no iproute2) or MPI or the data is missing.
# usage: test_netns_hosts.sh CLGRAD_BINARY SOURCE_DIR
set -u
clgrad=$1
hosts=$2/scripts/netns_hosts.sh
data=/usr/share/datasets/fashion-mnist
[ -e "$data/train-images-idx3-ubyte.gz" ] || { echo "Fashion-MNIST not installed: skipped"; exit 77; }
command -v mpirun > /dev/null || { echo "mpirun missing: skipped"; exit 77; }
"$clgrad" train --mpi --help > /dev/null 2>&1 || { echo "clgrad built without MPI: skipped"; exit 77; }
work=$(mktemp -d)
tag=clgt$$ # names of this run's namespaces and bridge
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
dev=$("$clgrad" devices --json | python3 -c 'import json,sys; print(next((d["index"] for d in json.load(sys.stdin)["devices"] if d["type"] in ("cpu","gpu","accelerator")), ""))')
[ -n "$dev" ] || { echo "no OpenCL device present: skipped"; exit 77; }
export POCL_MAX_PTHREAD_COUNT=1 CLGRAD_SELFTEST=0
# a marker every run's process inherits (and the test's own do not): one still carrying it after
# a run was left behind
marker=$work/cache
common=(--model mlp --limit 480 --batch 120 --seed 5 --epochs 1 --lr 0.002)
run() { # run NAME NP ARGS...
	local name=$1 np=$2
	shift 2
	CLGRAD_CACHE_DIR=$marker bash "$hosts" --np "$np" --rate 10gbit --tag "$tag" --timeout 60 -- "$clgrad" train --mpi --devices "$dev" "$@" \
		--log "$work/$name.jsonl" > "$work/$name.out" 2>&1
	local rc=$?
	[ "$rc" = 77 ] && { cat "$work/$name.out"; echo "namespaces cannot be made here: skipped"; exit 77; }
	[ "$rc" = 0 ] || { cat "$work/$name.out"; fail "$name (exit $rc)"; }
}
left_behind() { # namespaces, links or processes of this run still there
	ip netns list | grep -q "^$tag" && echo "namespace: $(ip netns list | grep "^$tag" | tr '\n' ' ')"
	ip link show | grep -q "$tag" && echo "link: $(ip -o link show | grep "$tag" | cut -d: -f2 | tr '\n' ' ')"
	grep -l "CLGRAD_CACHE_DIR=$marker" /proc/[0-9]*/environ 2> /dev/null |
		sed 's|/proc/\([0-9]*\)/environ|process \1|'
}
run root2 2 "${common[@]}" --exchange root
run ar2 2 "${common[@]}" --exchange allreduce
run root3 3 "${common[@]}" --exchange root --compress int8
run ar3 3 "${common[@]}" --compress int8 # allreduce: the default from 3 ranks on
python3 - "$work" <<'PY' || exit 1
import json, sys
work = sys.argv[1]
def log(name): return [json.loads(l) for l in open(f"{work}/{name}.jsonl")][0]
for root, ar in (("root2", "ar2"), ("root3", "ar3")):
    r, a = log(root), log(ar)
    assert (r["exchange"], a["exchange"]) == ("root", "allreduce"), (r["exchange"], a["exchange"])
    for key in ("train_loss", "test_loss"):
        if abs(a[key] - r[key]) > 1e-6 * abs(r[key]):
            sys.exit(f"FAIL: {ar} {key} {a[key]!r} vs {root} {r[key]!r}")
    if not (r["replicas_identical"] and a["replicas_identical"]):
        sys.exit(f"FAIL: {root} or {ar}: replicas differ")
    print(f"{a['ranks']} simulated hosts, {a['compress']}: allreduce test loss {a['test_loss']!r}, root {r['test_loss']!r}")
PY
left=$(left_behind)
[ -z "$left" ] || fail "left behind after the runs: $left"
# rank 1 killed at its 3rd collective; --mpi-timeout 20: the others must not wait longer than that
start=$(date +%s)
CLGRAD_TEST_MPI_DIE=1:3 CLGRAD_CACHE_DIR=$marker bash "$hosts" --np 2 --rate 10gbit --tag "$tag" --timeout 60 -- "$clgrad" train --mpi \
	--devices "$dev" "${common[@]}" --mpi-timeout 20 > "$work/die.out" 2>&1 && fail "a dead rank went unnoticed"
took=$(( $(date +%s) - start ))
[ "$took" -lt 30 ] || { cat "$work/die.out"; fail "the job took ${took} s to end after a rank died"; }
# mpirun names the rank and its signal, or a surviving rank says it got no answer
grep -qi "exited on signal\|no answer" "$work/die.out" || { cat "$work/die.out"; fail "no clear message for the dead rank"; }
grep -q "ran past" "$work/die.out" && { cat "$work/die.out"; fail "the job ended by the watchdog, not by the dead rank"; }
echo "dead rank: the job ended after ${took} s: $(grep -i -m1 'exited on signal\|no answer' "$work/die.out")"
left=$(left_behind)
[ -z "$left" ] || fail "left behind after the dead rank: $left"
echo "test_netns_hosts: passed (nothing left behind)"
