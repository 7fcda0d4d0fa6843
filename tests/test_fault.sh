#!/usr/bin/env bash
# Fault injection (CLGRAD_FAULT, backend/opencl/cl_fault.c): a resumed `clgrad train` whose Nth
# device buffer allocation or Nth enqueue fails (first, middle, last: the last falls in the
# checkpoint's save) stops with exit status 1 and one error that names the op, the device, the
# shapes where an op failed, and the OpenCL error; the checkpoint it would have replaced is
# byte-for-byte what it was, and no temporary file is left. A bad CLGRAD_FAULT fails the open.
# usage: test_fault.sh CLGRAD_BINARY
set -u
clgrad=$1
. "$(dirname "$0")/test_common.sh"
need_fashion_mnist
first_opencl_device "$clgrad"
t_workdir
run=(train --model mlp --limit 200 --batch 50 --device "$dev" --data "$data")

"$clgrad" "${run[@]}" --epochs 1 --save "$work/ck.safetensors" > "$work/first.out" 2>&1 ||
	{ cat "$work/first.out"; fail "first epoch"; }
cp "$work/ck.safetensors" "$work/orig.safetensors"
# the tallies of the resumed run, to aim at its first, middle and last events
CLGRAD_FAULT=count "$clgrad" "${run[@]}" --epochs 2 --resume "$work/ck.safetensors" --save "$work/counted.safetensors" \
	> "$work/count.out" 2>&1 || { cat "$work/count.out"; fail "counting run"; }
read -r allocs enqueues < <(sed -n 's/.*CLGRAD_FAULT=count: \([0-9]*\) buffer allocations, \([0-9]*\) enqueues.*/\1 \2/p' \
	"$work/count.out" | tail -1)
[ -n "${allocs:-}" ] && [ "$allocs" -gt 2 ] && [ "$enqueues" -gt 2 ] || { cat "$work/count.out"; fail "no tallies"; }
echo "the resumed run: $allocs buffer allocations, $enqueues enqueues"

# an allocation of the loader's prefetch (each batch's x and y; the last ones prefetch the last
# batch) is prepared again after a failure: such a fault may be absorbed, and then the run must end
# as the counted one did. Of three allocations in a row in the middle, at least one is not the
# loader's, so at least one of them must stop the run with the error.
mid=$((allocs / 2)) mid_errors=0
for f in alloc:1 alloc:$mid? alloc:$((mid + 1))? alloc:$((mid + 2))? alloc:$allocs? enqueue:1 enqueue:$((enqueues / 2)) \
	enqueue:$((enqueues - 1)) enqueue:$enqueues; do
	may_absorb=0
	case $f in *\?) f=${f%?}; may_absorb=1 ;; esac
	cp "$work/orig.safetensors" "$work/ck.safetensors"
	CLGRAD_FAULT=$f "$clgrad" "${run[@]}" --epochs 2 --resume "$work/ck.safetensors" --save "$work/ck.safetensors" \
		> "$work/f.out" 2> "$work/f.err"
	rc=$?
	if [ $rc -eq 0 ] && [ $may_absorb -eq 1 ]; then
		cmp -s "$work/ck.safetensors" "$work/counted.safetensors" ||
			fail "CLGRAD_FAULT=$f was absorbed, but the checkpoint differs from the run without a fault"
		echo "ok: CLGRAD_FAULT=$f: absorbed by a retry, the same checkpoint as without it"
		continue
	fi
	[ $rc -eq 1 ] || { cat "$work/f.out" "$work/f.err"; fail "CLGRAD_FAULT=$f: exit status $rc, not 1"; }
	[ "$(wc -l < "$work/f.err")" -eq 1 ] || { cat "$work/f.err"; fail "CLGRAD_FAULT=$f: not one line on stderr"; }
	msg=$(cat "$work/f.err")
	for want in "clgrad train: " "op '" "on device '" "[injected by CLGRAD_FAULT]" "(CL_"; do
		case $msg in *"$want"*) ;; *) fail "CLGRAD_FAULT=$f: '$want' not in: $msg" ;; esac
	done
	case $f in # a failed kernel names its shapes; a failed allocation its tensor's, or the op's whose scratch it was
	alloc:*) case $msg in *"tensor ("*") "*": op 'alloc'"*|*"dst ("*": op 'alloc'"*) ;; *) fail "no tensor shape: $msg" ;; esac ;;
	enqueue:$((enqueues / 2))) case $msg in *"dst ("*") float32"*) ;; *) fail "no op shapes: $msg" ;; esac ;;
	esac
	cmp -s "$work/ck.safetensors" "$work/orig.safetensors" || fail "CLGRAD_FAULT=$f changed the checkpoint"
	ls "$work" | grep -q '\.tmp\.' && fail "CLGRAD_FAULT=$f left a temporary file: $(ls "$work")"
	case $f in alloc:$mid|alloc:$((mid + 1))|alloc:$((mid + 2))) mid_errors=$((mid_errors + 1)) ;; esac
	echo "ok: CLGRAD_FAULT=$f: $msg"
done
[ $mid_errors -ge 1 ] || fail "allocations $mid..$((mid + 2)) all absorbed: no mid-run allocation failure reached the error path"
# one past the last event: nothing fails, the run saves what the counted run saved
cp "$work/orig.safetensors" "$work/ck.safetensors"
CLGRAD_FAULT=enqueue:$((enqueues + 1)) "$clgrad" "${run[@]}" --epochs 2 --resume "$work/ck.safetensors" \
	--save "$work/ck.safetensors" > "$work/f.out" 2>&1 || { cat "$work/f.out"; fail "enqueue:$((enqueues + 1)) failed"; }
cmp -s "$work/ck.safetensors" "$work/counted.safetensors" || fail "the run past the last event saved another checkpoint"
for bad in bogus alloc:0 enqueue:x alloc:-1; do
	CLGRAD_FAULT=$bad "$clgrad" "${run[@]}" --epochs 1 > "$work/f.out" 2>&1 && fail "CLGRAD_FAULT=$bad accepted"
	grep -q "CLGRAD_FAULT='$bad'" "$work/f.out" || { cat "$work/f.out"; fail "CLGRAD_FAULT=$bad: not named"; }
done
echo "faults: every injected failure stopped training with its op, device and OpenCL error; the checkpoint kept"
