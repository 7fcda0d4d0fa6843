"""clgrad.compare(): the comparison mode through the C library (compare/clgrad_compare.h), with
the command the package carries as each device's worker."""

import os

import pytest

import clgrad


def test_compare_reference_device_report(tmp_path):
    report = clgrad.compare(devices="ref", suite="compile", quick=True, out=tmp_path / "run")
    assert report["schema"] == "clgrad-compare/1"
    assert [d["index"] for d in report["devices"]] == [0]
    assert report["devices"][0]["status"] == "ok"
    assert report.out_dir == os.fspath(tmp_path / "run")
    for name in ("report.json", "report.md", "report.html"):
        assert (tmp_path / "run" / name).is_file()


def test_compare_refusals_raise_value_error(tmp_path):
    with pytest.raises(ValueError, match="unknown suite in 'warp'"):
        clgrad.compare(devices="ref", suite="warp", out=tmp_path / "a")
    with pytest.raises(ValueError, match="no-such-device"):
        clgrad.compare(devices="no-such-device", suite="compile", out=tmp_path / "b")
    bad = tmp_path / "not-a-report.json"
    bad.write_text('{"schema": "other"}')
    with pytest.raises(ValueError, match="--baseline"):
        clgrad.compare(devices="ref", suite="compile", baseline=bad, out=tmp_path / "c")


def test_compare_worker_program_is_the_packaged_command():
    program = clgrad._compare.worker_program()
    assert os.access(program, os.X_OK)


def test_compare_example_runs(tmp_path):
    import subprocess
    import sys
    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python", "compare.py")
    done = subprocess.run([sys.executable, example, "--devices", "ref", "--suite", "compile", "--out",
                           str(tmp_path / "ex")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "reference" in done.stdout and f"report: {tmp_path / 'ex'}/report.html" in done.stdout
