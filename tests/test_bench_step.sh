#!/usr/bin/env bash
# `clgrad bench step` (cli/bench_step.c): one MLP training step recorded on PoCL and modelled on an
# H100. With CLGRAD_KERNEL_SHAPE=gpu: more than 10 launches, every field present, the modelled step
# time the sum of the launches', and the GPU-shaped bias gradient (bias_act_backward_tiles, sized
# for 132 compute units) not flagged. With =cpu: the CPU shape of the same op (four columns a
# work-item, C / 4 = 128 work-items for C = 512, in CPU-sized groups) IS flagged: enough work, fewer
# groups than SMs; and the linear layers' forward is gemm_bias_act, the bias and relu in the own GEMM's
# store (gemm_dot_bias_act), where the GPU shape launches bias_act after the GEMM.
# Bad options: exit 2 and one line.
# usage: test_bench_step.sh CLGRAD_BINARY
set -u
clgrad=$1
. "$(dirname "$0")/test_common.sh"
t_workdir
dev="Portable Computing Language"
"$clgrad" devices 2>/dev/null | grep -q "$dev" || { echo "PoCL not present: skipped"; exit 77; }

check_bad() {
	local want=$1; shift
	"$clgrad" bench step "$@" > "$work/bad.out" 2>&1; rc=$?
	[ $rc -eq 2 ] || { cat "$work/bad.out"; fail "bench step $* exited $rc, not 2"; }
	[ "$(wc -l < "$work/bad.out")" -eq 1 ] || { cat "$work/bad.out"; fail "bench step $*: more than one line"; }
	grep -q -- "$want" "$work/bad.out" || { cat "$work/bad.out"; fail "bench step $*: '$want' not named"; }
}
check_bad "--model is required" --gpu h100
check_bad "--gpu" --model mlp --gpu v100
check_bad "--batch" --model mlp --batch 0
"$clgrad" bench step --model mlp --device ref > "$work/ref.out" 2>&1 && fail "bench step on the reference backend succeeded"
grep -q "launches no kernels" "$work/ref.out" || { cat "$work/ref.out"; fail "reference backend: no reason given"; }

for shape in gpu cpu; do
	CLGRAD_KERNEL_SHAPE=$shape "$clgrad" bench step --model mlp --gpu h100 --json --device "$dev" \
		> "$work/$shape.json" 2> "$work/$shape.err" || { cat "$work/$shape.err"; fail "bench step ($shape shape) failed"; }
done
python3 - "$work/gpu.json" "$work/cpu.json" <<'PY' || exit 1
import json, sys
def fail(m):
    print("FAIL:", m); sys.exit(1)
gpu, cpu = (json.load(open(p)) for p in sys.argv[1:3])
for name, d in (("gpu", gpu), ("cpu", cpu)):
    if d["schema"] != "clgrad-bench-step/1": fail(name + ": schema")
    if d["kernel_shapes"]["fused"] != name: fail(name + ": kernel_shapes.fused is %s" % d["kernel_shapes"]["fused"])
    g = d["gpu"]
    if (g["key"], g["compute_units"], g["wave"]) != ("h100", 132, 32): fail(name + ": gpu row %s" % g)
    if d["sized_for_compute_units"] != 132: fail(name + ": launches not sized for the H100")
    L = d["launches"]
    if len(L) <= 10: fail("%s: %d launches, want > 10" % (name, len(L)))
    keys = {"index", "op", "kernel", "library", "global", "local", "work_items", "work_groups", "elements",
            "bytes", "flops", "groups_per_cu", "fills_gpu", "flagged", "gpu_fraction", "roofline_s", "model_time_s"}
    for l in L:
        if not keys <= set(l): fail("%s: launch %s lacks %s" % (name, l.get("index"), keys - set(l)))
        if l["model_time_s"] < 5e-6: fail(name + ": a launch modelled under the launch overhead")
        if not 0 < l["gpu_fraction"] <= 1: fail(name + ": gpu_fraction out of (0, 1]: %s" % l)
        if abs(l["model_time_s"] - 5e-6 - l["roofline_s"] / l["gpu_fraction"]) > 1e-12: fail(name + ": time model: %s" % l)
        if l["flagged"] and not (l["fills_gpu"] and l["work_groups"] < 132): fail(name + ": flag without cause: %s" % l)
    ops = {l["op"] for l in L}
    for op in ("gemm", "softmax_xent", "bias_act_backward", "adam_step"):
        if op not in ops: fail("%s: no %s launch (forward, loss, backward, optimizer)" % (name, op))
    # the linear forward's bias and relu: in the own CPU GEMM's store (cpu), a launch of its own (gpu)
    epi = "gemm_bias_act" if name == "cpu" else "bias_act"
    if epi not in ops: fail("%s: no %s launch (the linear layers' bias and activation)" % (name, epi))
    if name == "cpu" and not any(l["kernel"] == "gemm_dot_bias_act" for l in L): fail("cpu: no fused GEMM store")
    gemm = [l for l in L if l["op"] in ("gemm", "gemm_bias_act") and "gemm_m" in l]
    if not gemm or sum(l["flops"] for l in gemm) < 2 * 128 * 784 * 512: fail(name + ": GEMM shapes or FLOPs missing")
    s = d["summary"]
    if s["launches"] != len(L) or s["flagged"] != sum(l["flagged"] for l in L): fail(name + ": summary counts")
    t = sum(l["model_time_s"] for l in L)
    if abs(s["modelled_step_s"] - t) > 1e-9 * max(t, 1): fail(name + ": modelled step time is not the sum")
    big = [l for l in L if l["op"] == "adam_step" and (l["work_groups"] or 0) >= 132]
    if not big or any(l["flagged"] for l in big): fail(name + ": a large optimizer launch flagged, or none")
# the GPU shape of the bias gradient fills the H100; the CPU shape uses 2 work-groups: flagged
tiles = [l for l in gpu["launches"] if l["kernel"] == "bias_act_backward_tiles" and l["fills_gpu"]]
if not tiles or any(l["flagged"] for l in tiles): fail("gpu: bias_act_backward_tiles missing or flagged: %s" % tiles)
bad = [l for l in cpu["launches"] if l["op"] == "bias_act_backward" and l["kernel"].startswith("bias_act_backward")
       and "tiles" not in l["kernel"] and l["flagged"]]
if not bad: fail("cpu: the 2-group CPU-shaped bias gradient was not flagged")
# g groups of 132 SMs with l lanes of a 32-wide warp: the model uses min(1, g / 132) x min(1, l / 32) of it
lanes = 1
for v in bad[0]["local"] or [32]:
    lanes *= v
want = min(1.0, bad[0]["work_groups"] / 132.0) * min(1.0, lanes / 32.0)
if abs(bad[0]["gpu_fraction"] - want) > 1e-9: fail("cpu: gpu_fraction of the flagged launch: %s, want %s" % (bad[0], want))
print("ok: gpu %d launches, %d flagged, %.1f us; cpu %d launches, %d flagged (%s, %d groups), %.1f us" % (
    len(gpu["launches"]), gpu["summary"]["flagged"], gpu["summary"]["modelled_step_s"] * 1e6,
    len(cpu["launches"]), cpu["summary"]["flagged"], bad[0]["kernel"], bad[0]["work_groups"],
    cpu["summary"]["modelled_step_s"] * 1e6))
PY

# the terminal table: FLAG marks and the modelled step time
CLGRAD_KERNEL_SHAPE=cpu "$clgrad" bench step --model mlp --gpu h100 --device "$dev" > "$work/table.out" 2>&1 \
	|| { cat "$work/table.out"; fail "table run"; }
grep -q "FLAG: fewer groups than CUs" "$work/table.out" || { cat "$work/table.out"; fail "no FLAG in the table"; }
grep -q "modelled step time on NVIDIA H100" "$work/table.out" || { cat "$work/table.out"; fail "no step time"; }
# without --gpu: the recording only
"$clgrad" bench step --model mlp --batch 16 --json --device "$dev" > "$work/plain.json" 2>&1 || fail "run without --gpu"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "gpu" not in d and len(d["launches"]) > 10' \
	"$work/plain.json" || fail "run without --gpu: output"
echo "ok"
