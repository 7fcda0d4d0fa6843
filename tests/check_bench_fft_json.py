#!/usr/bin/env python3
"""Runs `clgrad bench fft --json` on small shapes and checks its output against the schema
clgrad-bench-fft/1 (cli/bench_fft.c; written out below, checked by hand: no packages needed):
every row of every length and batch asked for, numbers where numbers belong, the path one of
clg_fft_path's words, the FFTW ratio present exactly when FFTW is built in. With --check-only FILE
it checks a saved output instead (the test feeds it broken ones, which must fail).

usage: check_bench_fft_json.py CLGRAD [--device SPEC] | --check-only FILE LENGTHS BATCHES
Exit 0 when everything holds, 1 with one line per problem otherwise, 77 without a device."""
import json
import subprocess
import sys

PATHS = ("clFFT", "clFFT planar", "Bluestein", "own kernels", "reference")
TOP = {"schema": str, "device": str, "transform": ("c2c", "r2c"), "dims": int, "dtype": ("float32",), "reps": int,
       "flops_per_point": (int, float), "fftw": (str, type(None)), "rows": list, "failed_plans": list}
ROW = {"length": int, "batch": int, "path": PATHS, "first_ms": (int, float), "warm_ms": (int, float),
       "gflops": (int, float), "fftw_ms": (int, float, type(None)), "ratio_to_fftw": (int, float, type(None))}


def kind_ok(v, want):
    if isinstance(want, tuple) and all(isinstance(w, str) for w in want):
        return v in want
    if isinstance(v, bool):
        return False
    return isinstance(v, want)


def check(doc, lengths, batches):
    bad = []
    if not isinstance(doc, dict):
        return ["not an object"]
    for k, want in TOP.items():
        if k not in doc:
            bad.append("missing %s" % k)
        elif not kind_ok(doc[k], want):
            bad.append("%s: %r is not %s" % (k, doc[k], want))
    for k in doc:
        if k not in TOP:
            bad.append("unknown member %s" % k)
    if doc.get("dims") not in (1, 2):
        bad.append("dims %r is neither 1 nor 2" % doc.get("dims"))
    if doc.get("schema") != "clgrad-bench-fft/1":
        bad.append("schema %r" % doc.get("schema"))
    rows = doc.get("rows") if isinstance(doc.get("rows"), list) else []
    seen = set()
    for i, r in enumerate(rows):
        if not isinstance(r, dict):
            bad.append("rows[%d] not an object" % i)
            continue
        for k, want in ROW.items():
            if k not in r:
                bad.append("rows[%d]: missing %s" % (i, k))
            elif not kind_ok(r[k], want):
                bad.append("rows[%d].%s: %r is not %s" % (i, k, r[k], want))
        for k in r:
            if k not in ROW:
                bad.append("rows[%d]: unknown member %s" % (i, k))
        if not (isinstance(r.get("warm_ms"), (int, float)) and r["warm_ms"] > 0):
            bad.append("rows[%d]: warm_ms %r not positive" % (i, r.get("warm_ms")))
        has_fftw = doc.get("fftw") is not None
        if (r.get("fftw_ms") is not None) != has_fftw or (r.get("ratio_to_fftw") is not None) != has_fftw:
            bad.append("rows[%d]: FFTW figures %r / %r while fftw is %r" % (i, r.get("fftw_ms"), r.get("ratio_to_fftw"),
                                                                           doc.get("fftw")))
        if has_fftw and isinstance(r.get("ratio_to_fftw"), (int, float)) and isinstance(r.get("warm_ms"), (int, float)) \
                and isinstance(r.get("fftw_ms"), (int, float)) and r["warm_ms"] > 0 \
                and abs(r["ratio_to_fftw"] - r["fftw_ms"] / r["warm_ms"]) > 1e-6 * (1 + r["ratio_to_fftw"]):
            bad.append("rows[%d]: ratio_to_fftw %r is not fftw_ms / warm_ms" % (i, r["ratio_to_fftw"]))
        seen.add((r.get("length"), r.get("batch")))
    for n in lengths:
        for b in batches:
            if (n, b) not in seen:
                bad.append("no row for length %d batch %d" % (n, b))
    if not all(isinstance(p, str) and "failed on this device" in p for p in doc.get("failed_plans") or []):
        bad.append("failed_plans: %r" % doc.get("failed_plans"))
    return bad


def main(argv):
    if len(argv) >= 5 and argv[1] == "--check-only":
        with open(argv[2]) as f:
            try:
                doc = json.load(f)
            except ValueError as e:
                doc = "not JSON: %s" % e
        bad = check(doc, [int(x) for x in argv[3].split(",")], [int(x) for x in argv[4].split(",")])
    else:
        lengths, batches = [64, 17, 131], [1, 4]
        cmd = [argv[1], "bench", "fft", "--json", "--reps", "2", "--lengths", ",".join(map(str, lengths)),
               "--batches", ",".join(map(str, batches))] + argv[2:]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode != 0:
            if "no OpenCL device" in p.stderr or "No OpenCL" in p.stderr:
                return 77
            print("%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
            return 1
        try:
            doc = json.loads(p.stdout)
        except ValueError as e:
            print("not JSON (%s): %s" % (e, p.stdout[:400]))
            return 1
        bad = check(doc, lengths, batches)
        # Bluestein's path shows: 131 x 4 rows is above the direct sum's work limit
        if not any(r.get("length") == 131 and r.get("batch") == 4 and r.get("path") == "Bluestein"
                   for r in doc.get("rows", []) if isinstance(r, dict)) and "reference" not in str(doc.get("rows")):
            bad.append("length 131 batch 4 did not run Bluestein")
        # --2d: N x N planes over the last two dims (clg_fft2), the same schema with dims 2
        cmd2 = [argv[1], "bench", "fft", "--json", "--2d", "--reps", "2", "--lengths", "8,12", "--batches", "1,3"] + argv[2:]
        p = subprocess.run(cmd2, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        try:
            doc2 = json.loads(p.stdout) if p.returncode == 0 else "exit %d: %s" % (p.returncode, p.stderr.strip())
        except ValueError as e:
            doc2 = "not JSON (%s)" % e
        bad += ["--2d: " + b for b in check(doc2, [8, 12], [1, 3])]
        if isinstance(doc2, dict) and doc2.get("dims") != 2:
            bad.append("--2d: dims %r" % doc2.get("dims"))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
