#!/usr/bin/env bash
# Installs the build to a temporary prefix, then compiles and runs examples/hello_devices.c
# against it with nothing but the installed clgrad.pc, as a user of the library would:
#   cc hello_devices.c $(pkg-config --cflags --libs --static clgrad)
# Fails if the install is incomplete or clgrad.pc names a wrong prefix, path or library.
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
echo "== compiled with $cc (with and without --static); running"
# (a shared libclgrad is found through LD_LIBRARY_PATH; the static one needs nothing)
LD_LIBRARY_PATH="$(pkg-config --variable=libdir clgrad)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/hello_devices"
echo "== installed CLI"
LD_LIBRARY_PATH="$(pkg-config --variable=libdir clgrad)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$prefix/bin/clgrad" devices
echo "PASS: install + pkg-config + example"
