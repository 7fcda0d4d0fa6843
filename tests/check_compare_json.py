#!/usr/bin/env python3
"""Checks a `clgrad compare` report.json against its schema (written out below as Python data,
checked by hand-written code: no packages needed) and, with --populated, that every section the
run selected was filled on every device that finished; --finished: every device finished (ok or
partial, not error, crashed or timeout).

usage: check_compare_json.py REPORT.json [--populated] [--finished] [--status INDEX=STATUS ...]
                             [--compile-fail INDEX] [--baseline-changes]
Exit 0 when everything holds, 1 with one line per problem otherwise."""
import json
import sys

NUM, INT, STR, BOOL, NULL = "num", "int", "str", "bool", "null"

def opt(*types):
    return tuple(types) + (NULL,)

# Each section's members, as compare/compare.h fixes them. A section that could not run holds
# "error" (a string) instead, and is checked only for that.
CAPABILITIES = {
    "platform": STR, "platform_vendor": STR, "vendor": STR, "name": STR, "cl_version": STR,
    "clc_version": STR, "extensions": [STR],
    "driver_version": STR, "compute_units": INT, "clock_mhz": INT, "global_mem": INT,
    "local_mem": INT, "max_alloc": INT, "max_wg_size": INT, "timer_resolution_ns": INT,
    "has_fp16": BOOL, "has_fp64": BOOL, "has_subgroups": BOOL, "has_int_dot": BOOL,
    "has_il": BOOL, "max_alloc_ratio": opt(NUM), "binary_roundtrip": opt(BOOL),
    "binary_roundtrip_note": opt(STR),
}
PEAKS = {
    "fp32_gflops": opt(NUM), "fp16_gflops": opt(NUM), "fp64_gflops": opt(NUM),
    "bandwidth_gbs": opt(NUM), "h2d_gbs": opt(NUM), "d2h_gbs": opt(NUM),
    "launch_latency_us": opt(NUM), "fft_gflops": opt(NUM),
    "fft_path": opt("clfft", "planar", "own", "bluestein", "reference"),
    "rejected": [{"what": STR, "value": opt(NUM), "why": STR}],
}
COMPILE = {
    "programs": [{"name": STR, "ok": BOOL, "cold_s": opt(NUM), "warm_s": opt(NUM), "log": opt(STR)}],
    "total_cold_s": opt(NUM), "total_warm_s": opt(NUM), "driver_cache_disabled": BOOL,
}
ROOFLINE = {
    "points": [{"name": STR, "kind": ("gemm", "conv", "ew", "fft"), "flops": NUM, "bytes": NUM,
                "seconds": opt(NUM), "gflops": opt(NUM), "gbs": opt(NUM), "intensity": opt(NUM),
                "fraction_of_peak": opt(NUM)}],
}
OPS = {
    "ops": [{"op": STR, "pass": INT, "fail": INT, "unsupported": INT, "worst_err": opt(NUM),
             "threshold": opt(NUM)}],
    "grad": [{"case": STR, "ok": opt(BOOL), "worst_rel_err": opt(NUM), "tol": opt(NUM)}],
    "totals": {"pass": INT, "fail": INT, "unsupported": INT, "grad_pass": INT, "grad_fail": INT},
    "routed": [{"op": STR, "action": ("fallback", "unsupported"), "why": STR}],
}
TRAIN = {
    "runs": [{"model": ("mlp", "cnn", "transformer"), "steps": INT, "batch": INT,
              "losses": [opt(NUM)], "step_ms_median": opt(NUM), "samples_per_s": opt(NUM),
              "repeat_identical": opt(BOOL), "error": opt(STR)}],
}
SECTIONS = {"capabilities": CAPABILITIES, "peaks": PEAKS, "compile": COMPILE,
            "roofline": ROOFLINE, "ops": OPS, "train": TRAIN}
# the sections each suite selects (capabilities always runs)
SUITE_SECTIONS = {"peak": ["peaks", "roofline"], "compile": ["compile"], "ops": ["ops"], "train": ["train"]}
SCORES = {k: opt(NUM) for k in ("features", "compile", "correctness", "performance", "stability", "overall")}
STATUSES = ("ok", "partial", "error", "crashed", "timeout")
DEVICE = {
    "index": INT, "name": STR, "type": STR, "platform": STR, "driver": STR, "label": STR,
    "status": STATUSES, "detail": STR, "exit": opt(INT),
    "elapsed_s": opt(NUM), "log": STR, "sections": dict, "train_divergence": dict, "scores": SCORES,
}
BASELINE = {
    "file": STR, "created": opt(STR),
    "devices": [{"index": INT, "name": STR, "in_baseline": BOOL,
                 "changes": [{"what": STR, "old": opt(NUM, STR), "new": opt(NUM, STR)}]}],
}
# the findings of each platform's devices (compare/compare_vendors.c)
VENDOR = {
    "platform": STR, "platform_vendor": STR, "driver": STR, "devices": [INT],
    "failed": [{"device": INT, "what": STR, "detail": STR}],
    "routed": [{"device": INT, "op": STR, "why": STR}],
    "fallback": [{"device": INT, "op": STR, "why": STR}],
}
# the maturity reading (compare/compare_maturity.c): per stack, and per platform seen with two drivers
MATURITY = {
    "slow_fraction": NUM,
    "stacks": [{"device": INT, "label": STR, "status": STATUSES, "verdict": STR,
                "failed": [{"what": STR, "detail": STR}],
                "routed": [{"op": STR, "action": STR, "why": STR, "evidence": STR}],
                "median_fraction_of_peak": opt(NUM),
                "slow": [{"name": STR, "fraction_of_peak": NUM, "gflops": opt(NUM), "bound_gflops": opt(NUM)}]}],
    "generations": [{"platform": STR, "old_device": INT, "old_driver": STR, "new_device": INT, "new_driver": STR,
                     "changed": [{"what": STR, "old": STR, "new": STR}],
                     "speed": [{"what": STR, "unit": STR, "old": NUM, "new": NUM, "ratio": NUM}]}],
}
REPORT = {
    "schema": ("clgrad-compare/1",), "schema_version": INT, "created": STR, "command": STR,
    "machine": {"hostname": STR, "uname": STR, "cpu": STR, "cpus": INT},
    "quick": BOOL, "suites": [("peak", "compile", "ops", "train")], "devices": [DEVICE],
    "vendors": [VENDOR], "maturity": MATURITY, "baseline": opt(BASELINE),
}
# what --merge requires to be equal (compare/compare_workload.c): written by every run, absent only in
# a re-render of a run that never had them
WORKLOAD = {"clgrad_version": STR,
            "workload": {"fingerprint": STR, "mode": ("quick", "full"),
                         "suites": [("peak", "compile", "ops", "train")]}}


def check_vendors(report, errors):
    """Each device is in one vendor group, named by its platform; its label says platform, device
    and driver; every failing op, failed gradient check and routed op is listed under its vendor."""
    groups = {}
    for v in report.get("vendors", []):
        for i in v.get("devices", []):
            if i in groups:
                errors.append(f"vendors: device {i} is in two groups")
            groups[i] = v
    for dev in report.get("devices", []):
        i, secs = dev.get("index"), dev.get("sections", {})
        where = f"device {i}"
        v = groups.get(i)
        if v is None:
            errors.append(f"{where}: in no vendor group")
            continue
        caps = secs.get("capabilities", {})
        if isinstance(caps.get("platform"), str) and caps["platform"]:
            if v.get("platform") != caps["platform"]:
                errors.append(f"{where}: grouped under {v.get('platform')!r}, platform {caps['platform']!r}")
            if "driver" in v and v["driver"] != caps.get("driver_version", ""):
                errors.append(f"{where}: grouped under driver {v['driver']!r}, its driver {caps.get('driver_version')!r}")
            label = dev.get("label", "")
            for part in (caps["platform"], dev.get("name", ""), caps.get("driver_version", "")):
                if part and part not in label:
                    errors.append(f"{where}: label {label!r} does not name {part!r}")
        ops = secs.get("ops", {})
        failed = {(f["device"], f["what"]) for f in v.get("failed", [])}
        for o in ops.get("ops", []) if isinstance(ops, dict) else []:
            if isinstance(o.get("fail"), int) and o["fail"] > 0 and (i, o["op"]) not in failed:
                errors.append(f"{where}: failing op {o['op']} not in its vendor's findings")
        for g in ops.get("grad", []) if isinstance(ops, dict) else []:
            if g.get("ok") is False and (i, g["case"]) not in failed:
                errors.append(f"{where}: failed gradient {g['case']} not in its vendor's findings")
        for rt in ops.get("routed", []) if isinstance(ops, dict) else []:
            kind = "fallback" if rt.get("action") == "fallback" else "routed"
            if not any(x["device"] == i and x["op"] == rt.get("op") for x in v.get(kind, [])):
                errors.append(f"{where}: routed op {rt.get('op')} not under {kind} in its vendor's findings")


def is_type(v, t):
    if t == NULL:
        return v is None
    if t == BOOL:
        return isinstance(v, bool)
    if t == INT:
        return isinstance(v, int) and not isinstance(v, bool)
    if t == NUM:
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if t == STR:
        return isinstance(v, str)
    if t is dict:
        return isinstance(v, dict)
    return False


def check(v, spec, where, errors):
    """spec: a type name, dict (object with these members; extra members allowed), a one-element
    list (array of that), or a tuple (alternatives: type names, literal strings, nested specs)."""
    if isinstance(spec, dict):
        if not isinstance(v, dict):
            errors.append(f"{where}: expected an object, got {type(v).__name__}")
            return
        for k, s in spec.items():
            if k not in v:
                errors.append(f"{where}: member '{k}' missing")
            else:
                check(v[k], s, f"{where}.{k}", errors)
    elif isinstance(spec, list):
        if not isinstance(v, list):
            errors.append(f"{where}: expected an array, got {type(v).__name__}")
            return
        for i, item in enumerate(v):
            check(item, spec[0], f"{where}[{i}]", errors)
    elif isinstance(spec, tuple):
        for alt in spec:
            if isinstance(alt, (dict, list)):
                sub = []
                check(v, alt, where, sub)
                if not sub:
                    return
            elif alt in (NUM, INT, STR, BOOL, NULL) or alt is dict:
                if is_type(v, alt):
                    return
            elif v == alt:
                return
        errors.append(f"{where}: {json.dumps(v)[:60]} is none of {spec}")
    elif not is_type(v, spec):
        errors.append(f"{where}: expected {spec if isinstance(spec, str) else spec.__name__}, "
                      f"got {json.dumps(v)[:60]}")


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    path, args = argv[1], argv[2:]
    populated = "--populated" in args
    want_status, compile_fail, baseline_changes = {}, [], "--baseline-changes" in args
    for i, a in enumerate(args):
        if a == "--status":
            k, s = args[i + 1].split("=")
            want_status[int(k)] = s
        if a == "--compile-fail":
            compile_fail.append(int(args[i + 1]))
    with open(path) as f:
        report = json.load(f)
    errors, unfilled = [], []
    check(report, REPORT, "report", errors)
    if "workload" in report or "--finished" in args:
        check(report, WORKLOAD, "report", errors)
    selected = ["capabilities"] + [s for suite in report.get("suites", []) for s in SUITE_SECTIONS.get(suite, [])]
    for dev in report.get("devices", []):
        where = f"device {dev.get('index')}"
        secs = dev.get("sections", {})
        for name, sec in secs.items():
            if name not in SECTIONS:
                errors.append(f"{where}: unknown section '{name}'")
                continue
            check(sec, {"elapsed_s": opt(NUM), "ok": BOOL}, f"{where}.{name}", errors)
            if isinstance(sec, dict) and "error" in sec and sec["error"] is not None:
                check(sec["error"], STR, f"{where}.{name}.error", errors)
                unfilled.append(f"{where}: section {name} could not run: {sec['error']}")
            else:
                check(sec, SECTIONS[name], f"{where}.{name}", errors)
        if populated and dev.get("status") in ("ok", "partial"):
            for name in selected:
                if name not in secs:
                    unfilled.append(f"{where}: section {name} missing")
        if "--finished" in args and dev.get("status") not in ("ok", "partial"):
            errors.append(f"{where}: did not finish: {dev.get('status')} ({dev.get('detail')})")
        idx = dev.get("index")
        if idx in want_status and dev.get("status") != want_status[idx]:
            errors.append(f"{where}: status {dev.get('status')} ({dev.get('detail')}), expected {want_status[idx]}")
        if idx in compile_fail:
            progs = secs.get("compile", {}).get("programs", [])
            if not any(p.get("ok") is False and p.get("log") for p in progs):
                errors.append(f"{where}: expected a failed program build (with its log) in section compile; "
                              f"compile section: {json.dumps(secs.get('compile'))[:200]}")
        for model, div in dev.get("train_divergence", {}).items():
            check(div, opt(NUM), f"{where}.train_divergence.{model}", errors)
    check_vendors(report, errors)
    for s in want_status:
        if not any(d.get("index") == s for d in report.get("devices", [])):
            errors.append(f"device {s}: not in the report")
    if baseline_changes:
        b = report.get("baseline")
        if not b or not any(d["changes"] for d in b.get("devices", [])):
            errors.append("baseline: no change recorded")
    if populated:
        errors += unfilled
    for e in errors:
        print("FAIL:", e)
    if not populated:
        for u in unfilled:
            print("note:", u)
    print(f"{path}: {len(report.get('devices', []))} devices, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
