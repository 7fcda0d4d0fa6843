#!/usr/bin/env bash
# `clgrad train --profile-top N`: the op table lists exactly N ops (the longest), 0 lists every op
# (the same rows as a large N), the option alone implies --profile, and a value out of range is
# refused naming the option (exit status 2).
# usage: test_profile_top.sh CLGRAD_BINARY
set -u
clgrad=$1
data=/usr/share/datasets/fashion-mnist
if [ ! -e "$data/train-images-idx3-ubyte.gz" ]; then
	echo "Fashion-MNIST not installed ($data): skipped"
	exit 77
fi
if ! "$clgrad" devices --json | grep -q '"type": "cpu"\|"type": "gpu"'; then
	echo "no OpenCL device present: skipped"
	exit 77
fi
. "$(dirname "$0")/test_common.sh"
t_workdir
common=(train --model mlp --limit 600 --batch 100 --seed 3 --epochs 1)
rows() { grep -cE '^    \S.* +[0-9.]+ +[0-9.]+ +[0-9.]+%$' "$1"; }

"$clgrad" "${common[@]}" --profile-top 3 --log "$work/a.jsonl" > "$work/a.out" 2>&1 || { cat "$work/a.out"; fail "--profile-top 3"; }
grep -q "profile: .* kernel launches" "$work/a.out" || { cat "$work/a.out"; fail "--profile-top did not imply --profile"; }
[ "$(rows "$work/a.out")" = 3 ] || { cat "$work/a.out"; fail "--profile-top 3 printed $(rows "$work/a.out") op rows"; }
grep -q "the longest:" "$work/a.out" || { cat "$work/a.out"; fail "a cut table does not say so"; }
python3 -c 'import json,sys; l=json.loads(open(sys.argv[1]).readline()); assert len(l["op_profile"]) == 3, l["op_profile"]' \
	"$work/a.jsonl" || fail "the log's op_profile is not cut to 3"

"$clgrad" "${common[@]}" --profile-top=0 > "$work/all.out" 2>&1 || { cat "$work/all.out"; fail "--profile-top=0"; }
"$clgrad" "${common[@]}" --profile --profile-top 100000 > "$work/big.out" 2>&1 || { cat "$work/big.out"; fail "--profile-top 100000"; }
n=$(rows "$work/all.out")
[ "$n" -gt 3 ] && [ "$n" = "$(rows "$work/big.out")" ] ||
	{ cat "$work/all.out" "$work/big.out"; fail "--profile-top 0 printed $n rows, 100000 $(rows "$work/big.out")"; }
grep -q "the longest:" "$work/all.out" && { cat "$work/all.out"; fail "the whole table says it is cut"; }

for bad in -1 1000001 x ""; do
	"$clgrad" "${common[@]}" --profile-top "$bad" > "$work/bad.out" 2>&1
	rc=$?
	[ $rc = 2 ] || { cat "$work/bad.out"; fail "--profile-top '$bad': exit $rc, not 2"; }
	grep -q -- "--profile-top" "$work/bad.out" || { cat "$work/bad.out"; fail "the error does not name --profile-top"; }
done
echo "--profile-top: 3 rows, every op ($n) with 0, bad values refused"
