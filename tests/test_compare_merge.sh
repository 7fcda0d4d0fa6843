#!/usr/bin/env bash
# `clgrad compare --merge` (compare/compare_workload.c, docs/COMPARE.md "Two machines, one report"):
# every run records its clgrad version and workload; reports of the same workload merge, with each
# row keeping its machine; reports whose workloads or clgrad versions differ are refused with exit
# status 2 and one line that names both files and what differs. Cheap real runs: the reference
# device's peaks (a few seconds), and runs whose worker crashes at once (the report, workload
# included, is still written). usage: test_compare_merge.sh CLGRAD SOURCE_DIR
set -u
clgrad=$1 src=$2
check="python3 $src/tests/check_compare_json.py"
. "$(dirname "$0")/test_common.sh"
t_workdir
field() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

# refused FILE... EXPECT: exit status 2, exactly one line on stderr naming the first and the last
# file, containing EXPECT
refused() {
	local expect=${*: -1} files=("${@:1:$#-1}")
	"$clgrad" compare --merge "${files[@]}" --out "$work/refused" >"$work/out.txt" 2>"$work/err.txt"
	local rc=$?
	cat "$work/err.txt"
	[ $rc = 2 ] || fail "merge of ${files[*]} must be refused with status 2, got $rc"
	[ "$(wc -l <"$work/err.txt")" = 1 ] || fail "the refusal must be one line"
	grep -qF -- "--merge refused: ${files[0]}" "$work/err.txt" && grep -qF -- "${files[-1]}" "$work/err.txt" ||
		fail "the refusal does not name both reports"
	grep -qF -- "$expect" "$work/err.txt" || fail "the refusal does not say '$expect'"
	[ ! -e "$work/refused/report.json" ] || fail "a refused merge wrote a report"
}

# two runs of the same workload ("two machines")
for run in a b; do
	"$clgrad" compare --quick --devices ref --suite peak --out "$work/$run" >/dev/null 2>"$work/err.txt" ||
		{ cat "$work/err.txt"; fail "compare run $run"; }
done
$check "$work/a/report.json" --finished || fail "report.json (see above)"
version=$("$clgrad" --version | awk '{print $2}')
[ "$(field "$work/a/report.json" 'r["clgrad_version"]')" = "$version" ] || fail "clgrad_version is not $version"
[ "$(field "$work/a/report.json" 'r["workload"]["mode"] + " " + ",".join(r["workload"]["suites"])')" = "quick peak" ] ||
	fail "workload mode and suites"
fp=$(field "$work/a/report.json" 'r["workload"]["fingerprint"]')
[[ $fp =~ ^[0-9a-f]{16}$ ]] || fail "fingerprint '$fp' is not 16 hex digits"
[ "$(field "$work/b/report.json" 'r["workload"]["fingerprint"]')" = "$fp" ] || fail "same workload, another fingerprint"
# a re-render keeps the run's workload
"$clgrad" compare --render-only "$work/a" >/dev/null 2>&1 || fail "render-only"
[ "$(field "$work/a/report.json" 'r["workload"]["fingerprint"]')" = "$fp" ] || fail "a re-render changed the workload"

# the train and ops suites' members, from a run whose worker crashes at once
CLGRAD_COMPARE_FAULT="0:crash" "$clgrad" compare --quick --devices ref --suite ops,train --out "$work/c" >/dev/null 2>&1
python3 - "$work/c/report.json" <<'PY' || fail "the ops and train members of the workload"
import json, sys
w = json.load(open(sys.argv[1]))["workload"]
assert w["suites"] == ["ops", "train"], w
assert w["train_seed"] == 1 and [r["model"] for r in w["train"]] == ["mlp", "cnn", "transformer"], w
assert [(r["steps"], r["batch"]) for r in w["train"]] == [(8, 32), (3, 8), (4, 4)], w["train"]
assert w["train"][2]["dim"] == 16 and w["train"][2]["seq_len"] == 16, w["train"][2]
assert w["op_cases"] > 1000 and w["grad_cases"] > 50 and len(w["op_cases_hash"]) == 16, w
PY
CLGRAD_COMPARE_FAULT="0:crash" "$clgrad" compare --devices ref --suite peak --out "$work/full" >/dev/null 2>&1
[ "$(field "$work/full/report.json" 'r["workload"]["mode"]')" = full ] || fail "a run without --quick is not mode full"

# "the other machine": another hostname, CPU, OS and driver
python3 - "$work/b/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["machine"].update(hostname="nvidia-box", cpu="Other CPU 9000", uname="Linux 6.1.0-other x86_64")
r["devices"][0]["sections"]["capabilities"]["driver_version"] = "555.42"
json.dump(r, open(sys.argv[1], "w"))
PY
"$clgrad" compare --merge "$work/a/report.json" "$work/b/report.json" --out "$work/m" >"$work/out.txt" 2>&1 ||
	{ cat "$work/out.txt"; fail "merge of the same workload"; }
$check "$work/m/report.json" --finished || fail "merged report.json (see above)"
python3 - "$work/m/report.json" "$fp" "$(field "$work/a/report.json" 'r["machine"]["hostname"]')" <<'PY' ||
import json, sys
r, fp, host = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
assert r["workload"]["fingerprint"] == fp, r["workload"]
assert [d["machine"] for d in r["devices"]] == [host, "nvidia-box"], [d["machine"] for d in r["devices"]]
assert [m["machine"]["cpu"] for m in r["merged_from"]][1] == "Other CPU 9000", r["merged_from"]
assert r["merged_from"][1]["machine"]["uname"] == "Linux 6.1.0-other x86_64", r["merged_from"]
assert r["devices"][1]["sections"]["capabilities"]["driver_version"] == "555.42"
PY
	fail "merged report: devices, machines or workload wrong"
for f in report.md report.html; do
	grep -q "Other CPU 9000" "$work/m/$f" && grep -q "Linux 6.1.0-other" "$work/m/$f" ||
		fail "$f does not show the other machine's CPU and OS"
done
grep -q "nvidia-box" "$work/m/report.md" || fail "report.md does not name the other machine"

# refusals: another workload, another clgrad version, a report without the fields
refused "$work/a/report.json" "$work/c/report.json" "suites peak vs ops,train"
refused "$work/a/report.json" "$work/full/report.json" "mode quick vs full"
refused "$work/a/report.json" "$work/b/report.json" "$work/c/report.json" "suites peak vs ops,train"
python3 - "$work/b/report.json" "$work/old-version.json" "$work/no-workload.json" "$work/edited.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["clgrad_version"] = "0.0.9"
json.dump(r, open(sys.argv[2], "w"))
r["clgrad_version"] = json.load(open(sys.argv[1]))["clgrad_version"]
w = r.pop("workload")
json.dump(r, open(sys.argv[3], "w"))
r["workload"] = dict(w, fingerprint="0000000000000000")
json.dump(r, open(sys.argv[4], "w"))
PY
refused "$work/a/report.json" "$work/old-version.json" "clgrad version $version vs 0.0.9"
refused "$work/a/report.json" "$work/no-workload.json" "no-workload.json records no clgrad version or workload"
refused "$work/a/report.json" "$work/edited.json" "workload fingerprint $fp vs 0000000000000000"
# malformed reports (they used to merge with exit status 0): devices not a list, a schema_version
# no clgrad writes
python3 - "$work/b/report.json" "$work/devices-string.json" "$work/version-huge.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
json.dump(dict(r, devices="cpu"), open(sys.argv[2], "w"))
json.dump(dict(r, schema_version=1e308), open(sys.argv[3], "w"))
PY
for bad in devices-string:'its "devices" is not a non-empty list' version-huge:'schema_version 1e+308 is not one'; do
	f=${bad%%:*} msg=${bad#*:}
	rc=0
	"$clgrad" compare --merge "$work/a/report.json" "$work/$f.json" --out "$work/bad-$f" >"$work/out.txt" 2>"$work/err.txt" || rc=$?
	[ $rc = 2 ] || { cat "$work/err.txt"; fail "merge of $f.json must be refused with status 2, got $rc"; }
	grep -qF -- "$f.json: a malformed report: $msg" "$work/err.txt" || { cat "$work/err.txt"; fail "$f.json: no clear message"; }
done
echo "test_compare_merge: ok"
