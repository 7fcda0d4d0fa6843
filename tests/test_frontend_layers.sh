#!/bin/sh
# The frontend's core reads in one direction (docs/ARCHITECTURE.md, issue 32): a file calls only
# files of its own layer or below, and views and autocast (one layer) do not call each other.
#   0 tensor.c                 tensors, storage, scopes, node lifetime, graph-free copies
#   1 autograd.c, autograd_*.c  recording, accumulation, backward
#   2 views.c | autocast.c      differentiable views | casts and autocast
#   3 ops_*.c                   the ops
# Each undefined symbol of these objects in the static library is mapped to the object defining
# it; a call to a higher layer (or between views and autocast) fails naming the pair and symbol.
# The graph of the calls between these files is printed either way. Given the source folder, it
# also fails where a frontend file includes a backend's internal header (backend/*_internal.h):
# the frontend sees the backend interface (clg_backend.h) and clg_internal.h (errors) only.
# usage: test_frontend_layers.sh LIBCLGRAD.a [NM [SOURCE_DIR]]
set -eu
lib=$1 nm=${2:-nm} src=${3:-}
if [ -n "$src" ]; then
	inc=$(cd "$src" && grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[./]*backend/[a-z_]*_internal\.h"' frontend/*.c frontend/*.h |
		grep -v 'backend/clg_internal\.h"' || true)
	if [ -n "$inc" ]; then
		echo "a frontend file includes a backend's internal header (move what it needs to backend/clg_backend.h):"
		echo "$inc"
		exit 1
	fi
fi
case "$lib" in *.a) ;; *) echo "test_frontend_layers: $lib is not a static library: skipped"; exit 77 ;; esac
[ -n "$nm" ] || nm=nm
syms=$(mktemp)
trap 'rm -f "$syms"' EXIT
"$nm" "$lib" >"$syms"
awk '
function layer(f) {
	if (f == "tensor") return 0
	if (f == "autograd" || f ~ /^autograd_/) return 1
	if (f == "views" || f == "autocast") return 2
	if (f ~ /^ops_/) return 3
	return -1
}
/^$/ { next }
/:$/ { obj = $0; sub(/:$/, "", obj); sub(/\.(c\.)?o(bj)?$/, "", obj); next }
{
	type = $(NF - 1); sym = $NF
	if (layer(obj) < 0) next
	seen[obj] = 1
	if (type == "U") { und[obj, sym] = 1; nund[obj] = nund[obj] " " sym }
	else if (type ~ /^[A-TV-Z]$/) def[sym] = obj
}
END {
	need = "tensor autograd views autocast ops_basic"
	n = split(need, must, " ")
	for (i = 1; i <= n; i++)
		if (!(must[i] in seen)) { print "test_frontend_layers: no object " must[i] " in the library"; exit 2 }
	bad = 0
	for (o in seen) {
		m = split(nund[o], us, " ")
		for (i = 1; i <= m; i++) {
			d = def[us[i]]
			if (d == "" || d == o) continue
			edge[o " -> " d] = edge[o " -> " d] " " us[i]
			lo = layer(o); ld = layer(d)
			if (ld > lo || (lo == 2 && ld == 2)) {
				printf "LAYER VIOLATION: %s.c (layer %d) calls %s.c (layer %d): %s\n", o, lo, d, ld, us[i]
				bad = 1
			}
		}
	}
	print "frontend layer graph (caller -> callee: symbols):"
	for (e in edge) print "  " e ":" edge[e] | "sort"
	close("sort")
	if (bad) exit 1
	print "test_frontend_layers: tensor -> autograd -> views | autocast -> ops_*: no call goes up"
}' "$syms"
