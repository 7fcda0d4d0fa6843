"""Which device trains best here? clgrad's comparison mode from Python: the same workloads on every
device (or those named), each in its own process with a watchdog; prints each device's status and
scores and where the HTML report is.

    python examples/python/compare.py                 # every device, the short workloads
    python examples/python/compare.py --devices ref,pocl --suite ops,train --full
"""

import argparse

import clgrad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", default="all", help="all, or specs such as ref,pocl,intel (default: all)")
    ap.add_argument("--suite", default="peak,compile,ops,train", help="sections (default: all four)")
    ap.add_argument("--full", action="store_true", help="the full workloads instead of --quick's (minutes)")
    ap.add_argument("--out", default=None, help="the run's folder (default: a new temporary one)")
    args = ap.parse_args()

    report = clgrad.compare(devices=args.devices, suite=args.suite, quick=not args.full, out=args.out, verbose=True)
    print(f"\n{'device':42} {'status':8} {'overall':>7} {'correct':>7} {'perf':>6}")
    for d in report["devices"]:
        s = d.get("scores") or {}
        fmt = lambda v: "-" if v is None else f"{v:.0f}"  # noqa: E731
        print(f"{d['name'][:42]:42} {d['status']:8} {fmt(s.get('overall')):>7} {fmt(s.get('correctness')):>7} "
              f"{fmt(s.get('performance')):>6}")
    print(f"report: {report.out_dir}/report.html")


if __name__ == "__main__":
    main()
