#!/usr/bin/env bash
# gpt at gpt2-small's width (D 768, 12 heads, 12 layers, 85 M parameters with the byte vocabulary)
# at T 256 through clgrad on PoCL and on Intel's OpenCL CPU runtime and through PyTorch on the CPU
# (bench/pytorch_gpt.py, the same model, AdamW and data), each with and without recompute
# (clgrad --recompute, torch.utils.checkpoint), in one run, side by side. Every side trains
# --epochs epochs of --limit windows; the figures are the last epoch's (the first one compiles
# kernels and warms caches): tokens a second, the process's peak resident memory (GNU time's
# maximum RSS, on both sides) and, for clgrad, the device's peak in a step (allocator) and what of
# it the step's activations took (peak minus what lives between steps). Threads: PyTorch gets
# --threads (default: every core); PoCL and Intel's runtime use every core. Run it --repeat times.
# usage: bench/gpt_vs_pytorch.sh [--python PY] [--batch N] [--limit N] [--epochs N] [--threads N]
#        [--seq-len T] [--dim D] [--heads H] [--layers L] [--repeat N] [--no-intel] [--data FILE]
#   PY: an interpreter with torch (e.g. a virtual environment's: python3 -m venv V && V/bin/pip install torch)
# (build first: cmake -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build; Intel's runtime:
#  scripts/setup_intel_ocl.sh, found in $CLGRAD_INTEL_OCL_DIR or ~/.cache/clgrad/intel-ocl)
set -euo pipefail
cd "$(dirname "$0")/.."
py=python3 batch=4 limit=8 epochs=2 threads=$(nproc) T=256 D=768 H=12 L=12 repeat=1 intel=1
data=/usr/share/common-licenses/GPL-3
while [ $# -gt 0 ]; do
	case $1 in
	--python) py=$2; shift 2 ;;
	--batch) batch=$2; shift 2 ;;
	--limit) limit=$2; shift 2 ;;
	--epochs) epochs=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--seq-len) T=$2; shift 2 ;;
	--dim) D=$2; shift 2 ;;
	--heads) H=$2; shift 2 ;;
	--layers) L=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--no-intel) intel=0; shift ;;
	--data) data=$2; shift 2 ;;
	-h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "gpt_vs_pytorch.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
clgrad=${CLGRAD_BIN:-build/clgrad}
idir=${CLGRAD_INTEL_OCL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/clgrad/intel-ocl}
[ -d "$idir/icd" ] || intel=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(--epochs "$epochs" --batch "$batch" --limit "$limit" --seq-len "$T" --dim "$D" --heads "$H" --layers "$L")

echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load: $(uptime | sed 's/.*load average: //')"
run_clgrad() { # name env... -- recompute flag
	local name=$1 rec=$2; shift 2
	echo "== clgrad $name${rec:+ $rec}: $clgrad train --model gpt --tokenizer bytes --optimizer adamw ${common[*]} --data $data $rec"
	env "$@" /usr/bin/time -f %M -o "$work/$name$rec.rss" "$clgrad" train --model gpt --tokenizer bytes --optimizer adamw \
		--lr 1e-3 "${common[@]}" --data "$data" $rec --log "$work/$name$rec.jsonl" > "$work/$name$rec.out" 2>&1 ||
		{ cat "$work/$name$rec.out"; exit 1; }
	grep -E '^epoch [0-9]+:' "$work/$name$rec.out"
}
run_torch() {
	local rec=$1
	echo "== pytorch${rec:+ $rec}: $py bench/pytorch_gpt.py ${common[*]} --threads $threads --data $data $rec"
	OPENBLAS_NUM_THREADS=1 /usr/bin/time -f %M -o "$work/torch$rec.rss" "$py" bench/pytorch_gpt.py "${common[@]}" \
		--threads "$threads" --data "$data" $rec > "$work/torch$rec.jsonl" 2> "$work/torch$rec.err" ||
		{ cat "$work/torch$rec.err"; exit 1; }
	cat "$work/torch$rec.jsonl"
}
for r in $(seq 1 "$repeat"); do
	for rec in "" --recompute; do
		run_clgrad pocl "$rec" CLGRAD_DEVICE=Portable
		[ "$intel" = 1 ] && run_clgrad intel "$rec" OCL_ICD_VENDORS="$idir/icd" LD_LIBRARY_PATH="$idir/lib" CLGRAD_DEVICE=Intel
		run_torch "$rec"
	done
	echo "== repeat $r of $repeat, $(date -u '+%H:%M UTC'); load: $(uptime | sed 's/.*load average: //')"
	"$py" - "$work" "$T" <<'PY'
import json, os, sys
w, T = sys.argv[1], int(sys.argv[2])
rows = []
for name in ("pocl", "intel", "torch"):
    for rec in ("", "--recompute"):
        f = f"{w}/{name}{rec}.jsonl"
        if not os.path.exists(f):
            continue
        last = [json.loads(l) for l in open(f)][-1]
        rss = int(open(f"{w}/{name}{rec}.rss").read().split()[-1]) * 1024
        tok = last.get("tokens_per_s", last["samples_per_s"] * T)
        peak = (last.get("peak_step_bytes") or [0])[0]
        live = (last.get("live_bytes") or [0])[0]
        rows.append((name, rec != "", tok, rss, peak, peak - live if peak else 0, last["val_loss"]))
torch = {r[1]: r for r in rows if r[0] == "torch"}
print(f"{'side':>6} {'recompute':>9} {'tokens/s':>9} {'vs torch':>8} {'peak RSS MiB':>12} {'vs torch':>8} "
      f"{'device peak MiB':>15} {'activations MiB':>15} {'val loss':>8}")
for n, rc, tok, rss, peak, act, val in rows:
    t = torch.get(rc)
    print(f"{n:>6} {('yes' if rc else 'no'):>9} {tok:>9.1f} {(tok / t[2] if t else 0):>8.2f} {rss / 2**20:>12.0f} "
          f"{(rss / t[3] if t else 0):>8.2f} {(peak / 2**20 if peak else float('nan')):>15.0f} "
          f"{(act / 2**20 if peak else float('nan')):>15.0f} {val:>8.4f}")
PY
done
