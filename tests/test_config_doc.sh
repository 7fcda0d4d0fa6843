#!/bin/sh
# docs/ENVIRONMENT.md is what `clgrad config --markdown` prints from backend/clg_options.def, and
# nothing but backend/config.c reads the environment in the library, the command and bench/.
# usage: test_config_doc.sh SOURCE_DIR CLGRAD_BINARY
set -eu
src=$1 bin=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" config --markdown >"$out"
if ! diff -u "$src/docs/ENVIRONMENT.md" "$out"; then
	echo "docs/ENVIRONMENT.md differs from the option table: run \`clgrad config --markdown > docs/ENVIRONMENT.md\`"
	exit 1
fi
# every CLGRAD_ variable the scripts and CMake files read is in the table
missing=0
for v in $(cd "$src" && grep -ohE '\$\{?CLGRAD_[A-Z0-9_]+' scripts/*.sh .ci/run 2>/dev/null | sed 's/^\${\{0,1\}//' | sort -u); do
	grep -q "\`$v\`" "$out" || { echo "$v is read by scripts/ but not in backend/clg_options.def"; missing=1; }
done
readers=$(cd "$src" && grep -rnE '\b(secure_)?getenv[[:space:]]*\(' backend frontend cli bench python/src --include='*.c' --include='*.h' | grep -v '^backend/config.c:' || true)
if [ -n "$readers" ]; then
	echo "the environment is read outside backend/config.c (use clg_opt_* or clg_config_foreign):"
	echo "$readers"
	missing=1
fi
"$bin" config >/dev/null
[ "$missing" = 0 ] && echo "test_config_doc: docs/ENVIRONMENT.md matches $(grep -c '^| `CLGRAD_' "$out") options; getenv only in backend/config.c"
exit "$missing"
