#!/usr/bin/env bash
# A language model's self-describing checkpoint (issue 34): the tokenizer, the data's fingerprint and
# path in the metadata; `clgrad eval` without --data finds the training text; another text is
# evaluated with the checkpoint's tokenizer (a note says so) or refused when it does not cover it;
# another model configuration, tokenizer or (for --resume) text is refused with ONE line each; a
# checkpoint from before (no tokenizer stored) still loads, or is refused by vocabulary size;
# `clgrad tokenize` writes a BPE that `train --tokenizer FILE` uses. On the reference backend, a
# tiny transformer: seconds.
# usage: test_lm_ckpt.sh CLGRAD_BINARY
set -u
clgrad=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
gpl3=/usr/share/common-licenses/GPL-3
gpl2=/usr/share/common-licenses/GPL-2
[ -r $gpl3 ] && [ -r $gpl2 ] || { echo "no $gpl3 / $gpl2: skipped"; exit 77; }
tiny=(--model transformer --dim 16 --heads 2 --layers 1 --seq-len 16 --batch 16 --limit 48 --device ref --seed 5)

# refused CMD...: exit status 1, one line on stderr matching $want
refused() {
	local want=$1
	shift
	"$@" > "$work/r.out" 2> "$work/r.err" && { cat "$work/r.out" "$work/r.err"; fail "accepted: $*"; }
	[ "$(wc -l < "$work/r.err")" = 1 ] || { cat "$work/r.err"; fail "not one line: $*"; }
	grep -q -- "$want" "$work/r.err" || { cat "$work/r.err"; fail "'$want' not in the refusal of: $*"; }
}
# strip_meta SRC DST: DST is SRC as a checkpoint from before (no tokenizer, data, data_path)
strip_meta() {
	python3 - "$1" "$2" <<'PY' || fail "writing an old checkpoint"
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8 + n])
for k in ("tokenizer", "data", "data_path"):
    del h["__metadata__"][k]
b = json.dumps(h).encode()
b += b" " * (-len(b) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(b)) + b + raw[8 + n:])
PY
}
loss_of() { sed -n 's/.*validation loss \([0-9.]*\) on .*/\1/p' "$1"; }

cp $gpl3 "$work/a.txt"
"$clgrad" train "${tiny[@]}" --epochs 1 --data "$work/a.txt" --save "$work/a.st" > "$work/a.out" 2>&1 ||
	{ cat "$work/a.out"; fail "training on a.txt"; }
grep -q "samples/s ([0-9.]* tokens/s)" "$work/a.out" || { cat "$work/a.out"; fail "no tokens/s in the epoch line"; }
python3 - "$work/a.st" "$work/a.txt" <<'PY' || fail "the checkpoint's metadata"
import json, os, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
meta = json.loads(raw[8:8 + n])["__metadata__"]
text = open(sys.argv[2], "rb").read()
h = 0xcbf29ce484222325
for b in text:
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
chars = "".join("%02x" % b for b in sorted(set(text)))
assert meta["tokenizer"] == "clgrad-tokenizer-1 chars " + chars, meta["tokenizer"][:80]
assert meta["data"] == "bytes=%d fnv1a64=%016x" % (len(text), h), meta["data"]
assert meta["data_path"] == os.path.realpath(sys.argv[2]), meta["data_path"]
assert meta["vocab"] == str(len(set(text))) and meta["dim"] == "16", meta
PY

# eval without --data: the training text, the same loss as naming it
"$clgrad" eval --checkpoint "$work/a.st" --device ref > "$work/e1.out" 2>&1 || { cat "$work/e1.out"; fail "eval without --data"; }
"$clgrad" eval --checkpoint "$work/a.st" --device ref --data "$work/a.txt" > "$work/e2.out" 2>&1 || fail "eval --data a.txt"
[ -n "$(loss_of "$work/e1.out")" ] && [ "$(loss_of "$work/e1.out")" = "$(loss_of "$work/e2.out")" ] ||
	{ cat "$work/e1.out" "$work/e2.out"; fail "eval without --data is not on the training text"; }
grep -q "^note:" "$work/e2.out" && fail "a note for the training text itself"
# another text the tokenizer covers: a note, and a loss
"$clgrad" eval --checkpoint "$work/a.st" --device ref --data $gpl2 > "$work/e3.out" 2>&1 || { cat "$work/e3.out"; fail "eval on GPL-2"; }
grep -q "^note: .*GPL-2 is not the text the checkpoint was trained on .*covers it" "$work/e3.out" ||
	{ cat "$work/e3.out"; fail "no note for another text"; }
[ -n "$(loss_of "$work/e3.out")" ] || fail "no loss on GPL-2"
# the same count of characters, one of them another (silently wrong before): not covered
python3 -c "
import sys; t = open('$work/a.txt', 'rb').read(); a = sorted(set(t))
new = next(c for c in range(33, 127) if c not in a)
open('$work/c.txt', 'wb').write(t.replace(bytes([a[-1]]), bytes([new])))"
refused "the checkpoint's tokenizer (chars of [0-9]* tokens) cannot encode the text: .*c.txt: .*byte 0x" \
	"$clgrad" eval --checkpoint "$work/a.st" --device ref --data "$work/c.txt"
# other model configuration, other tokenizer, other data (resume)
refused "other model configuration: --dim 32 (the checkpoint's: 16)" "$clgrad" eval --checkpoint "$work/a.st" --device ref --dim 32
refused "other model configuration: --layers 3 (the checkpoint's: 1)" \
	"$clgrad" train --resume "$work/a.st" --epochs 2 --device ref --limit 48 --layers=3
refused "other tokenizer: the checkpoint's is chars of [0-9]* tokens, --tokenizer gives bytes of 256 tokens" \
	"$clgrad" eval --checkpoint "$work/a.st" --device ref --tokenizer bytes
refused "other data: it was trained on .*a.txt (bytes=" \
	"$clgrad" train --resume "$work/a.st" --epochs 2 --device ref --limit 48 --data $gpl2
refused "--tokenizer: only for a language model" "$clgrad" train --model mlp --tokenizer bytes --device ref
# resume on the same text, without --data: goes on
"$clgrad" train --resume "$work/a.st" --epochs 2 --device ref --limit 48 > "$work/r2.out" 2>&1 ||
	{ cat "$work/r2.out"; fail "resume"; }
grep -q "^epoch 2: train loss" "$work/r2.out" || { cat "$work/r2.out"; fail "resume: no second epoch"; }

# a checkpoint from before: without tokenizer, data and data_path
strip_meta "$work/a.st" "$work/old.st"
"$clgrad" eval --checkpoint "$work/old.st" --device ref --data "$work/a.txt" > "$work/o1.out" 2>&1 || { cat "$work/o1.out"; fail "an old checkpoint"; }
grep -q "^note: checkpoint .* stores no tokenizer" "$work/o1.out" || { cat "$work/o1.out"; fail "no note for an old checkpoint"; }
[ "$(loss_of "$work/o1.out")" = "$(loss_of "$work/e2.out")" ] || fail "an old checkpoint's loss differs"
refused "from before checkpoints stored their tokenizer) has a vocabulary of [0-9]* tokens, .*GPL-2 gives chars of" \
	"$clgrad" eval --checkpoint "$work/old.st" --device ref --data $gpl2

# the issue's case: an old checkpoint of another text, evaluated without --data (GPL-3 by default)
cp $gpl2 "$work/g2.txt"
"$clgrad" train "${tiny[@]}" --epochs 1 --data "$work/g2.txt" --save "$work/g2.st" > "$work/g2.out" 2>&1 || fail "training on GPL-2"
strip_meta "$work/g2.st" "$work/g2old.st"
refused "has a vocabulary of [0-9]* tokens, .*GPL-3 gives chars of [0-9]* tokens: not the text it was trained on" \
	"$clgrad" eval --checkpoint "$work/g2old.st" --device ref
# a new checkpoint whose text is gone
rm "$work/g2.txt"
refused "the text the checkpoint was trained on: .*g2.txt: cannot open.*give a text with --data" \
	"$clgrad" eval --checkpoint "$work/g2.st" --device ref

# BPE: learned at train time from the training part, and by clgrad tokenize
"$clgrad" train "${tiny[@]}" --epochs 1 --data "$work/a.txt" --tokenizer bpe:300 --save "$work/b.st" > "$work/b.out" 2>&1 ||
	{ cat "$work/b.out"; fail "training with bpe:300"; }
"$clgrad" eval --checkpoint "$work/b.st" --device ref --data "$work/c.txt" > "$work/b2.out" 2>&1 || { cat "$work/b2.out"; fail "bpe eval"; }
grep -q "^note: .*covers it" "$work/b2.out" || { cat "$work/b2.out"; fail "bpe: no note for another text"; }
"$clgrad" tokenize --data "$work/a.txt" --vocab 280 --out "$work/t.tok" > "$work/t.out" 2>&1 || { cat "$work/t.out"; fail "tokenize"; }
grep -q "bytes -> [0-9]* tokens .* BPE of 280 tokens" "$work/t.out" || { cat "$work/t.out"; fail "tokenize's line"; }
head -c 23 "$work/t.tok" | grep -q "^clgrad-tokenizer-1 bpe " || fail "the tokenizer file"
ls "$work" | grep -q "t.tok.*tmp\|\.tmp" && fail "a temporary file left"
"$clgrad" train "${tiny[@]}" --epochs 1 --data "$work/a.txt" --tokenizer "$work/t.tok" --save "$work/t.st" > "$work/t2.out" 2>&1 ||
	{ cat "$work/t2.out"; fail "training with a tokenizer file"; }
refused "other tokenizer: the checkpoint's is bpe of 280 tokens, --tokenizer gives bpe of 300 tokens" \
	"$clgrad" train --resume "$work/t.st" --epochs 2 --device ref --limit 48 --tokenizer bpe:300
refused "tokenize: --vocab=256: must be an integer in \\[257, 65536\\]" "$clgrad" tokenize --data "$work/a.txt" --vocab 256 --out "$work/x.tok"
# the corpus folder of Debian's fortunes packages (scripts/setup.sh installs it), when present
corpus=/usr/share/games/fortunes
if [ -d $corpus ]; then
	"$clgrad" train "${tiny[@]}" --epochs 1 --data $corpus --save "$work/f.st" > "$work/f.out" 2>&1 ||
		{ cat "$work/f.out"; fail "training on $corpus"; }
	grep -q "tokenizer chars of [0-9]* tokens, [0-9]* tokens of [0-9]* bytes" "$work/f.out" ||
		{ cat "$work/f.out"; fail "no tokenizer in the model line"; }
	"$clgrad" eval --checkpoint "$work/f.st" --device ref --limit 48 > "$work/f2.out" 2>&1 ||
		{ cat "$work/f2.out"; fail "eval of the corpus's checkpoint"; }
else
	echo "($corpus not installed: the corpus part skipped)"
fi
echo "test_lm_ckpt: passed"
