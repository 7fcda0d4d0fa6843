#!/usr/bin/env python3
"""An independent safetensors reader and writer (json + struct only) for test_safetensors.

  check_safetensors.py verify FILE   checks a file the C test wrote: layout rules of the format
                                     and every expected value and metadata entry, exactly
  check_safetensors.py write FILE    writes a file with known contents for the C reader: keys in
                                     no particular order, json.dumps spacing and \\u escapes, an
                                     unpadded header and tensors that are not aligned

If the `safetensors` and `numpy` packages are importable, `verify` also loads the file with them.
Exit status 0 when everything matches, 1 otherwise.
"""
import json
import struct
import sys

FMT = {"F32": ("f", 4), "F64": ("d", 8), "I32": ("i", 4), "F16": ("e", 2), "BF16": ("H", 2)}


def bf16(bits):
    """bfloat16 bits as a float: the top half of a float32's bits"""
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]

# What test_safetensors.c writes (keep in sync with expected_roundtrip there).
EXPECTED = {
    "weight": ("F32", [2, 3], [k * 0.25 - 0.5 for k in range(6)]),
    "bias": ("F32", [3], [1.5, -2.0, 3.25]),
    "step": ("I32", [], [42]),
    "idx": ("I32", [4], [-1, 0, 7, 2147483647]),
    "dbl": ("F64", [2, 2], [1.0 / 3.0, -1e300, 2.5, 0.0]),
    "empty": ("F32", [0, 3], []),
    'layers.0/w"q': ("F32", [1], [7.0]),
    "bf": ("BF16", [3], [1.0, -2.5, 0.15625]),
    # float16: the largest finite half, the smallest subnormal, a negative zero
    "hf": ("F16", [6], [1.0, -2.0, 0.5, 65504.0, 2.0 ** -24, -0.0]),
}
EXPECTED_META = {"format": "pt", "epoch": "3", "note": 'tab\tquote"backslash\\ \u00e9 \u2713'}


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def verify(path):
    errors = []
    with open(path, "rb") as fh:
        blob = fh.read()
    if len(blob) < 8:
        return ["file shorter than 8 bytes"]
    (hlen,) = struct.unpack("<Q", blob[:8])
    if 8 + hlen > len(blob):
        return ["header length %d past the end of the file" % hlen]
    raw = blob[8:8 + hlen]
    if (8 + hlen) % 8:
        errors.append("header not padded to 8-byte alignment (8 + %d)" % hlen)
    if not raw.startswith(b"{"):
        errors.append("header does not start with '{'")
    header = json.loads(raw.decode("utf-8"))
    data = blob[8 + hlen:]
    meta = header.pop("__metadata__", None)
    if meta != EXPECTED_META:
        errors.append("metadata %r, expected %r" % (meta, EXPECTED_META))
    spans = sorted((info["data_offsets"][0], info["data_offsets"][1], name) for name, info in header.items())
    at = 0
    for begin, end, name in spans:
        if begin != at:
            errors.append("tensor %r starts at %d, expected %d (gap or overlap)" % (name, begin, at))
        at = end
    if at != len(data):
        errors.append("tensors end at %d, data has %d bytes" % (at, len(data)))
    if set(header) != set(EXPECTED):
        errors.append("tensor names %r, expected %r" % (sorted(header), sorted(EXPECTED)))
    for name, (dtype, shape, values) in EXPECTED.items():
        info = header.get(name)
        if info is None:
            continue
        if set(info) != {"dtype", "shape", "data_offsets"}:
            errors.append("%r has keys %r" % (name, sorted(info)))
        if info.get("dtype") != dtype or info.get("shape") != shape:
            errors.append("%r is %s %r, expected %s %r" % (name, info.get("dtype"), info.get("shape"), dtype, shape))
            continue
        code, size = FMT[dtype]
        begin, end = info["data_offsets"]
        if begin % size:
            errors.append("%r at offset %d is not aligned to %d" % (name, begin, size))
        got = list(struct.unpack("<%d%s" % ((end - begin) // size, code), data[begin:end]))
        if dtype == "BF16":
            got = [bf16(b) for b in got]
        want = [f32(v) for v in values] if dtype == "F32" else values
        if got != want:
            errors.append("%r holds %r, expected %r" % (name, got, want))
    try:
        import numpy  # noqa: F401
        from safetensors.numpy import load_file
    except ImportError:
        print("note: safetensors/numpy not importable; checked with json + struct only")
    else:
        tensors = load_file(path)
        for name, (dtype, shape, values) in EXPECTED.items():
            arr = tensors[name]
            if list(arr.shape) != shape or [float(v) for v in arr.reshape(-1)] != [
                    float(f32(v) if dtype == "F32" else v) for v in values]:
                errors.append("safetensors package reads %r differently" % name)
        print("safetensors package: read %d tensors" % len(tensors))
    return errors


def write(path):
    # data order h, a, b, c: 'a' (F32) starts at byte 6 and 'c' (F64) at byte 34 of the data, and
    # the header is not padded, so the C reader must cope with unaligned tensors
    tensors = [
        ("h", "F16", [3], struct.pack("<3e", 1.0, -2.0, 0.5)),
        ("a", "F32", [3], struct.pack("<3f", 0.5, -1.0, 2.0)),
        ("b", "I32", [2, 2], struct.pack("<4i", 1, 2, 3, -4)),
        ("c", "F64", [1], struct.pack("<d", 3.141592653589793)),
        ("g", "BF16", [2], struct.pack("<2H", 0x3f80, 0xc020)),
    ]
    header, data = {}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"shape": shape, "data_offsets": [len(data), len(data) + len(raw)], "dtype": dtype}
        data += raw
    header = {"c": header["c"], "__metadata__": {"source": "python", "emoji": "\U0001F600 \u00e9"},
              "b": header["b"], "h": header["h"], "g": header["g"], "a": header["a"]}
    text = json.dumps(header).encode("ascii")  # ", " and ": " spacing, \\u escapes
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(text)) + text + data)
    return []


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("verify", "write"):
        print(__doc__)
        return 2
    errors = verify(sys.argv[2]) if sys.argv[1] == "verify" else write(sys.argv[2])
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print("%s %s: ok" % (sys.argv[1], sys.argv[2]))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
