"""clgrad's comparison mode from Python: identical workloads on every device, each in a child
process with a watchdog (docs/COMPARE.md); the C library's clg_compare_run does the work.

    report = clgrad.compare(devices="all", suite="ops,train", quick=True)
    for d in report["devices"]:
        print(d["name"], d["status"], d["scores"]["overall"])
"""

import json
import os
import shutil
import tempfile

from . import _C


class Report(dict):
    """report.json as a dict; ``out_dir`` is the folder that holds it with report.md and report.html."""

    out_dir = None


def worker_program():
    """The clgrad command each device's child runs: the one in this package (a pip install puts it
    there), else ``clgrad`` on PATH."""
    bundled = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "clgrad")
    if os.access(bundled, os.X_OK):
        return bundled
    found = shutil.which("clgrad")
    if found:
        return found
    raise FileNotFoundError(
        "clgrad.compare: no clgrad command to run the devices' workers: not in the package "
        f"({bundled}), not on PATH"
    )


def compare(devices="all", suite="peak,compile,ops,train", quick=False, out=None, timeout=0.0,
            baseline=None, data=None, verbose=False):
    """Runs the comparison on `devices` ("all" or specs such as "ref,pocl"; a list is joined) with
    the sections of `suite` and returns report.json as a :class:`Report`.

    quick: the short workloads (about 2 minutes for the reference and PoCL). out: the run's folder
    (None: a new temporary one, kept: its path is ``report.out_dir``). timeout: seconds per device
    (0: the library's default). baseline: an earlier report.json to diff against. data: the
    Fashion-MNIST folder of the train section. verbose: progress on stderr and the table on stdout.
    A device that fails, crashes or hangs is a row of the report, not an exception; what the
    caller gave wrong raises ValueError naming it; Ctrl-C stops the running worker and raises
    KeyboardInterrupt."""
    if not isinstance(devices, str):
        devices = ",".join(str(d) for d in devices)
    if not isinstance(suite, str):
        suite = ",".join(suite)
    if out is None:
        out = tempfile.mkdtemp(prefix="clgrad-compare-")
    path, _, _ = _C.run_compare(os.fspath(out), worker_program(), devices, suite, int(bool(quick)),
                                float(timeout), None if baseline is None else os.fspath(baseline),
                                None if data is None else os.fspath(data), bool(verbose))
    with open(path, encoding="utf-8") as f:
        report = Report(json.load(f))
    report.out_dir = os.fspath(out)
    return report
