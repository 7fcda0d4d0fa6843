#!/usr/bin/env bash
# The fault-injection walk (issue 18): a 2-epoch `clgrad train --save` run (a checkpoint after each
# epoch) with CLGRAD_FAULT at every build and file write, and at allocations and file reads
# sampled evenly: each run either absorbs the fault (a cache file it cannot read or write) or
# stops with exit status 1 and one line naming the injected failure; never a crash, never a
# torn checkpoint or a temporary file left, and a checkpoint left behind resumes.
# Sampling (to stay under a minute): 6 allocations and 2 reads, every STRIDE-th event from a random offset (printed; set
# FAULT_WALK_OFFSET to repeat a run, FAULT_WALK_FULL=1 to walk every event, minutes).
# usage: test_fault_walk.sh CLGRAD_BINARY
set -u
clgrad=$1
. "$(dirname "$0")/test_common.sh"
need_fashion_mnist
first_opencl_device "$clgrad"
t_workdir
export CLGRAD_CACHE_DIR=$work/cache # warmed by the counting run: the counts repeat
run=(train --model mlp --limit 200 --batch 50 --device "$dev" --data "$data" --epochs 2)
t0=$(date +%s)

# a whole checkpoint: its header's tensors end where the file ends
whole() {
	python3 -c 'import json,struct,sys
b=open(sys.argv[1],"rb").read(); n=struct.unpack("<Q",b[:8])[0]; h=json.loads(b[8:8+n])
end=max([v["data_offsets"][1] for k,v in h.items() if k!="__metadata__"] or [0])
sys.exit(0 if 8+n+end==len(b) else 1)' "$1"
}

"$clgrad" "${run[@]}" --save "$work/warm.safetensors" > "$work/out" 2>&1 || { cat "$work/out"; fail "warm-up run"; }
CLGRAD_FAULT=count "$clgrad" "${run[@]}" --save "$work/counted.safetensors" > "$work/out" 2>&1 ||
	{ cat "$work/out"; fail "counting run"; }
read -r allocs builds reads writes < <(sed -n 's/.*: \([0-9]*\) buffer allocations, [0-9]* enqueues, \([0-9]*\) builds, \([0-9]*\) file reads, \([0-9]*\) file writes so far (at exit)/\1 \2 \3 \4/p' "$work/out")
[ -n "${writes:-}" ] && [ "$allocs" -gt 10 ] && [ "$builds" -ge 1 ] && [ "$writes" -ge 2 ] ||
	{ cat "$work/out"; fail "no tallies (two checkpoints, one build and some allocations expected)"; }
astride=$(( (allocs + 5) / 6 )) rstride=$(( (reads + 1) / 2 ))
[ "${FAULT_WALK_FULL:-0}" = 1 ] && astride=1 rstride=1
off=${FAULT_WALK_OFFSET:-$((RANDOM % astride))}
echo "the run: $allocs allocations, $builds builds, $reads file reads, $writes file writes;" \
	"walking every build and write, allocations $((off + 1)), $((off + 1 + astride)), ... (FAULT_WALK_OFFSET=$off), every ${rstride}th read"
faults=()
for ((n = 1; n <= builds; n++)); do faults+=("build:$n"); done
for ((n = 1; n <= writes; n++)); do faults+=("write:$n"); done
for ((n = off % astride + 1; n <= allocs; n += astride)); do faults+=("alloc:$n"); done
for ((n = off % rstride + 1; n <= reads; n += rstride)); do faults+=("read:$n"); done

absorbed=0 stopped=0
for f in "${faults[@]}"; do
	rm -f "$work"/ck.*
	# without the workload's program list only the default programs are precompiled (a failed
	# build there is left to the first use, which builds it again): the others where an op needs them
	case $f in build:*) rm -f "$CLGRAD_CACHE_DIR"/programs-*.txt ;; esac
	CLGRAD_FAULT=$f "$clgrad" "${run[@]}" --save "$work/ck.safetensors" > "$work/f.out" 2> "$work/f.err"
	rc=$?
	ls "$work" | grep -q '\.tmp\.' && fail "CLGRAD_FAULT=$f left a temporary file: $(ls "$work")"
	ls "$CLGRAD_CACHE_DIR" | grep -q '\.tmp\.' && fail "CLGRAD_FAULT=$f left a temporary file in the cache"
	if [ -e "$work/ck.safetensors" ]; then
		whole "$work/ck.safetensors" || fail "CLGRAD_FAULT=$f left a torn checkpoint"
	fi
	if [ $rc -eq 0 ]; then
		[ -e "$work/ck.safetensors" ] || fail "CLGRAD_FAULT=$f: success, but no checkpoint"
		absorbed=$((absorbed + 1))
		continue
	fi
	[ $rc -eq 1 ] || { cat "$work/f.err"; fail "CLGRAD_FAULT=$f: exit status $rc (a crash?), not 1"; }
	[ "$(wc -l < "$work/f.err")" -eq 1 ] || { cat "$work/f.err"; fail "CLGRAD_FAULT=$f: not one line on stderr"; }
	grep -q "^clgrad train: .*\[injected by CLGRAD_FAULT\]" "$work/f.err" ||
		{ cat "$work/f.err"; fail "CLGRAD_FAULT=$f: the error does not name the injected failure"; }
	stopped=$((stopped + 1))
	echo "ok: CLGRAD_FAULT=$f: $(cut -c1-160 "$work/f.err")"
	# the checkpoint of the first epoch, when the second failed: the next run resumes from it
	case $f in write:2|alloc:$((off % astride + 1 + 5 * astride)))
		if [ -e "$work/ck.safetensors" ]; then
			"$clgrad" "${run[@]}" --resume "$work/ck.safetensors" --save "$work/ck.safetensors" > "$work/r.out" 2>&1 ||
				{ cat "$work/r.out"; fail "after CLGRAD_FAULT=$f the next run does not resume"; }
			whole "$work/ck.safetensors" || fail "the resumed run's checkpoint is torn"
			echo "ok: after CLGRAD_FAULT=$f the next run resumed from the first epoch's checkpoint"
		fi ;;
	esac
done
[ $stopped -ge $((1 + writes)) ] || fail "no build at first use or a checkpoint write fault was absorbed"
for bad in build:0 nonsense:3; do
	CLGRAD_FAULT=$bad "$clgrad" "${run[@]}" > "$work/f.out" 2>&1 && fail "CLGRAD_FAULT=$bad accepted"
	grep -q "CLGRAD_FAULT='$bad'" "$work/f.out" || { cat "$work/f.out"; fail "CLGRAD_FAULT=$bad: not named"; }
done
echo "walk: ${#faults[@]} faults, $stopped stopped the run with the error, $absorbed absorbed; no crash, no torn file," \
	"$(( $(date +%s) - t0 )) s"
