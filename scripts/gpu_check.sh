#!/usr/bin/env bash
# clgrad's checks on a GPU machine that has no Debian packages (an NVIDIA box with CUDA and PyTorch
# but no OpenCL loader, CLBlast or clFFT): build and pack on Debian 12, run there.
#   scripts/gpu_check.sh pack        on Debian: a Release build (build-device/) and
#                                    .devlibs/stage.tar.xz: the binaries, the libraries they need
#                                    beyond glibc/libstdc++/zlib, clinfo, GPL-3, Fashion-MNIST's test set,
#                                    the op suite's op names (from a small PoCL run)
#   scripts/gpu_check.sh run [DIR]   there, from the repository root: unpack to /tmp/clgrad-stage, point
#                                    the ICD loader at NVIDIA's OpenCL library (../shared/NVIDIA.md),
#                                    run the checks; logs in DIR (default $OUT, else gpu-check-out)
# The checks, each under a time limit (about 10 minutes in all on an H100 in 2026-11;
# GPU_CHECK_PARTS and GPU_CHECK_OPS narrow them; a timeout says rc 124):
#   devices.log  clinfo, clgrad devices (first use: every kernel compiled, the self-test)
#   ops.log      the op suite one op a process, 8 at a time, in the default (GPU) kernel shape, with
#                each case named before it runs (-v) and each build's time (CLGRAD_DEBUG): an op
#                that runs past its limit shows where; gradient checks; mixed precision (ops);
#                the op suite in the CPU shape (cpuops)
#   perf.log     bench ops --rows (both shapes), bench ops, GEMM own and CLBlast (two shapes and the
#                sweep), fused attention, host time per op (bench_overhead), index_add scan and sort
#   train.log    training beside PyTorch on the same GPU (bench/train_vs_pytorch.sh --torch-device
#                cuda), own GEMM against CLBlast, --profile
#   report.md    clgrad compare --quick
# Environment: GPU_CHECK_PARTS (comma list of ops, cpuops, perf, train, compare; default all),
# GPU_CHECK_OPS (comma list; default every op), GPU_CHECK_DEV (device name part; default NVIDIA).
set -u
cd "$(dirname "$0")/.."
mode=${1:-}
stage=.devlibs/stage.tar.xz

pack() {
	set -e
	cmake -B build-device -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build-device -j"$(nproc)" >/dev/null
	local s=.devlibs/stage
	rm -rf "$s" && mkdir -p "$s/bin" "$s/lib" "$s/data/fm"
	cp build-device/clgrad build-device/tests/test_ops build-device/tests/test_grad build-device/tests/test_mixed \
		build-device/bench/bench_attention build-device/bench/bench_overhead \
		build-device/bench/bench_index_add "$(command -v clinfo)" "$s/bin/"
	# every library the binaries load, except those any glibc system has
	for f in "$s"/bin/*; do ldd "$f"; done | awk '/=> \//{print $3}' | sort -u |
		grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|libz)\.so' |
		while read -r l; do cp -L "$l" "$s/lib/"; done
	cp /usr/share/common-licenses/GPL-3 "$s/data/"
	cp /usr/share/datasets/fashion-mnist/t10k-* "$s/data/fm/"
	build-device/tests/test_ops --small --device pthread 2>/dev/null |
		awk '/^op suite tally/{t=1} t && NF==4 && $2 ~ /^[0-9]+$/{print $1}' | paste -sd, >"$s/data/ops.txt"
	tar -C "$s" -cJf "$stage" .
	echo "gpu_check.sh: $stage ($(du -h "$stage" | cut -f1)); carry it and scripts/gpu_check.sh, then: scripts/gpu_check.sh run"
}

run() {
	local out=${1:-${OUT:-gpu-check-out}} dev=${GPU_CHECK_DEV:-NVIDIA}
	local S=/tmp/clgrad-stage t0
	t0=$(date +%s)
	mkdir -p "$out"
	rm -rf "$S" && mkdir -p "$S" && tar -C "$S" -xJf "$stage" || { echo "gpu_check.sh: cannot unpack $stage" >&2; exit 1; }
	local B=$S/bin D=$out/devices.log O=$out/ops.log P=$out/perf.log T=$out/train.log
	export LD_LIBRARY_PATH=$S/lib:${LD_LIBRARY_PATH:-} CLGRAD_CACHE_DIR=/tmp/clgrad-cache CLGRAD_BIN=$S/bin/clgrad
	local icd
	icd=$(ldconfig -p | awk '/libnvidia-opencl.so.1/{print $NF; exit}')
	[ -n "$icd" ] || icd=$(find /usr/local/nvidia /usr/lib /usr/lib64 /lib /opt -name 'libnvidia-opencl.so.1*' 2>/dev/null | head -1)
	if [ -n "$icd" ]; then
		mkdir -p /tmp/clgrad-vendors && echo "$icd" >/tmp/clgrad-vendors/nvidia.icd
		export OCL_ICD_VENDORS=/tmp/clgrad-vendors
	fi
	mkdir -p /tmp/clgrad-fm
	for f in images-idx3 labels-idx1; do
		cp "$S/data/fm/t10k-$f-ubyte.gz" /tmp/clgrad-fm/
		ln -sf "/tmp/clgrad-fm/t10k-$f-ubyte.gz" "/tmp/clgrad-fm/train-$f-ubyte.gz" # a smoke test's training set
	done
	step() { # step LOG SECONDS CMD...: time-limited, appended to LOG, its time and status to stdout
		local log=$1 lim=$2 s rc
		shift 2
		s=$(date +%s)
		echo "== $*" >>"$log"
		timeout -k 5 "$lim" "$@" >>"$log" 2>&1
		rc=$?
		echo "== rc $rc, $(($(date +%s) - s)) s" >>"$log"
		echo "[$(($(date +%s) - t0)) s] rc $rc, $(($(date +%s) - s)) s (limit $lim): $*"
	}
	{ echo "icd: ${icd:-none found}"; date -u; nvidia-smi -L; uname -r; nproc; $B/clinfo -l; } >>"$D" 2>&1
	want() { [[ ",${GPU_CHECK_PARTS:-ops,cpuops,perf,train,compare}," == *",$1,"* ]]; }
	step "$D" 180 $B/clgrad devices
	if want ops; then # the op suite, one op a process (the names: pack's PoCL run)
		local ops=${GPU_CHECK_OPS:-$(cat "$S/data/ops.txt")}
		export B dev O
		echo "$ops" | tr ',' '\n' | grep . | xargs -P 8 -I{} sh -c \
			'log=$(mktemp); s=$(date +%s); CLGRAD_DEBUG=1 timeout -k 5 240 $B/test_ops --device "$dev" --op {} -v >$log 2>&1;
			 echo "== op {}: rc $?, $(($(date +%s) - s)) s" >>$log; cat $log >>$O.part.{}; rm -f $log'
		cat "$O".part.* >>"$O" 2>/dev/null && rm -f "$O".part.*
		grep '^== op' "$O" | sort -t, -k2 -n -r | head -12
		step "$O" 120 $B/test_grad --device "$dev"
		step "$O" 60 $B/test_mixed
	fi
	want cpuops && CLGRAD_KERNEL_SHAPE=cpu step "$O" 240 $B/test_ops --device "$dev"
	if want perf; then
		step "$P" 60 $B/clgrad bench ops --rows --device gpu
		CLGRAD_KERNEL_SHAPE=cpu step "$P" 60 $B/clgrad bench ops --rows --device gpu
		step "$P" 60 $B/clgrad bench ops --device gpu
		for impl in clblast own; do
			step "$P" 30 $B/clgrad bench gemm --m 4096 --n 4096 --k 4096 --impl $impl --device gpu
			step "$P" 30 $B/clgrad bench gemm --m 8192 --n 192 --k 64 --impl $impl --device gpu
			# where CLBlast's cost per call stops mattering (CLGRAD_GEMM=auto picks it on GPUs)
			step "$P" 90 $B/clgrad bench sweep --reps 5 --impl $impl --device gpu
		done
		step "$P" 60 $B/bench_attention --device 1 64 128 256 512 1024
		step "$P" 60 $B/bench_overhead --device 1 # host time per op, and the enqueue's part of it
		# the embedding backward: the H100 took 1.6 ms a step in the counting sort (one work-item
		# sorts each bucket) for a 76-row table; the scan may win on a GPU where it loses on a CPU
		for vm in "76 8192 64" "50000 8192 64"; do
			step "$P" 60 $B/bench_index_add --device 1 $vm
		done
	fi
	if want train; then
		local gpl=$S/data/GPL-3 fm=/tmp/clgrad-fm
		step "$T" 90 bench/train_vs_pytorch.sh --model transformer --epochs 12 --batch 16 --device gpu --torch-device cuda --data "$gpl"
		step "$T" 90 bench/train_vs_pytorch.sh --model transformer --epochs 20 --batch 64 --device gpu --torch-device cuda --data "$gpl"
		step "$T" 120 bench/train_vs_pytorch.sh --model transformer --epochs 10 --batch 16 --device gpu --torch-device cuda \
			--data "$gpl" --dim 256 --heads 8 --layers 4 --seq-len 128
		step "$T" 90 bench/train_vs_pytorch.sh --model mlp --epochs 6 --device gpu --torch-device cuda --data $fm
		step "$T" 90 bench/train_vs_pytorch.sh --model cnn --epochs 6 --device gpu --torch-device cuda --data $fm
		for g in own clblast; do
			CLGRAD_GEMM=$g step "$T" 60 $B/clgrad train --model transformer --epochs 6 --batch 64 --device gpu --data "$gpl"
			CLGRAD_GEMM=$g step "$T" 60 $B/clgrad train --model transformer --epochs 1 --device gpu --profile --data "$gpl"
		done
		CLGRAD_GEMM=own CLGRAD_INDEX_ADD=scan step "$T" 60 $B/clgrad train --model transformer --epochs 1 --device gpu \
			--profile --data "$gpl"
	fi
	if want compare; then
		step "$D" 120 $B/clgrad compare --quick --devices gpu --data /tmp/clgrad-fm --out /tmp/clgrad-compare
		cp /tmp/clgrad-compare/report.md "$out/" 2>/dev/null
	fi
	echo "gpu_check.sh: done in $(($(date +%s) - t0)) s; logs in $out"
}

case $mode in
pack) pack ;;
run) run "${2:-}" ;;
-h | --help) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0" ;;
*) echo "gpu_check.sh: expected pack or run (see --help)" >&2; exit 2 ;;
esac
