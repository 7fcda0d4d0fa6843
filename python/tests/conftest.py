"""Every test runs on each device present (the reference, then each OpenCL device but simulators),
as the C op suite does; CLGRAD_PYTEST_DEVICES="0,1" narrows them."""
import os

import pytest

import clgrad


def _devices():
    want = os.environ.get("CLGRAD_PYTEST_DEVICES")
    ds = [d for d in clgrad.devices() if not d["simulator"] and not d["crashed"]]
    if want:
        keep = {int(x) for x in want.split(",")}
        ds = [d for d in ds if d["index"] in keep]
    return [d["index"] for d in ds]


DEVICES = _devices()


def pytest_report_header(config):
    return "clgrad devices: " + ", ".join("%d %s" % (d["index"], d["name"]) for d in clgrad.devices()
                                          if d["index"] in DEVICES)


@pytest.fixture(params=DEVICES, ids=lambda i: "dev%d" % i)
def dev(request):
    return clgrad.device(request.param)


@pytest.fixture(params=[i for i in DEVICES if i != 0] or [0], ids=lambda i: "dev%d" % i)
def cl_dev(request):
    """An OpenCL device (the reference where none is present)."""
    return clgrad.device(request.param)
