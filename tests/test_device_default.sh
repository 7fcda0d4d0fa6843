#!/usr/bin/env bash
# No device named (cli/device_auto.c device_select_for): train, eval and bench pick from the stored
# figures in auto-device.txt without measuring, GPU before CPU (never Oclgrind) when a candidate has
# no figure; `clgrad devices` (table and --json) says which device each model's training gets and
# why. A seeded auto-device.txt in a temporary cache folder decides. Runs on Intel too
# (intel.cmake), where the seeded figures make a pick that GPU before CPU would not.
# usage: test_device_default.sh CLGRAD
set -u
clgrad=$1
. "$(dirname "$0")/test_common.sh"
t_workdir
unset CLGRAD_DEVICE
export CLGRAD_CACHE_DIR=$work/cache
file=$work/cache/auto-device.txt
data=/usr/share/datasets/fashion-mnist
[ -e "$data/train-images-idx3-ubyte.gz" ] || [ -e "$data/train-images-idx3-ubyte" ] || { echo "no Fashion-MNIST: skipped"; exit 77; }

"$clgrad" devices --json >"$work/devices.json" || fail "devices --json"
# the candidates (every OpenCL device but Oclgrind) and the GPU-before-CPU fallback among them
read -r cands fallback < <(python3 - "$work/devices.json" <<'PY'
import json, sys
devs = json.load(open(sys.argv[1]))["devices"][1:]
c = [d for d in devs if "oclgrind" not in (d["name"] + d["platform"]).lower()]
fb = ([d for d in c if d["type"] == "gpu"] + [d for d in c if d["type"] == "cpu"] + c)
print(",".join(str(d["index"]) for d in c) or "-", fb[0]["index"] if fb else 0)
PY
)
[ "$cands" != - ] || { echo "no OpenCL device present: skipped"; exit 77; }
first=${cands%%,*} last=${cands##*,}
echo "candidates $cands, GPU before CPU: device $fallback"

# used OUTPUT: the device a run used ("device N: name (platform)")
used() { grep -m1 -oE '^device [0-9]+:' <<<"$1" | grep -oE '[0-9]+'; }
# auto FIELD MODEL: a member of the devices --json auto entry of MODEL
auto() { python3 -c 'import json,sys; print([a for a in json.load(open(sys.argv[1]))["auto"] if a["model"] == sys.argv[3]][0][sys.argv[2]])' "$work/devices.json" "$@"; }
train() { "$clgrad" train --model mlp --limit 600 --batch 50 --epochs 1 --save "$work/m.safetensors" "$@" 2>&1; }

# 1. nothing stored: GPU before CPU, said so, nothing measured or written
for m in mlp cnn transformer; do
	[ "$(auto device $m)" = "$fallback" ] || fail "devices --json: $m gets $(auto device $m), not $fallback"
	[ "$(auto basis $m)" = "no measurement" ] && auto why $m | grep -q "GPU before CPU" || fail "devices --json: $m's reason"
done
"$clgrad" devices >"$work/table.txt" || fail "devices"
[ "$(grep -cE "^  train (mlp|cnn|transformer) .* device $fallback .*no measurement on device.*: GPU before CPU" "$work/table.txt")" = 3 ] ||
	{ cat "$work/table.txt"; fail "the devices table does not give the three jobs' picks and reasons"; }
out=$(train) || { echo "$out"; fail "train with no device named"; }
[ "$(used "$out")" = "$fallback" ] || { echo "$out"; fail "trained on $(used "$out"), not on device $fallback"; }
grep -q "^device auto (the default.*for train mlp batch 50: no measurement on device.*GPU before CPU" <<<"$out" ||
	{ echo "$out"; fail "the default pick and its reason are not printed"; }
grep -q "measured now" <<<"$out" && fail "the default path measured"
[ ! -e "$file" ] || fail "the default path wrote $file"

# 2. seeded figures: mlp (batch 50 and the default 128) fastest on the last candidate, the
# transformer on the first; the cnn seeded on one candidate only (when there are two or more)
python3 - "$work/devices.json" "$file" "$first" "$last" <<'PY'
import json, os, sys
devs, path, first, last = json.load(open(sys.argv[1]))["devices"], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
cands = [d for d in devs[1:] if "oclgrind" not in (d["name"] + d["platform"]).lower()]
lines = ["clgrad-auto-device 1"]
def add(rate, job, d):
    lines.append("\t".join([str(rate), job, d["platform"], d["name"], d["driver_version"]]))
for d in cands:
    fast = d["index"] == last
    add(7777 if fast else 1111, "train mlp batch 50", d)
    add(7777 if fast else 1111, "train mlp batch 128", d)
    add(555 if d["index"] == first else 55, "train transformer d64 h4 l2 t64 batch 128", d)
    add(42, "bench gemm 64x64x64", d) if d["index"] == last else add(4.5, "bench gemm 64x64x64", d)
if len(cands) > 1:
    add(999, "train cnn batch 128", cands[-1])
os.makedirs(os.path.dirname(path), exist_ok=True)
open(path, "w").write("\n".join(lines) + "\n")
PY
sum=$(md5sum <"$file")
"$clgrad" devices --json >"$work/devices.json" || fail "devices --json (seeded)"
[ "$(auto device mlp)" = "$last" ] && [ "$(auto basis mlp)" = measured ] || fail "mlp: device $(auto device mlp), $(auto basis mlp)"
auto why mlp | grep -q "fastest by the stored figures (samples/s): .*device $last 7777" || fail "mlp's reason: $(auto why mlp)"
[ "$(auto device transformer)" = "$first" ] || fail "transformer: device $(auto device transformer), not $first"
auto why transformer | grep -q "device $first 555" || fail "transformer's reason: $(auto why transformer)"
if [ "$first" != "$last" ]; then
	[ "$(auto device cnn)" = "$fallback" ] && auto why cnn | grep -q "no measurement on device $first: GPU before CPU" ||
		fail "cnn (one candidate unmeasured): device $(auto device cnn), $(auto why cnn)"
fi
"$clgrad" devices | grep -qE "^  train mlp batch 128 +device $last .*fastest by the stored figures" || fail "the table's mlp line"
out=$(train) || { echo "$out"; fail "train (seeded)"; }
[ "$(used "$out")" = "$last" ] || { echo "$out"; fail "trained on $(used "$out"), the stored figures say $last"; }
grep -q "^device auto (the default.*fastest by the stored figures" <<<"$out" || { echo "$out"; fail "seeded pick's reason"; }
grep -q "measured now" <<<"$out" && fail "the seeded default measured"
[ "$(md5sum <"$file")" = "$sum" ] || fail "the default path changed $file"

# 3. a device named wins: --device, CLGRAD_DEVICE
out=$(train --device ref) || fail "train --device ref"
[ "$(used "$out")" = 0 ] && ! grep -q "device auto" <<<"$out" || { echo "$out"; fail "--device ref"; }
out=$(CLGRAD_DEVICE=$first train) || fail "CLGRAD_DEVICE=$first train"
[ "$(used "$out")" = "$first" ] && ! grep -q "device auto" <<<"$out" || { echo "$out"; fail "CLGRAD_DEVICE=$first"; }

# 4. eval and bench pick the same way (eval's job is unseeded: GPU before CPU)
ev=$("$clgrad" eval --checkpoint "$work/m.safetensors" --limit 600 --batch 50 2>&1) || { echo "$ev"; fail "eval"; }
grep -q "^device auto (the default.*device $fallback .*for eval mlp batch 50: no measurement" <<<"$ev" || { echo "$ev"; fail "eval's pick"; }
b=$("$clgrad" bench gemm --m 64 --n 64 --k 64 --reps 2 --json 2>"$work/err.txt") || { cat "$work/err.txt"; fail "bench gemm"; }
python3 -m json.tool <<<"$b" >/dev/null || fail "bench --json output is not JSON"
grep -q "^device auto (the default.*device $last .*for bench gemm 64x64x64: fastest by the stored figures (GFLOP/s)" "$work/err.txt" ||
	{ cat "$work/err.txt"; fail "bench's pick"; }
echo "PASS: default device (candidates $cands)"
