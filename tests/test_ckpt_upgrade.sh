#!/usr/bin/env bash
# A transformer checkpoint of format clgrad-checkpoint-1 (three (D, D) Q, K, V layers) is refused
# with the reason and the converter's name; scripts/ckpt_upgrade.py turns it into one the loader
# takes (the tiny transformer of the fuzz target's seed corpus, Adam state included).
# usage: test_ckpt_upgrade.sh SOURCE_DIR CLGRAD REPLAY_CHECKPOINT
set -u
src=$1 clgrad=$2 replay=$3
old=$src/tests/data/ckpt/transformer_format1.safetensors
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "test_ckpt_upgrade: $*"; exit 1; }

out=$("$clgrad" eval --checkpoint "$old" --device ref 2>&1) && fail "format 1 loaded: $out"
echo "$out" | grep -q "clgrad-checkpoint-1, from before its Q, K and V projections became one" || fail "no reason: $out"
echo "$out" | grep -q "ckpt_upgrade.py" || fail "no converter named: $out"
command -v python3 >/dev/null || { echo "python3 missing: skipped"; exit 77; }
mkdir "$work/in" "$work/both"
python3 "$src/scripts/ckpt_upgrade.py" "$old" "$work/in/new.safetensors" || fail "converter failed"
"$replay" "$work/in" | grep -q "1 input(s) ran, 1 accepted" || fail "the converted file is not accepted"
cp "$old" "$work/both/old.safetensors"
"$replay" "$work/both" | grep -q "1 input(s) ran, 0 accepted" || fail "the old file is accepted"
# a format-1 file without block 0's K weight: refused with the tensor's name, no output written
python3 - "$old" "$work/broken.safetensors" <<'PY' || fail "could not make the broken fixture"
import json, struct, sys
data = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + n])
del header["model.2.2.weight"]
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(h)) + h + data[8 + n:])
PY
out=$(python3 "$src/scripts/ckpt_upgrade.py" "$work/broken.safetensors" "$work/out.safetensors" 2>&1) &&
	fail "a checkpoint without model.2.2.weight was converted"
echo "$out" | grep -q "model.2.2.weight missing" || fail "the refusal does not name the missing tensor: $out"
ls "$work" | grep -q "^out.safetensors" && fail "a refused conversion left a file: $(ls "$work")"
echo "test_ckpt_upgrade: passed"
