#!/bin/sh
# The strict option parser of every clgrad subcommand (cli/opts.c): a bad value gives exit status 2
# and ONE line on stderr naming the option, the value and the accepted range (not the usage block);
# `--opt=value` and `--opt value` both work; --help prints usage on stdout and exits 0; --version
# prints the version. usage: test_cli_options.sh <path to clgrad>
clgrad=$1
fail=0
unset CLGRAD_DEVICE CLGRAD_KERNEL_DIR
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
out=$work/out
err=$work/err

bad() { # expected text on stderr, then the command line after "clgrad"
	want=$1
	shift
	"$clgrad" "$@" >"$out" 2>"$err"
	rc=$?
	lines=$(wc -l <"$err")
	if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$want" "$err" || [ -s "$out" ]; then
		echo "FAILED: clgrad $* -> exit $rc, $lines line(s) on stderr, wanted exit 2 and one line with '$want':" >&2
		cat "$err" "$out" >&2
		fail=1
	else
		echo "ok: clgrad $* -> $(cat "$err")"
	fi
}

# the values of the issue, as separate arguments and as --opt=value
bad "--batch=0: must be an integer in [1, " train --batch 0
bad "--batch=-5: must be an integer in [1, " train --batch -5
bad "--batch=abc: must be an integer" train --batch abc
bad "--batch=12x: must be an integer" train --batch=12x
bad "--batch=99999999999999999999: must be an integer" train --batch 99999999999999999999
bad "--lr=nan: must be a number in (0, " train --lr nan
bad "--lr=inf: must be a number" train --lr=inf
bad "--lr=-1: must be a number in (0, " train --lr -1
bad "--lr=0: must be a number in (0, " train --lr=0
bad "--epochs=0: must be an integer in [1, " train --epochs 0
bad "--limit=-3: must be an integer in [1, " train --limit -3
bad "--clip=-2: must be a number in [0, " train --clip -2
bad "--warmup=-1: must be an integer in [0, " train --warmup -1
bad "--seed=x: must be an integer in [0, " train --seed x
bad "--seed=-1: must be an integer in [0, " train --seed -1
bad "--momentum=1.5: must be a number in [0, 1]" train --momentum 1.5
bad "--optimizer=rmsprop: must be one of sgd|adam|adamw" train --optimizer rmsprop
bad "--batch needs a value" train --epochs 1 --batch
bad "--model: an empty value" train --model=
bad "--mpi takes no value" train --mpi=yes
bad "unknown option '--bogus'" train --bogus 3
bad "unexpected argument 'stray'" train stray
bad "--batch=0: must be an integer" eval --checkpoint x.safetensors --batch=0
bad "--checkpoint FILE is required" eval --batch 4
# the other subcommands share the parser
bad "--reps=0: must be an integer in [1, 10000]" bench ops --reps 0
bad "--m=0: must be an integer in [1, 65536]" bench gemm --m=0
bad "--impl=fast: must be one of auto|own|clblast" bench gemm --impl fast
bad "--steps=1: must be an integer in [2, 1000]" bench exchange --steps 1
bad "--sizes=1e3,x" bench exchange --sizes 1e3,x
bad "--budget=-1: must be a number in (0, " tune --budget -1
bad "--seed=7q: must be an integer" tune --seed 7q
bad "--timeout=nan: must be a number in (0, " compare --timeout nan --out "$work/c"
bad "--out DIR is required" compare --quick
bad "--json takes no value" devices --json=1
bad "unexpected argument 'x'" devices x
bad "--device needs a value" smoke --device
bad "--timeout=0: must be a number in (0, " sweep --out "$work/s" --timeout 0
bad "--batch=0: must be an integer in [1, " sweep --out "$work/s" --batch=0 --dry-run
bad "--lr=abc: must be a number in (0, " sweep --out "$work/s" --lr 1e-3,abc --dry-run

good() { # description, then the command line; exit 0 and something on stdout
	what=$1
	shift
	if "$clgrad" "$@" >"$out" 2>"$err" && [ -s "$out" ]; then
		echo "ok: $what"
	else
		echo "FAILED: $what: clgrad $*" >&2
		cat "$err" "$out" >&2
		fail=1
	fi
}

# --opt=value and --opt value reach the command
good "bench gemm --m=8 --n 8 --k=8 runs" bench gemm --m=8 --n 8 --k=8 --reps=1 --device=ref --json
grep -q '"m": 8' "$out" && grep -q '"reps": 1' "$out" || { echo "FAILED: --m=8 / --reps=1 not taken" >&2; fail=1; }
good "sweep --batch=64,128 --lr 1e-3 --dry-run plans two runs" sweep --out="$work/s" --batch=64,128 --lr 1e-3 --dry-run
grep -q "batch=128" "$out" || { echo "FAILED: sweep did not take --batch=64,128" >&2; fail=1; }
"$clgrad" train --data="$work/nowhere" --epochs=1 --batch=10 --device=ref >"$out" 2>"$err"; rc=$?
if [ "$rc" -eq 1 ] && grep -q "nowhere" "$err"; then
	echo "ok: train --data=DIR reaches the loader (exit 1, names the folder)"
else
	echo "FAILED: train --data=$work/nowhere: exit $rc" >&2
	cat "$err" >&2
	fail=1
fi

# --help: usage on stdout, exit 0, nothing on stderr; --version everywhere
for cmd in devices train eval smoke compare bench "bench gemm" "bench sweep" "bench ops" "bench exchange" sweep tune; do
	# shellcheck disable=SC2086
	"$clgrad" $cmd --help >"$out" 2>"$err"; rc=$?
	if [ "$rc" -eq 0 ] && grep -q "usage: clgrad" "$out" && [ ! -s "$err" ]; then
		echo "ok: clgrad $cmd --help"
	else
		echo "FAILED: clgrad $cmd --help -> exit $rc" >&2
		fail=1
	fi
	# shellcheck disable=SC2086
	v=$("$clgrad" $cmd --version 2>&1); rc=$?
	if [ "$rc" -eq 0 ] && echo "$v" | grep -Eq '^clgrad [0-9]+\.[0-9]+\.[0-9]+$'; then
		echo "ok: clgrad $cmd --version: $v"
	else
		echo "FAILED: clgrad $cmd --version -> exit $rc: $v" >&2
		fail=1
	fi
done
# a model name is checked with the other options, before any device opens
bad "--model=resnet: must be one of mlp|cnn|transformer|gpt|gfnet" train --model resnet
bad "--model=resnet: must be one of" eval --model resnet --checkpoint x.safetensors
# eval's --help is its own (it printed train's)
if "$clgrad" eval --help | head -1 | grep -q "^usage: clgrad eval --checkpoint FILE" &&
	! "$clgrad" eval --help | grep -q -- "--optimizer"; then
	echo "ok: clgrad eval --help is eval's"
else
	echo "FAILED: clgrad eval --help does not print eval's own usage" >&2
	fail=1
fi
# devices: Intel's runtime installed by setup but not registered -> one hint naming its ICD folder
mkdir -p "$work/intel/icd" && : >"$work/intel/icd/intel.icd"
if OCL_ICD_VENDORS=/nonexistent CLGRAD_INTEL_OCL_DIR="$work/intel" "$clgrad" devices 2>&1 | grep -qF "export OCL_ICD_VENDORS=$work/intel/icd"; then
	echo "ok: clgrad devices names the unregistered Intel runtime"
else
	echo "FAILED: clgrad devices gives no hint for Intel's runtime in $work/intel" >&2
	fail=1
fi
if CLGRAD_INTEL_OCL_DIR="$work/none" "$clgrad" devices 2>&1 | grep -q "not registered"; then
	echo "FAILED: clgrad devices hints at an Intel runtime that is not there" >&2
	fail=1
fi
v=$("$clgrad" --version); rc=$?
[ "$rc" -eq 0 ] && echo "$v" | grep -Eq '^clgrad [0-9]+\.[0-9]+\.[0-9]+$' && echo "ok: clgrad --version: $v" ||
	{ echo "FAILED: clgrad --version -> $rc: $v" >&2; fail=1; }

exit $fail
