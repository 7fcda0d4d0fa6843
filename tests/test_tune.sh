#!/bin/bash
# GEMM tuning (backend/clg_tune.h, `clgrad tune`) and `clgrad bench gemm --json`:
#   - a short `clgrad tune` on an OpenCL device writes the tune file; a second process applies it;
#   - a corrupt, a foreign and a garbage tune file are each ignored with a CLGRAD_DEBUG message,
#     and GEMM stays right (clgrad smoke checks it against the reference backend);
#   - the shapes of a file measured against another untuned own tile (an older clgrad's) are
#     dropped, and `tune --status` says so;
#   - CLGRAD_TUNE=0 ignores a stored result;
#   - the op suite's GEMM cases pass with a stored result that sets CLBlast parameters,
#     non-default own tiles and gemm_op groups of 8 (a gemmwg line, applied at device open; a
#     width of 0 is refused), every implementation, so tuned parameters cannot go unnoticed;
#   - `clgrad bench gemm --m 64 --n 64 --k 64 --json` prints valid JSON with the documented fields;
#   - tuning the reference backend fails cleanly.
#   - with wrong own GEMM kernels (a mutant gemm.cl), the tuner rejects every result and stores
#     no shape entry (nothing that computes wrong numbers is ever stored);
# usage: test_tune.sh <clgrad> <test_ops> [<folder of kernels with a wrong gemm.cl>]
# Exit 77 (skipped) without an OpenCL device.
clgrad=$1
test_ops=$2
mutant_gemm=$3
fail=0
unset CLGRAD_DEVICE CLGRAD_KERNEL_DIR CLGRAD_GEMM CLGRAD_GEMM_TILE CLGRAD_TUNE CLGRAD_DEBUG
dir=$(mktemp -d) && out=$(mktemp) && err=$(mktemp) || exit 1
# the kernel caches: shared with the other tests (kernel builds are slow); tune files here only
kcache=${CLGRAD_CACHE_DIR:-$dir}
kcopy=""
trap 'rm -rf "$dir" "$out" "$err" $kcopy' EXIT

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
# the device under test: CLGRAD_DEVICE's default (first GPU, else first OpenCL CPU device)
if "$clgrad" tune --status >"$out" 2>"$err" && grep -q "reference backend has nothing" "$out"; then
	echo "no OpenCL device: skipped"
	exit 77
fi

# ---- a short search writes the file; another process applies it --------------------------
CLGRAD_CACHE_DIR=$dir "$clgrad" tune --budget 3 --shapes small >"$out" 2>"$err"; rc=$?
check "clgrad tune --budget 3 --shapes small exits 0 (got $rc)" $rc
grep -q "^stored: $dir/tune-" "$out"; check "it says where it stored the result" $?
file=$(ls "$dir"/tune-*.txt 2>/dev/null | head -n 1)
[ -n "$file" ] && head -n 1 "$file" | grep -qx "clgrad-tune 1"; check "the tune file exists and has the header" $?
grep -q "^shape " "$file"; check "the tune file holds shape entries" $?
grep -q "^\[ *[0-9.]*s\] small .*: own 6x16" "$out" || grep -q "^\[ *[0-9.]*s\] small .*: own " "$out"
check "progress lines name each measurement" $?
grep -q "default *own *CLB def" "$out"; check "the final table compares default and tuned" $?

CLGRAD_CACHE_DIR=$dir CLGRAD_DEBUG=1 "$clgrad" tune --status >"$out" 2>"$err"; rc=$?
check "a second process: clgrad tune --status exits 0 (got $rc)" $rc
grep -q "^loaded: 4 shapes" "$out"; check "the second process loaded the 4 shapes" $?
grep -q "tune: applied $file" "$err"; check "CLGRAD_DEBUG says the file was applied" $?
CLGRAD_CACHE_DIR=$dir CLGRAD_DEBUG=1 "$clgrad" smoke >"$out" 2>"$err"; rc=$?
check "clgrad smoke with the tune result exits 0 (got $rc)" $rc
grep -q "tune: applied" "$err"; check "the first GEMM applied the tune result" $?

CLGRAD_CACHE_DIR=$dir CLGRAD_TUNE=0 "$clgrad" tune --status >"$out" 2>"$err"
grep -q "not loaded: CLGRAD_TUNE=0" "$out"; check "CLGRAD_TUNE=0 ignores the stored result" $?

# ---- bad files are ignored, GEMM stays right ---------------------------------------------------
cp "$file" "$dir/good"
# the first shape line's last figure (a timing) gets a leading 1: still a valid line, but not the
# bytes the checksum covers (whatever implementation and tile the tuner chose on this machine)
sed -i '0,/^shape /{/^shape /s/ \([0-9.]*\)$/ 1\1/}' "$file"
cmp -s "$file" "$dir/good"; [ $? -ne 0 ]; check "(the test corrupted one shape line)" $?
CLGRAD_CACHE_DIR=$dir CLGRAD_DEBUG=1 "$clgrad" tune --status >"$out" 2>"$err"; rc=$?
check "a corrupt tune file: exits 0 (got $rc)" $rc
grep -q "ignoring $file (checksum mismatch)" "$err"; check "a corrupt tune file is ignored with a message" $?
grep -q "^not loaded: tune file ignored" "$out"; check "the corrupt file is reported not loaded" $?
CLGRAD_CACHE_DIR=$dir "$clgrad" smoke >"$out" 2>"$err"; rc=$?
check "clgrad smoke with a corrupt tune file exits 0 (GEMM right)" $rc

head -c 3000 /dev/urandom >"$file"
CLGRAD_CACHE_DIR=$dir CLGRAD_DEBUG=1 "$clgrad" smoke >"$out" 2>"$err"; rc=$?
check "clgrad smoke with a garbage tune file exits 0" $rc
grep -q "tune: ignoring $file" "$err"; check "a garbage tune file is ignored with a message" $?

# A file with a valid checksum written for another device; then one with tuned CLBlast
# parameters and non-default own tiles for the op suite's GEMM shapes.
python3 - "$dir/good" "$dir/foreign" "$dir/tuned" "$dir/stale" "$dir/old" "$dir/badwg" <<'EOF' || check "python3 wrote the test tune files" 1
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
body = [l for l in good if l not in head and not l.startswith("end ")]
write(sys.argv[2], [l if not l.startswith("device ") else "device some other device" for l in head] + body)
# the good file's shapes measured against another untuned tile (its TM one more or less), or
# written before the file named that tile
own = [l for l in body if l.startswith("owndefault ")]
f = own[0].split(" ") if own else ["owndefault", "1", "1", "1", "1", "1"]
f[1] = str(int(f[1]) + 1 if int(f[1]) < 16 else 15)
write(sys.argv[4], head + [" ".join(f) if l.startswith("owndefault ") else l for l in body])
write(sys.argv[5], head + [l for l in body if not l.startswith("owndefault ")])
# gemm_op in groups of 8 along q (a gemmwg line) under the op suite's GEMM cases; a width out of range
write(sys.argv[6], head + body + ["gemmwg 0 1.000 1.000"])
tuned = head + own + ["gemmwg 8 2.000 1.000",
    "clblast Xgemm GEMMK=0 KREG=1 KWG=16 KWI=2 MDIMA=8 MDIMC=8 MWG=32 NDIMB=8 NDIMC=8 NWG=32 SA=1 SB=0 STRM=1 STRN=0 VWM=2 VWN=4",
    "clblast XgemmDirect KWID=2 MDIMAD=8 MDIMCD=8 NDIMBD=8 NDIMCD=8 PADA=1 PADB=0 VWMD=2 VWND=2 WGD=16",
    "clblast GemmRoutine XGEMM_MIN_INDIRECT_SIZE=48",
]
# every layout, single and batched, small to medium: own kernels with odd tiles, or CLBlast
for ta in (0, 1):
    for tb in (0, 1):
        for b in (1, 3):
            for m, n, k in ((5, 7, 3), (33, 17, 65), (128, 96, 80)):
                impl = "clblast" if (m + ta + tb) % 2 else "own"
                tuned.append("shape %d %d %d %d %d %d %s 5 16 8 3 2 1.0 1.0" % (ta, tb, m, n, k, b, impl))
write(sys.argv[3], tuned)
EOF
cp "$dir/foreign" "$file"
CLGRAD_CACHE_DIR=$dir CLGRAD_DEBUG=1 "$clgrad" tune --status >"$out" 2>"$err"
grep -q "ignoring $file (written for another device or driver)" "$err"; check "a foreign tune file is ignored with a message" $?

grep -q "^owndefault " "$dir/good"; check "the tune file names the untuned tile its shapes were measured against" $?
for f in stale old; do
	cp "$dir/$f" "$file"
	CLGRAD_CACHE_DIR=$dir "$clgrad" tune --status >"$out" 2>"$err"
	grep -q "^loaded: 0 shapes" "$out" && grep -q "^note: [0-9]* GEMM shapes ignored: measured against another default tile" "$out"
	check "a tune file measured against another untuned tile ($f) loads without its shapes, and says so" $?
done

cp "$dir/tuned" "$file"
CLGRAD_CACHE_DIR=$dir CLGRAD_DEBUG=1 "$clgrad" tune --status >"$out" 2>"$err"
grep -q "^loaded: 24 shapes, CLBlast parameters set" "$out"; check "a tune file with CLBlast parameters loads" $?
grep -q "tune: gemm_op work-groups of 8 work-items" "$err"; check "its gemmwg line applies at device open" $?
cp "$dir/badwg" "$file"
CLGRAD_CACHE_DIR=$dir CLGRAD_DEBUG=1 "$clgrad" tune --status >"$out" 2>"$err"
grep -q "ignoring $file (bad gemmwg line)" "$err"; check "a gemmwg line of width 0 is refused with a message" $?
cp "$dir/tuned" "$file"
# the op suite with the tuned file: its kernel cache is the shared one, the tune file is ours
kcopy="$kcache/$(basename "$file")"
cp "$file" "$kcopy"
for impl in auto own clblast; do
	CLGRAD_CACHE_DIR=$kcache CLGRAD_GEMM=$impl "$test_ops" --op gemm >"$out" 2>"$err"; rc=$?
	check "test_ops --op gemm with tuned parameters, CLGRAD_GEMM=$impl (got $rc)" $rc
done
rm -f "$kcopy"
kcopy=""

# ---- wrong kernels: nothing wrong is stored ------------------------------------------------------
if [ -n "$mutant_gemm" ] && [ -f "$mutant_gemm/gemm.cl" ]; then
	rm -f "$dir"/tune-*.txt
	CLGRAD_CACHE_DIR=$dir CLGRAD_KERNEL_DIR=$mutant_gemm "$clgrad" tune --budget 2 --shapes small >"$out" 2>"$err"; rc=$?
	check "clgrad tune with a wrong gemm.cl still exits 0 (got $rc)" $rc
	grep -q "own kernels failed (wrong result): shape skipped" "$out"; check "the tuner notices the wrong results" $?
	! grep -q "^shape " "$dir"/tune-*.txt; check "no shape entry is stored from wrong results" $?
fi

# ---- bench gemm --json ------------------------------------------------------------------------
CLGRAD_CACHE_DIR=$kcache "$clgrad" bench gemm --m 64 --n 64 --k 64 --reps 3 --json >"$out" 2>"$err"; rc=$?
check "clgrad bench gemm --m 64 --n 64 --k 64 --json exits 0 (got $rc)" $rc
python3 - "$out" <<'EOF'; check "its output is JSON with the documented fields" $?
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "clgrad-bench-gemm/1", d
for k in ("m", "n", "k", "transa", "transb", "impl", "gflops", "median_s", "first_call_s",
          "openblas_gflops", "ratio", "max_rel_err", "reps", "ok"):
    assert k in d, k
assert d["device"]["name"] and d["m"] == 64 and d["n"] == 64 and d["k"] == 64
assert d["gflops"] > 0 and d["ok"] is True
assert d["openblas_gflops"] is None or (d["ratio"] > 0 and d["max_rel_err"] <= 1e-4)
EOF

# ---- the reference backend has nothing to tune --------------------------------------------------
CLGRAD_CACHE_DIR=$dir "$clgrad" tune --device ref --budget 1 >"$out" 2>"$err"; rc=$?
[ "$rc" -eq 1 ]; check "clgrad tune --device ref fails cleanly (got $rc)" $?
grep -q "reference backend" "$err"; check "and says why" $?

exit $fail
