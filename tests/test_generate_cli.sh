#!/usr/bin/env bash
# `clgrad train --model gpt` and `clgrad generate` (issue 34): a tiny gpt trained a few steps on
# GPL-3 with the bytes tokenizer and dropout; its checkpoint has GPT-2's tensor names and the
# dropout; generate streams the prompt and N tokens, greedy ids with the KV cache and with
# --no-cache are the same text, a seed repeats a sample, --stop ends the output, bad options are
# refused with one line. On the reference backend: seconds.
# usage: test_generate_cli.sh CLGRAD_BINARY
set -u
clgrad=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
gpl3=/usr/share/common-licenses/GPL-3
[ -r $gpl3 ] || { echo "no $gpl3: skipped"; exit 77; }
tiny=(--model gpt --dim 16 --heads 2 --layers 2 --seq-len 32 --batch 16 --limit 64 --device ref --seed 5
	--tokenizer bytes --dropout 0.1)

"$clgrad" train "${tiny[@]}" --epochs 1 --data $gpl3 --save "$work/g.st" > "$work/t.out" 2>&1 ||
	{ cat "$work/t.out"; fail "training the gpt"; }
python3 - "$work/g.st" <<'PY' || fail "the checkpoint's names or metadata"
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
head = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])
meta = head.pop("__metadata__")
names = {k for k in head if k.startswith("model.")}
want = {"model.wte.weight", "model.wpe.weight", "model.ln_f.weight", "model.ln_f.bias"}
for l in range(2):
    for p in ("ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj"):
        want |= {f"model.h.{l}.{p}.weight", f"model.h.{l}.{p}.bias"}
assert names == want, sorted(names ^ want)
assert head["model.h.0.attn.c_attn.weight"]["shape"] == [48, 16], head["model.h.0.attn.c_attn.weight"]
assert meta["model"] == "gpt" and float(meta["dropout"]) == 0.1, meta
PY

gen=("$clgrad" generate --checkpoint "$work/g.st" --device ref --prompt "GNU " --tokens 24)
"${gen[@]}" --temperature 0 > "$work/c.out" 2> "$work/c.err" || { cat "$work/c.err"; fail "generate (cache)"; }
"${gen[@]}" --temperature 0 --no-cache > "$work/n.out" 2> "$work/n.err" || { cat "$work/n.err"; fail "generate (no cache)"; }
cmp -s "$work/c.out" "$work/n.out" || { od -c "$work/c.out" "$work/n.out" | head; fail "greedy text with and without the cache differ"; }
head -c 4 "$work/c.out" | grep -q "^GNU " || fail "the prompt does not start the output"
grep -q "24 tokens after a prompt of 4 .* ms a token, KV cache" "$work/c.err" || { cat "$work/c.err"; fail "figures line"; }
grep -q "full forward each" "$work/n.err" || { cat "$work/n.err"; fail "figures line (no cache)"; }
# 4 prompt bytes, 24 one-byte tokens, a newline
[ "$(wc -c < "$work/c.out")" = 29 ] || fail "$(wc -c < "$work/c.out") bytes of output, not 29"
"${gen[@]}" --temperature 1.2 --top-k 20 --top-p 0.9 --seed 7 > "$work/s1.out" 2>/dev/null || fail "sampling"
"${gen[@]}" --temperature 1.2 --top-k 20 --top-p 0.9 --seed 7 > "$work/s2.out" 2>/dev/null || fail "sampling again"
cmp -s "$work/s1.out" "$work/s2.out" || fail "a seed gave another sample"
# --stop: the greedy text's bytes 6-7 (generated) end the output there
stop=$(head -c 7 "$work/c.out" | tail -c 2)
"${gen[@]}" --temperature 0 --stop "$stop" > "$work/st.out" 2>/dev/null || fail "generate --stop"
[ "$(wc -c < "$work/st.out")" -le 8 ] || { od -c "$work/st.out"; fail "--stop '$stop' did not end the output"; }

refused() {
	local want=$1
	shift
	"$@" > "$work/r.out" 2> "$work/r.err" && fail "accepted: $*"
	[ "$(wc -l < "$work/r.err")" = 1 ] || { cat "$work/r.err"; fail "not one line: $*"; }
	grep -q -- "$want" "$work/r.err" || { cat "$work/r.err"; fail "'$want' not in the refusal of: $*"; }
}
refused "top-p" "${gen[@]}" --top-p 0
refused "checkpoint" "$clgrad" generate --prompt x
refused "preset" "$clgrad" train --model gpt --preset huge
refused "model gpt" "$clgrad" train --model transformer --dropout 0.1
echo "test_generate_cli: passed"
