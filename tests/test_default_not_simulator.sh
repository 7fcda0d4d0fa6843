#!/usr/bin/env bash
# The library's default device (clg_device_select with no spec: `clgrad devices` marks it, smoke,
# tune and bench fft take it) is never the simulator: Oclgrind presents itself as a GPU, and the
# default takes GPUs before CPUs. Registers Oclgrind ahead of the machine's other platforms.
# usage: test_default_not_simulator.sh CLGRAD
set -u
clgrad=$1
rt=/usr/lib/oclgrind/liboclgrind-rt-icd.so
[ -e "$rt" ] || rt=$(find /usr/lib -name 'liboclgrind-rt-icd.so' 2>/dev/null | head -1)
[ -n "$rt" ] || { echo "Oclgrind runtime not installed: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset CLGRAD_DEVICE
echo "$rt" >"$work/0-oclgrind.icd"
for f in "${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}"/*.icd; do
	[ -e "$f" ] && ! grep -qi oclgrind "$f" && cp "$f" "$work/1-$(basename "$f")"
done
OCL_ICD_VENDORS=$work "$clgrad" devices --json >"$work/d.json" || { echo "FAIL: devices --json"; exit 1; }
python3 - "$work/d.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
devs = doc["devices"]
sim = [d["index"] for d in devs if "oclgrind" in (d["name"] + d["platform"]).lower()]
other = [d["index"] for d in devs[1:] if d["index"] not in sim]
print("devices:", ", ".join(f'{d["index"]} {d["type"]} {d["name"]}' for d in devs), "; default:", doc["default"])
if not sim:
    sys.exit("FAIL: Oclgrind was registered but is not listed")
if doc["default"] in sim:
    sys.exit("FAIL: the default device is the simulator")
if other and doc["default"] not in other:
    sys.exit(f"FAIL: the default is {doc['default']}, not one of the other OpenCL devices {other}")
if not other and doc["default"] != 0:
    sys.exit("FAIL: with only the simulator, the default should be the reference backend")
print("PASS: the default device is not the simulator")
PY
