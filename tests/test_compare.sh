#!/usr/bin/env bash
# Tests of `clgrad compare` (docs/COMPARE.md). usage: test_compare.sh MODE CLGRAD SOURCE_DIR
#   quick     --quick over every device (reference + PoCL), report checked by check_compare_json.py
#   oclgrind  --quick over the reference and Oclgrind (registered beside PoCL by oclgrind-icd.sh)
#   faults    a crashing and a hanging worker: the report still completes, the devices are marked
#   build     one device's kernels have a syntax error: its compile section shows the failure
#   render    --render-only over tests/data/compare fixtures, a corrupt worker file, --baseline,
#             --merge of two reports
set -u
mode=$1 clgrad=$2 src=$3
check="python3 $src/tests/check_compare_json.py"
. "$(dirname "$0")/test_common.sh"
t_workdir

# runs compare, keeps its output in $work/out.txt and its exit status in $rc
run_compare() {
	local t0=$(date +%s)
	"$clgrad" compare "$@" >"$work/out.txt" 2>"$work/err.txt"
	rc=$?
	cat "$work/out.txt"
	echo "(compare exit status $rc, $(( $(date +%s) - t0 )) s)"
}

case $mode in
quick)
	# a generous watchdog: this checks the report, not the speed (PoCL's ops section alone takes
	# about 170 s on the loaded 2-core CI machine since the suite grew past 3800 cases a device)
	run_compare --quick --timeout 480 --out "$work/r"
	[ $rc = 0 ] || [ $rc = 3 ] || { cat "$work/err.txt"; fail "compare exit status $rc"; }
	$check "$work/r/report.json" --populated --finished || fail "report.json (see above)"
	;;
oclgrind)
	"$src/scripts/oclgrind-icd.sh" "$work/icd" >/dev/null 2>&1 || { echo "Oclgrind not installed: skipped"; exit 77; }
	export OCL_ICD_VENDORS=$work/icd
	"$clgrad" devices | grep -qi oclgrind || { echo "Oclgrind not listed: skipped"; exit 77; }
	run_compare --quick --devices ref,oclgrind --timeout 420 --out "$work/r"
	[ $rc = 0 ] || [ $rc = 3 ] || { cat "$work/err.txt"; fail "compare exit status $rc"; }
	grep -q '"tiny": true' "$work"/r/device-*.json || fail "the Oclgrind worker did not ask for the smallest workloads"
	$check "$work/r/report.json" --populated --finished || fail "report.json (see above)"
	;;
faults)
	# the reference worker crashes after its capabilities section; the run goes on
	CLGRAD_COMPARE_FAULT="0:crash" run_compare --quick --devices ref --suite ops --out "$work/c"
	[ $rc = 3 ] || fail "a crashed device must give exit status 3, got $rc"
	$check "$work/c/report.json" --status 0=crashed || fail "crash not marked"
	grep -q "SIGSEGV after section capabilities" "$work/c/report.json" || fail "crash detail missing"
	[ ! -e "$work/c/device-0.json" ] || fail "a crashed worker left a device-0.json"
	ls "$work/c" | grep -q '\.tmp' && fail "temporary files left behind: $(ls "$work/c")"
	grep -q "crashed" "$work/c/report.html" && grep -q "crashed" "$work/c/report.md" || fail "crash not in the reports"
	# a hanging worker is killed by the watchdog
	CLGRAD_COMPARE_FAULT="0:hang" run_compare --quick --devices ref --suite ops --timeout 4 --out "$work/h"
	[ $rc = 3 ] || fail "a timed-out device must give exit status 3, got $rc"
	$check "$work/h/report.json" --status 0=timeout || fail "timeout not marked"
	grep -q "after section capabilities" "$work/h/report.json" || fail "timeout detail missing"
	# both at once with a healthy device between them (every device of this machine)
	n=$("$clgrad" devices --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["devices"]))')
	if [ "$n" -ge 2 ]; then
		CLGRAD_COMPARE_FAULT="1:hang" run_compare --quick --devices ref,1 --suite ops --timeout 12 --out "$work/m"
		$check "$work/m/report.json" --status 0=ok --status 1=timeout || fail "one device's hang spoiled another's result"
	fi
	# usage errors
	"$clgrad" compare --suite nonsense --out "$work/x" 2>/dev/null; [ $? = 2 ] || fail "bad --suite must give exit status 2"
	"$clgrad" compare --quick 2>/dev/null; [ $? = 2 ] || fail "missing --out must give exit status 2"
	;;
build)
	n=$("$clgrad" devices --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["devices"]))')
	[ "$n" -ge 2 ] || { echo "no OpenCL device present: skipped"; exit 77; }
	mkdir "$work/broken"
	cp "$src"/kernels_cl/*.cl "$work/broken/"
	echo "this is not OpenCL C;" >>"$work/broken/softmax.cl"
	CLGRAD_COMPARE_DEVICE_ENV="1:CLGRAD_KERNEL_DIR=$work/broken" \
		run_compare --quick --devices ref,1 --suite compile --out "$work/b"
	[ $rc = 0 ] || [ $rc = 3 ] || fail "compare exit status $rc"
	$check "$work/b/report.json" --status 0=ok --compile-fail 1 || fail "the failed build is not in the report"
	;;
render)
	cp -r "$src/tests/data/compare" "$work/f"
	printf '{"schema": "clgrad-compare-device/1", "device": {"index": 4, "na' >"$work/f/device-4.json"
	run_compare --render-only "$work/f"
	[ $rc = 3 ] || fail "devices 3 and 4 are not ok: exit status 3 expected, got $rc"
	$check "$work/f/report.json" --populated --status 0=ok --status 1=ok --status 2=ok --status 3=error \
		--status 4=error || fail "report.json (see above)"
	grep -q "Fake GPU 9000" "$work/out.txt" || fail "table lacks a device"
	# the JSON reader and writer round trip: every worker's sections come back unchanged
	python3 - "$work/f" <<'PY' || fail "report.json sections differ from the worker files"
import json, math, sys
d = sys.argv[1]
report = json.load(open(f"{d}/report.json"))
def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-8)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    return a == b and type(a) == type(b)
for i in range(3):
    w = json.load(open(f"{d}/device-{i}.json"))["sections"]
    r = [x for x in report["devices"] if x["index"] == i][0]["sections"]
    assert same(w, r), f"device {i}"
PY
	# which vendor's stack each row is, and the findings per vendor, in all three reports
	label="Fake Vendor OpenCL · Fake GPU 9000 · 6.0"
	grep -q "$label" "$work/out.txt" && grep -q "$label" "$work/f/report.md" && grep -q "$label" "$work/f/report.html" ||
		fail "a report lacks the label '$label'"
	grep -q "Portable Computing Language · pthread-haswell-AMD EPYC 7B13 · 6.0" "$work/out.txt" || fail "PoCL's label"
	# the FFT row of the peaks: its rate and which FFT implementation each device runs
	grep -q "fft path.*clfft.*planar" "$work/f/report.md" || grep -q "fft path.*planar.*clfft" "$work/f/report.md" ||
		fail "report.md lacks the fft path row (clfft, planar)"
	grep -q "fft GFLOP/s" "$work/f/report.md" && grep -q "fft GFLOP/s" "$work/f/report.html" || fail "a report lacks the fft rate"
	grep -q "^### Fake Vendor OpenCL (Fake Vendor Inc.)" "$work/f/report.md" || fail "report.md lacks the vendor group"
	grep -q "^- fallback: \`layer_norm\`: known-bad" "$work/f/report.md" || fail "report.md: fallback not under its vendor"
	grep -q "^    routed   argmax" "$work/out.txt" || fail "terminal: routed op not under its vendor"
	grep -q 'id="vendors"' "$work/f/report.html" || fail "report.html lacks the findings by vendor"
	for h in Summary "Findings by vendor" Capabilities Peaks Compile Roofline Ops Train Scores; do
		grep -q "^## $h" "$work/f/report.md" || fail "report.md lacks section $h"
	done
	grep -q "routed: \`layer_norm\` -> fallback" "$work/f/report.md" || fail "report.md lacks the routed ops"
	grep -q "FAILED" "$work/f/report.md" || fail "report.md lacks the failed program build"
	html=$work/f/report.html
	[ "$(grep -c '<svg' "$html")" -ge 10 ] || fail "report.html has too few charts"
	grep -q 'class="c routed"' "$html" || fail "op matrix lacks routed cells"
	grep -qiE '<script|src="http|href="http|@import|url\(' "$html" && fail "report.html is not self-contained"
	python3 - "$html" <<'PY' || fail "report.html is not well-formed"
import sys, html.parser
class P(html.parser.HTMLParser):
    void = {"meta", "br", "img", "input", "link", "hr"}
    def __init__(s): super().__init__(); s.stack = []
    def handle_starttag(s, t, a):
        if t not in s.void: s.stack.append(t)
    def handle_startendtag(s, t, a): pass
    def handle_endtag(s, t):
        assert s.stack and s.stack[-1] == t, f"</{t}> closes <{s.stack[-1] if s.stack else None}>"
        s.stack.pop()
p = P(); p.feed(open(sys.argv[1]).read()); assert not p.stack, p.stack
PY
	# a baseline: the same report with a faster fp32 peak on device 1 and gelu passing on device 2
	python3 - "$work/f/report.json" "$work/old.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["created"] = "2026-01-01T00:00:00Z"
d1, d2 = r["devices"][1], r["devices"][2]
d1["sections"]["peaks"]["fp32_gflops"] = 80.0
for o in d2["sections"]["ops"]["ops"]:
    if o["op"] == "gelu":
        o["pass"], o["fail"] = o["pass"] + o["fail"], 0
d2["scores"]["correctness"] -= 10
json.dump(r, open(sys.argv[2], "w"))
PY
	run_compare --render-only "$work/f" --baseline "$work/old.json"
	grep -q "fp32 GFLOP/s: 80 -> 61 (-24%)" "$work/out.txt" || fail "baseline: fp32 change not shown"
	grep -q "op gelu: passing -> failing" "$work/out.txt" || fail "baseline: newly failing op not shown"
	grep -q "score correctness" "$work/out.txt" || fail "baseline: score change not shown"
	grep -q "device 0 (reference (plain C)): no change" "$work/out.txt" || fail "baseline: unchanged device"
	$check "$work/f/report.json" --baseline-changes || fail "baseline not in report.json"
	grep -q "Changes against the baseline" "$work/f/report.md" || fail "baseline not in report.md"
	"$clgrad" compare --render-only "$work/f" --baseline "$work/f/device-0.json" >/dev/null 2>&1
	[ $? = 2 ] || fail "a baseline that is not a report must be refused"
	# --merge: this report and "another machine's" (its first three devices), side by side. The
	# fixtures predate the workload fields (a re-render copies none): both get the same ones
	# (refusals: tests/test_compare_merge.sh).
	grep -q '"workload"' "$work/f/report.json" && fail "a re-rendered run without report.json got a workload"
	python3 - "$work/f/report.json" "$work/a.json" "$work/b.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["clgrad_version"], r["workload"] = "0.1.0", {"fingerprint": "0123456789abcdef", "mode": "full",
                                         "suites": r["suites"]}
json.dump(r, open(sys.argv[2], "w"))
r["machine"]["hostname"] = "other-host"
r["devices"] = r["devices"][:3]
json.dump(r, open(sys.argv[3], "w"))
PY
	host=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["machine"]["hostname"])' "$work/f/report.json")
	run_compare --merge "$work/a.json" "$work/b.json" --out "$work/m"
	[ $rc = 3 ] || fail "merge: a device that is not ok must give exit status 3, got $rc"
	$check "$work/m/report.json" --status 3=error --status 4=error --status 7=ok || fail "merged report.json (see above)"
	python3 - "$work/m/report.json" "$host" <<'PY' || fail "merged report: devices, machines or vendor groups wrong"
import json, sys
r, host = json.load(open(sys.argv[1])), sys.argv[2]
devs = r["devices"]
assert [d["index"] for d in devs] == list(range(8)), [d["index"] for d in devs]  # 5 + 3
assert [d["machine"] for d in devs] == [host] * 5 + ["other-host"] * 3, [d["machine"] for d in devs]
assert devs[7]["label"] == "other-host: Fake Vendor OpenCL · Fake GPU 9000 · 6.0", devs[7]["label"]
assert [m["machine"]["hostname"] for m in r["merged_from"]] == [host, "other-host"]
fake = [v for v in r["vendors"] if v["platform"] == "Fake Vendor OpenCL"][0]
assert fake["devices"] == [2, 7] and {f["device"] for f in fake["fallback"]} == {2, 7}, fake
assert devs[5]["scores"]["features"] == devs[0]["scores"]["features"], "the second reference is scored as a device"
PY
	grep -q "other-host: Fake Vendor OpenCL · Fake GPU 9000 · 6.0" "$work/m/report.md" &&
		grep -q "other-host: Fake Vendor OpenCL · Fake GPU 9000 · 6.0" "$work/m/report.html" || fail "merged labels not in the reports"
	# the maturity reading of the fake GPU: its failing ops, its routes with why, its known-bad evidence
	grep -q "^## Maturity" "$work/f/report.md" && grep -q 'id="maturity"' "$work/f/report.html" ||
		fail "a report lacks the maturity reading"
	grep -q "^- \*\*2: Fake Vendor OpenCL · Fake GPU 9000 · 6.0\*\*: gives wrong results: 8 failing, 2 routed" "$work/f/report.md" ||
		fail "report.md: the fake GPU's maturity line"
	grep -q "^  - fails: \`gelu\` (2 of" "$work/f/report.md" || fail "report.md: the failing op under the maturity reading"
	# two roots on one host (a chroot: same hostname and kernel, another OS) with two drivers of one
	# platform: the rows keep their OS, the platform is two stacks, and what changed is listed
	python3 - "$work/a.json" "$work/c.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["machine"]["os"], r["machine"]["os_id"] = "Debian GNU/Linux 13 (trixie)", "debian13"
r["devices"] = [d for d in r["devices"] if d["index"] == 1]        # PoCL alone, now driver 7.1
d = r["devices"][0]
d["sections"]["capabilities"]["driver_version"] = "7.1"
d["sections"]["ops"]["ops"][0]["fail"], d["sections"]["ops"]["ops"][0]["pass"] = 1, d["sections"]["ops"]["ops"][0]["pass"] - 1
for run in d["sections"]["train"]["runs"]:
    run["samples_per_s"] *= 2
json.dump(r, open(sys.argv[2], "w"))
PY
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["machine"]["os_id"]="debian12"; json.dump(r, open(sys.argv[1], "w"))' "$work/a.json"
	run_compare --merge "$work/a.json" "$work/c.json" --out "$work/g"
	$check "$work/g/report.json" || fail "report.json of two roots (see above)"
	python3 - "$work/g/report.json" "$host" <<'PY' || fail "two roots, two PoCL drivers: machines, groups or generations wrong"
import json, sys
r, host = json.load(open(sys.argv[1])), sys.argv[2]
devs = r["devices"]
assert devs[1]["machine"] == host + "/debian12" and devs[5]["machine"] == host + "/debian13", [d["machine"] for d in devs]
pocl = [v for v in r["vendors"] if v["platform"] == "Portable Computing Language"]
assert sorted((v["driver"], v["devices"]) for v in pocl) == [("6.0", [1]), ("7.1", [5])], pocl
g = r["maturity"]["generations"]
assert len(g) == 1 and (g[0]["old_device"], g[0]["new_device"]) == (1, 5), g
op = json.load(open(sys.argv[1]))["devices"][1]["sections"]["ops"]["ops"][0]["op"]
assert {"what": op, "old": "pass", "new": "fail"} in g[0]["changed"], g[0]["changed"]
mlp = [x for x in g[0]["speed"] if x["what"] == "train mlp"][0]
assert abs(mlp["ratio"] - 2) < 1e-9, mlp
PY
	grep -q "^### Portable Computing Language 6.0 -> 7.1 (devices 1 and 5)" "$work/g/report.md" ||
		fail "report.md lacks the PoCL 6.0 -> 7.1 part"
	"$clgrad" compare --merge "$work/f/device-0.json" --out "$work/x" >/dev/null 2>&1
	[ $? = 1 ] || fail "merging a file that is not a report must fail with status 1"
	"$clgrad" compare --merge "$work/b.json" >/dev/null 2>&1
	[ $? = 2 ] || fail "--merge without --out must give status 2"
	;;
*)
	echo "unknown mode $mode"; exit 2 ;;
esac
echo "test_compare $mode: ok"
