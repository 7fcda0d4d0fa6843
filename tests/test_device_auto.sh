#!/usr/bin/env bash
# --device auto (cli/device_auto.c): train measures each candidate once and stores the figures,
# a second run reads them, the pick follows the stored figures, eval and bench pick too, a
# corrupt figures file is measured again. usage: test_device_auto.sh CLGRAD
set -u
clgrad=$1
. "$(dirname "$0")/test_common.sh"
t_workdir
export CLGRAD_CACHE_DIR=$work/cache
file=$work/cache/auto-device.txt
data=/usr/share/datasets/fashion-mnist
[ -e "$data/train-images-idx3-ubyte.gz" ] || [ -e "$data/train-images-idx3-ubyte" ] || { echo "no Fashion-MNIST: skipped"; exit 77; }

# the candidates: every OpenCL device but Oclgrind
cands=$("$clgrad" devices --json | python3 -c '
import json, sys
for d in json.load(sys.stdin)["devices"][1:]:
    if "oclgrind" not in (d["name"] + d["platform"]).lower():
        print(d["index"])')
[ -n "$cands" ] || { echo "no OpenCL device present: skipped"; exit 77; }
ncand=$(echo "$cands" | wc -l)
echo "candidates: $(echo $cands)"

train() { "$clgrad" train --device auto --model mlp --limit 600 --batch 50 --epochs 1 --save "$work/m.safetensors" "$@" 2>&1; }
# the device the run used ("device N: name (platform)") and the fastest in the file
used() { grep -m1 -oE '^device [0-9]+:' <<<"$1" | grep -oE '[0-9]+'; }

out=$(train) || { echo "$out"; fail "train --device auto"; }
echo "$out" | grep '^device\|^  device'
[ "$(grep -c 'measured now' <<<"$out")" = "$ncand" ] || fail "the first run must measure each of $ncand candidate(s)"
[ "$(grep -c $'\ttrain mlp batch 50\t' "$file")" = "$ncand" ] || { cat "$file"; fail "one stored figure per candidate expected"; }
head -n1 "$file" | grep -q '^clgrad-auto-device 1$' || fail "figures file header"
fastest=$(python3 - "$file" "$("$clgrad" devices --json)" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()[1:]
devs = json.loads(sys.argv[2])["devices"]
best = max((float(l.split("\t")[0]), l.split("\t")) for l in lines)[1]
print([d["index"] for d in devs if [d["platform"], d["name"], d["driver_version"]] == best[2:5]][0])
PY
)
[ "$(used "$out")" = "$fastest" ] || fail "picked device $(used "$out"), the stored figures say $fastest"
grep -q "device auto: device $fastest .*fastest" <<<"$out" || fail "the pick and its reason are not printed"

# second run: every figure from the file, same pick
out2=$(train) || fail "second train --device auto"
grep -q 'measured now' <<<"$out2" && fail "the second run measured again"
[ "$(grep -c '(cached)' <<<"$out2")" = "$ncand" ] || fail "the second run must read $ncand cached figure(s)"
[ "$(used "$out2")" = "$fastest" ] || fail "second run picked another device"

# the stored figures decide: make the last candidate the fastest
last=$(echo "$cands" | tail -n1)
python3 - "$file" "$("$clgrad" devices --json)" "$last" <<'PY'
import json, sys
path, devs, last = sys.argv[1], json.loads(sys.argv[2])["devices"], int(sys.argv[3])
d = [d for d in devs if d["index"] == last][0]
lines = open(path).read().splitlines()
out = [lines[0]]
for l in lines[1:]:
    f = l.split("\t")
    if f[2:5] == [d["platform"], d["name"], d["driver_version"]]:
        f[0] = "1e9"
    out.append("\t".join(f))
open(path, "w").write("\n".join(out) + "\n")
PY
out3=$(train) || fail "train after editing the figures"
[ "$(used "$out3")" = "$last" ] || fail "picked $(used "$out3") although the figures make device $last the fastest"

# the precision is part of the job: a mixed run is measured on its own
mx=$(train --precision mixed) || { echo "$mx"; fail "train --device auto --precision mixed"; }
grep -q "fastest for train mlp batch 50 mixed" <<<"$mx" && [ "$(grep -c 'measured now' <<<"$mx")" = "$ncand" ] ||
	{ echo "$mx"; fail "a mixed-precision run must be measured as a job of its own"; }

# eval picks for its own job (measured once)
ev=$("$clgrad" eval --checkpoint "$work/m.safetensors" --device auto --limit 600 --batch 50 2>&1) || { echo "$ev"; fail "eval --device auto"; }
grep -q "fastest for eval mlp batch 50" <<<"$ev" && grep -q "test accuracy" <<<"$ev" || { echo "$ev"; fail "eval --device auto output"; }

# a corrupt figures file is ignored and written anew
echo "garbage" >"$file"
out4=$(train) || fail "train with a corrupt figures file"
[ "$(grep -c 'measured now' <<<"$out4")" = "$ncand" ] || fail "a corrupt file must be measured again"
head -n1 "$file" | grep -q '^clgrad-auto-device 1$' || fail "the corrupt file was not rewritten"

# bench: by the GEMM of its shape
b=$("$clgrad" bench gemm --m 64 --n 64 --k 64 --reps 2 --device auto 2>&1) || { echo "$b"; fail "bench gemm --device auto"; }
grep -q "fastest for bench gemm 64x64x64" <<<"$b" && grep -q "GFLOP/s" <<<"$b" || { echo "$b"; fail "bench --device auto output"; }
# the choice goes to stderr: --json output stays JSON
"$clgrad" bench gemm --m 64 --n 64 --k 64 --reps 2 --json --device auto 2>/dev/null | python3 -m json.tool >/dev/null ||
	fail "bench --json --device auto is not JSON"
echo "PASS: device auto ($ncand candidate(s))"
