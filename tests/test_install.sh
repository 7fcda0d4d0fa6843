#!/usr/bin/env bash
# Installs the build to a temporary prefix and uses it as a user of the library would:
# - the installed headers are exactly the public API (CLGRAD_PUBLIC_API in CMakeLists.txt: the
#   frontend's clgrad*.h, clg_backend.h, clg_config.h and their two tables), each compiles alone
#   as <clgrad/NAME>;
# - every example compiles with nothing but the installed clgrad.pc
#   (cc x.c $(pkg-config --cflags --libs --static clgrad)), hello_devices runs;
# - examples/CMakeLists.txt builds every example through find_package(clgrad), hello_devices runs.
# Fails if the install is incomplete, holds an internal header, or clgrad.pc / clgradConfig.cmake
# names a wrong prefix, path or library.
# usage: test_install.sh SOURCE_DIR BUILD_DIR [CMAKE]   (env: CC, EXTRA_LDFLAGS)
set -euo pipefail
src=$1 build=$2 cmake=${3:-cmake}
cc=${CC:-cc}

command -v pkg-config >/dev/null || { echo "FAIL: pkg-config not installed (scripts/setup.sh)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

echo "== cmake --install $build --prefix $prefix"
if ! "$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	echo "FAIL: cmake --install failed"
	exit 1
fi
pc=$(find "$prefix" -name clgrad.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no pkgconfig/clgrad.pc under $prefix"; find "$prefix"; exit 1; }
[ -x "$prefix/bin/clgrad" ] || { echo "FAIL: $prefix/bin/clgrad not installed"; exit 1; }
echo "== $pc"
cat "$pc"

# the installed headers: the public set, no more, no less
want=$( (cd "$src" && ls frontend/clgrad*.h; echo backend/clg_backend.h backend/clg_config.h backend/clg_ops.def backend/clg_options.def) |
	tr ' ' '\n' | xargs -n1 basename | sort)
got=$(find "$prefix/include/clgrad" -type f -printf '%f\n' | sort)
if [ "$want" != "$got" ]; then
	echo "FAIL: the installed headers differ from the public API (< wanted, > installed):"
	diff <(echo "$want") <(echo "$got") || true
	exit 1
fi
for h in $got; do
	case $h in *.def) continue ;; esac
	echo "#include <clgrad/$h>" | "$cc" -std=c11 -Wall -Werror -fsyntax-only -x c - -I"$prefix/include" ||
		{ echo "FAIL: <clgrad/$h> does not compile on its own against the installed headers"; exit 1; }
done
echo "== $(echo "$got" | wc -l) public headers installed, each compiles alone"

export PKG_CONFIG_PATH=$(dirname "$pc")
got=$(pkg-config --variable=prefix clgrad)
if [ "$got" != "$prefix" ]; then
	echo "FAIL: clgrad.pc says prefix=$got, installed to $prefix"
	exit 1
fi
flags=$(pkg-config --cflags --libs --static clgrad)
echo "== pkg-config --cflags --libs --static clgrad: $flags"

# -I/-L come only from pkg-config: the compile sees the installed headers and library or fails.
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Werror -o "$tmp/hello_devices" "$src/examples/hello_devices.c" \
	$flags ${EXTRA_LDFLAGS:-}
# libclgrad is static by default, so plain --libs (no --static) must link as well.
# shellcheck disable=SC2086
"$cc" -std=c11 -o "$tmp/hello_plain" "$src/examples/hello_devices.c" \
	$(pkg-config --cflags --libs clgrad) ${EXTRA_LDFLAGS:-}
for ex in train_mlp train_gru_rows train_conv_autoencoder; do
	# shellcheck disable=SC2086
	"$cc" -std=c11 -Wall -Wextra -Werror -o "$tmp/$ex" "$src/examples/$ex.c" $flags ${EXTRA_LDFLAGS:-} -lm ||
		{ echo "FAIL: examples/$ex.c does not build with pkg-config"; exit 1; }
done
echo "== compiled with $cc (with and without --static); running"
# (a shared libclgrad is found through LD_LIBRARY_PATH; the static one needs nothing)
LD_LIBRARY_PATH="$(pkg-config --variable=libdir clgrad)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/hello_devices"
echo "== installed CLI"
LD_LIBRARY_PATH="$(pkg-config --variable=libdir clgrad)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$prefix/bin/clgrad" devices
echo "== find_package(clgrad): examples/CMakeLists.txt against $prefix"
if ! CFLAGS="${EXTRA_LDFLAGS:-}" LDFLAGS="${EXTRA_LDFLAGS:-}" "$cmake" -S "$src/examples" -B "$tmp/examples" \
	-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >"$tmp/ex.log" 2>&1 ||
	! "$cmake" --build "$tmp/examples" -j 2 >>"$tmp/ex.log" 2>&1; then
	cat "$tmp/ex.log"
	echo "FAIL: the examples do not build through find_package(clgrad)"
	exit 1
fi
grep -q "$prefix/lib.*/cmake/clgrad" "$tmp/examples/CMakeCache.txt" ||
	{ echo "FAIL: find_package(clgrad) did not find the installed package under $prefix"; exit 1; }
LD_LIBRARY_PATH="$(pkg-config --variable=libdir clgrad)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/examples/hello_devices"
echo "PASS: install (public headers only) + pkg-config + find_package(clgrad) + examples"
