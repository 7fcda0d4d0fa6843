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
echo "test_ckpt_upgrade: passed"
