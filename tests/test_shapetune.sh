#!/bin/bash
# Kernel shapes measured by `clgrad tune` (backend/opencl/cl_tune_kshape.c, `kshape` lines of the
# tune file, applied at device open through clg_backend_set_kernel_shape):
#   - a short tune stores kshape lines; a second process applies them ("measured by clgrad tune");
#   - CLGRAD_KERNEL_SHAPE overrides a stored shape; CLGRAD_TUNE=0 ignores it;
#   - a kshape line changed after the fact breaks the checksum: the file is ignored;
#   - a hand-written valid file forcing the non-default shape of row (and reduce) makes
#     `clgrad bench ops` run and report row=gpu with the measured reason;
#   - a kshape line naming no family is rejected even with a valid checksum.
# usage: test_shapetune.sh <clgrad>. Exit 77 (skipped) without an OpenCL device.
clgrad=$1
fail=0
unset CLGRAD_DEVICE CLGRAD_KERNEL_DIR CLGRAD_KERNEL_SHAPE CLGRAD_TUNE CLGRAD_DEBUG
dir=$(mktemp -d) && out=$(mktemp) && err=$(mktemp) || exit 1
trap 'rm -rf "$dir" "$out" "$err"' EXIT

check() { # description, status (0 = ok)
	if [ "$2" -ne 0 ]; then
		echo "FAILED: $1" >&2
		echo "--- stdout:" >&2; tail -n 40 "$out" >&2
		echo "--- stderr:" >&2; tail -n 40 "$err" >&2
		fail=1
	else
		echo "ok: $1"
	fi
}

if ! "$clgrad" devices 2>/dev/null | grep -qi "opencl\|cpu\|gpu"; then
	echo "no OpenCL device: skipped"
	exit 77
fi
export CLGRAD_CACHE_DIR=$dir

# 15 s: the shape step gets 0.4 of it, and Intel's runtime builds the row program cold in up to 2.6 s
"$clgrad" tune --budget 15 --shapes small >"$out" 2>"$err"; rc=$?
check "clgrad tune --budget 15 --shapes small exits 0 (got $rc)" $rc
file=$(ls "$dir"/tune-*.txt 2>/dev/null | head -n 1)
[ -n "$file" ]; check "the tune file exists" $?
grep -q "] kernel shape row, .*: cpu [0-9]* us, gpu [0-9]* us" "$out"; check "the tuner reports both shapes of row" $?
n=$(grep -c "^kshape \(row\|reduce\|fused\|conv\|attention\) \(cpu\|gpu\) [0-9.]* [0-9.]*$" "$file")
[ "$n" -ge 4 ]; check "the tune file holds kshape lines ($n)" $?
fam=$(sed -n 's/^kshape \([a-z]*\) \([a-z]*\) .*/\1/p' "$file" | head -n 1)
shp=$(sed -n 's/^kshape \([a-z]*\) \([a-z]*\) .*/\2/p' "$file" | head -n 1)

"$clgrad" tune --status >"$out" 2>"$err"
grep -q "^kernel shape $fam: $shp (measured by clgrad tune: $shp [0-9]* us vs " "$out"
check "a second process applies the stored $fam=$shp with the measured reason" $?
other=$([ "$shp" = gpu ] && echo cpu || echo gpu)
CLGRAD_KERNEL_SHAPE=$fam=$other "$clgrad" tune --status >"$out" 2>"$err"
grep -q "^kernel shape $fam: $other (CLGRAD_KERNEL_SHAPE)" "$out"; check "CLGRAD_KERNEL_SHAPE overrides the stored shape" $?
CLGRAD_TUNE=0 "$clgrad" tune --status >"$out" 2>"$err"
! grep -q "measured by clgrad tune" "$out"; check "CLGRAD_TUNE=0 ignores the stored shapes" $?

# one kshape line changed: a well-formed line, but not the bytes the checksum covers
cp "$file" "$dir/good"
sed -i "s/^kshape $fam $shp /kshape $fam $other /" "$file"
cmp -s "$file" "$dir/good"; [ $? -ne 0 ]; check "(the test changed a kshape line)" $?
CLGRAD_DEBUG=1 "$clgrad" tune --status >"$out" 2>"$err"
grep -q "ignoring $file (checksum mismatch)" "$err"; check "a corrupted kshape line: the file is ignored" $?
! grep -q "measured by clgrad tune" "$out"; check "and no stored shape is applied" $?

python3 - "$dir/good" "$dir/forced" "$dir/badfam" <<'EOF' || check "python3 wrote the test tune files" 1
import sys
def fnv(b):
    h = 0xcbf29ce484222325
    for c in b:
        h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return h
def write(path, lines):
    body = "".join(l + "\n" for l in lines).encode()
    open(path, "wb").write(body + b"end %016x\n" % fnv(body))
good = open(sys.argv[1]).read().splitlines()
head = [l for l in good if l.split(" ")[0] in ("clgrad-tune", "platform", "platform_version", "device", "driver")]
write(sys.argv[2], head + ["kshape row gpu 500.0 100.0", "kshape reduce cpu 123.0 456.0"])
write(sys.argv[3], head + ["kshape rows gpu 500.0 100.0"])
EOF
cp "$dir/forced" "$file"
"$clgrad" bench ops --reps 1 >"$out" 2>"$err"; rc=$?
check "clgrad bench ops with a tune file forcing row=gpu exits 0 (got $rc)" $rc
grep -q "^kernel shape row=gpu (measured by clgrad tune: gpu 100 us vs cpu 500 us)" "$out"
check "bench ops reports row=gpu with the measured reason" $?
grep -q "^kernel shape reduce=cpu (measured by clgrad tune: cpu 123 us vs gpu 456 us)" "$out"
check "bench ops reports reduce=cpu with the measured reason" $?
grep -q "^softmax .* row=gpu " "$out"; check "softmax runs in the stored row=gpu shape" $?
CLGRAD_KERNEL_SHAPE=cpu "$clgrad" tune --status >"$out" 2>"$err"
grep -q "^kernel shape row: cpu (CLGRAD_KERNEL_SHAPE)" "$out"; check "CLGRAD_KERNEL_SHAPE=cpu overrides the stored row=gpu" $?

cp "$dir/badfam" "$file"
CLGRAD_DEBUG=1 "$clgrad" tune --status >"$out" 2>"$err"
grep -q "ignoring $file (bad kshape line)" "$err"; check "a kshape line naming no family is rejected" $?

exit $fail
