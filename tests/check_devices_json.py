#!/usr/bin/env python3
"""Runs `clgrad devices --json` and validates the document (used by the cli_devices_json test).

usage: check_devices_json.py <path to clgrad>
Exit codes: 0 valid, 1 invalid, 77 when no OpenCL device is present (ctest SKIP_RETURN_CODE).
"""
import json
import os
import subprocess
import sys

STRINGS = ["type", "platform", "platform_version", "platform_vendor", "vendor", "name", "opencl_version",
           "opencl_c_version", "driver_version"]
INTEGERS = ["index", "compute_units", "clock_mhz", "global_mem_bytes", "max_alloc_bytes",
            "local_mem_bytes", "timer_resolution_ns"]
BOOLEANS = ["fp16", "fp64", "subgroups", "integer_dot_product", "il"]
TYPES = {"ref", "cpu", "gpu", "accelerator", "other"}


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    proc = subprocess.run([sys.argv[1], "devices", "--json"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    errors = []
    if proc.returncode != 0:
        print("clgrad devices --json exited %d: %s" % (proc.returncode, proc.stderr), file=sys.stderr)
        return 1
    table = subprocess.run([sys.argv[1], "devices"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=120).stdout
    try:
        doc = json.loads(proc.stdout)
    except ValueError as e:
        print("not JSON (%s):\n%s" % (e, proc.stdout), file=sys.stderr)
        return 1
    devices = doc.get("devices") if isinstance(doc, dict) else None
    if not isinstance(devices, list) or not devices:
        print("no 'devices' list in:\n%s" % proc.stdout, file=sys.stderr)
        return 1
    for pos, dev in enumerate(devices):
        where = "device %d" % pos
        if not isinstance(dev, dict):
            errors.append("%s: not an object" % where)
            continue
        if not isinstance(dev.get("extensions"), list):
            errors.append("%s: 'extensions' is not an array" % where)
        for key in STRINGS + INTEGERS + BOOLEANS:
            if key not in dev:
                errors.append("%s: missing key '%s'" % (where, key))
        for key in STRINGS:
            if key in dev and not isinstance(dev[key], str):
                errors.append("%s: '%s' is not a string: %r" % (where, key, dev[key]))
        for key in INTEGERS:
            v = dev.get(key)
            if key in dev and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                errors.append("%s: '%s' is not a non-negative integer: %r" % (where, key, v))
        for key in BOOLEANS:
            if key in dev and not isinstance(dev[key], bool):
                errors.append("%s: '%s' is not a boolean: %r" % (where, key, dev[key]))
        # the float16 path: native half arithmetic exactly where the device reports cl_khr_fp16
        # (unless CLGRAD_NATIVE_HALF=0 turns it off)
        # and no float16 self-test on record turned it off (fp16_off_why says why)
        if not isinstance(dev.get("fp16_off_why"), str):
            errors.append("%s: fp16_off_why %r is not a string" % (where, dev.get("fp16_off_why")))
        want = ("native" if dev.get("fp16") and os.environ.get("CLGRAD_NATIVE_HALF") != "0" and not dev.get("fp16_off_why")
                else "storage only")
        if dev.get("fp16_path") != want:
            errors.append("%s: fp16_path %r, expected %r" % (where, dev.get("fp16_path"), want))
        if dev.get("index") != pos:
            errors.append("%s: index %r" % (where, dev.get("index")))
        if dev.get("type") not in TYPES:
            errors.append("%s: unknown type %r" % (where, dev.get("type")))
        if pos == 0:
            if dev.get("type") != "ref":
                errors.append("device 0 is not the reference backend: %r" % dev.get("type"))
            continue
        for key in ["platform", "platform_version", "platform_vendor", "vendor", "name", "opencl_version",
                    "opencl_c_version", "driver_version"]:
            if not dev.get(key):
                errors.append("%s: empty '%s'" % (where, key))
        # the full extension list, and the feature flags agree with it
        ext = dev.get("extensions")
        if not isinstance(ext, list) or not ext or not all(isinstance(e, str) and e.startswith("cl_") for e in ext):
            errors.append("%s: 'extensions' is not a non-empty array of cl_* names: %r" % (where, ext))
            ext = []
        if dev.get("fp16") != ("cl_khr_fp16" in ext):
            errors.append("%s: fp16 %r but extensions %s cl_khr_fp16" % (where, dev.get("fp16"),
                          "name" if "cl_khr_fp16" in ext else "lack"))
        if "cl_khr_fp64" in ext and dev.get("fp64") is not True:
            errors.append("%s: cl_khr_fp64 listed but fp64 is %r" % (where, dev.get("fp64")))
        if dev.get("subgroups") != ("cl_khr_subgroups" in ext or "cl_intel_subgroups" in ext):
            errors.append("%s: subgroups %r disagrees with the extensions" % (where, dev.get("subgroups")))
        # the table names each stack: platform vendor, device vendor, driver
        for key in ["platform_vendor", "vendor", "driver_version"]:
            if dev.get(key) and dev[key] not in table:
                errors.append("%s: `clgrad devices` does not show %s %r" % (where, key, dev[key]))
        for key in ["compute_units", "global_mem_bytes", "max_alloc_bytes"]:
            if not dev.get(key):
                errors.append("%s: '%s' is zero" % (where, key))
        if isinstance(dev.get("opencl_version"), str) and not dev["opencl_version"].startswith("OpenCL "):
            errors.append("%s: opencl_version %r" % (where, dev["opencl_version"]))
    default = doc.get("default")
    if not isinstance(default, int) or isinstance(default, bool) or not 0 <= default < len(devices):
        errors.append("'default' is %r, not a device index" % (default,))
    # what train/eval/bench use when no device is named, per model, and why (never a simulator)
    auto = doc.get("auto")
    if not isinstance(auto, list) or [a.get("model") for a in auto] != ["mlp", "cnn", "transformer"]:
        errors.append("'auto' does not list the picks for mlp, cnn and transformer: %r" % (auto,))
    else:
        for a in auto:
            i = a.get("device")
            if not isinstance(i, int) or not 0 <= i < len(devices):
                errors.append("auto %s: device %r is not a device index" % (a["model"], i))
            elif "oclgrind" in (devices[i].get("name", "") + devices[i].get("platform", "")).lower():
                errors.append("auto %s: picks the simulator" % a["model"])
            if a.get("basis") not in ("measured", "no measurement") or not a.get("why"):
                errors.append("auto %s: basis %r, why %r" % (a["model"], a.get("basis"), a.get("why")))
            if not str(a.get("job", "")).startswith("train " + a["model"] + " "):
                errors.append("auto %s: job %r" % (a["model"], a.get("job")))
        if not all(a.get("why", "").split(":")[0] in table for a in auto if isinstance(a, dict)):
            errors.append("`clgrad devices` does not give the auto picks' reasons")
    for dev in devices:
        print("%s %-4s %s | %s" % (dev.get("index"), dev.get("type"), dev.get("platform"), dev.get("name")))
    if errors:
        for e in errors:
            print("error: " + e, file=sys.stderr)
        return 1
    if len(devices) < 2:
        print("no OpenCL device present: skipped the cpu-device check")
        return 77
    if not any(d.get("type") == "cpu" for d in devices):
        print("error: no cpu device in the list", file=sys.stderr)
        return 1
    print("devices --json: %d devices, valid" % len(devices))
    return 0


if __name__ == "__main__":
    sys.exit(main())
