#!/usr/bin/env python3
"""Upgrades a clgrad checkpoint of format clgrad-checkpoint-1 to clgrad-checkpoint-2.

Format 2 changed the transformer only: each block's Q, K and V projections (children 1, 2 and 3,
(D, D) weights and (D) biases) became one (D, 3D) layer (child 1: weight (3D, D), the rows of Q's,
K's and V's, bias (3D)), the later children moving down by two (4 out -> 2, 5 ln2 -> 3, 6 fc1 -> 4,
7 fc2 -> 5). The optimizer's state follows the parameters' order: the three projections' states are
joined the same way. Other models only get the new format string.

usage: scripts/ckpt_upgrade.py OLD.safetensors NEW.safetensors
Standard library only (the safetensors layout is simple: an 8-byte little-endian header length, a
JSON header, the tensors' bytes).
"""
import json
import os
import re
import struct
import sys

PER_OLD, PER_NEW = 16, 12  # parameters per block (8 or 6 layers of weight and bias)
# within a block: the old parameter slot (weight, bias of each child in order) -> the new one;
# Q's slots 2, 3 hold the joined tensors, K's and V's (4-7) are folded into them
SLOT = {0: 0, 1: 1, 8: 4, 9: 5, 10: 6, 11: 7, 12: 8, 13: 9, 14: 10, 15: 11}
CHILD = {0: 0, 4: 2, 5: 3, 6: 4, 7: 5}


def read(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    meta = header.pop("__metadata__", {})
    tensors = {k: (v["dtype"], v["shape"], body[v["data_offsets"][0]:v["data_offsets"][1]])
               for k, v in header.items()}
    return meta, tensors


def write(path, meta, tensors):
    header, body, off = {"__metadata__": meta}, b"", 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + len(raw)]}
        body += raw
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    # atomically: a temporary file beside it, then a rename (an interrupted run leaves no torn file)
    tmp = "%s.tmp.%d" % (path, os.getpid())
    try:
        with open(tmp, "wb") as f:
            f.write(struct.pack("<Q", len(h)) + h + body)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def join(parts, names):
    """Three tensors joined along dim 0; a clear error when one is missing or they do not fit."""
    if any(p is None for p in parts):
        raise SystemExit("ckpt_upgrade.py: %s missing: not a complete transformer checkpoint"
                         % ", ".join(n for n, p in zip(names, parts) if p is None))
    dtypes, shapes = {p[0] for p in parts}, [p[1] for p in parts]
    if len(dtypes) != 1 or any(s[1:] != shapes[0][1:] or not s for s in shapes):
        raise SystemExit("ckpt_upgrade.py: %s do not fit together (dtypes %s, shapes %s)"
                         % (", ".join(names), sorted(dtypes), shapes))
    return (parts[0][0], [sum(s[0] for s in shapes)] + shapes[0][1:], b"".join(p[2] for p in parts))


def upgrade(meta, tensors):
    if meta.get("format") != "clgrad-checkpoint-1":
        raise SystemExit("not a clgrad-checkpoint-1 file (format %r)" % meta.get("format"))
    meta = dict(meta, format="clgrad-checkpoint-2")
    if meta.get("model") != "transformer":
        return meta, tensors
    layers = int(meta.get("layers", "0"))
    out = {}
    for name, t in tensors.items():
        m = re.fullmatch(r"model\.(\d+)\.(\d+)\.(weight|bias)", name)
        if m and 2 <= int(m.group(1)) < 2 + layers:
            blk, child, kind = m.group(1), int(m.group(2)), m.group(3)
            if child == 1:
                names = ["model.%s.%d.%s" % (blk, c, kind) for c in (1, 2, 3)]
                out[name] = join([tensors.get(n) for n in names], names)
            elif child in CHILD:
                out["model.%s.%d.%s" % (blk, CHILD[child], kind)] = t
            continue
        m = re.fullmatch(r"optim\.(\d+)\.(\d+)", name)
        if m:
            i, slot = int(m.group(1)), m.group(2)
            if i < 2:
                out[name] = t
                continue
            b, k = divmod(i - 2, PER_OLD)
            if b >= layers:  # after the blocks: the final norm and the head
                out["optim.%d.%s" % (i - layers * (PER_OLD - PER_NEW), slot)] = t
            elif k in (2, 3):
                names = ["optim.%d.%s" % (2 + b * PER_OLD + k + 2 * c, slot) for c in range(3)]
                out["optim.%d.%s" % (2 + b * PER_NEW + k, slot)] = join([tensors.get(n) for n in names], names)
            elif k in SLOT:
                out["optim.%d.%s" % (2 + b * PER_NEW + SLOT[k], slot)] = t
            continue
        out[name] = t
    return meta, out


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    meta, tensors = read(sys.argv[1])
    write(sys.argv[2], *upgrade(meta, tensors))


if __name__ == "__main__":
    main()
