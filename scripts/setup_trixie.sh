#!/usr/bin/env bash
# A Debian 13 (trixie) root in a cache folder, for running clgrad on two newer OpenCL stacks than
# Debian 12 has: PoCL 6 and Mesa 25's rusticl on llvmpipe (Debian 12's rusticl crashes at the first
# kernel launch). scripts/test_trixie.sh, the last stage of scripts/test.sh, tests clgrad in it.
#   scripts/setup_trixie.sh             build the root, or check that it is complete (fast)
#   scripts/setup_trixie.sh run CMD...  run CMD inside it, in /src (this repository, read-only)
#   scripts/setup_trixie.sh umount      remove mounts a killed run left in the root
# The root: ${CLGRAD_TRIXIE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/clgrad/trixie-root}, made by
# `debootstrap --variant=minbase trixie` from $CLGRAD_TRIXIE_MIRROR (default deb.debian.org), then
# the OpenCL stacks and clgrad's build packages (no recommends) by apt inside it: 1.6 GB, a minute
# or so on a 2-core machine (measured 60 and 72 s, half of it debootstrap). Stamp files record
# each finished step, so a second run does nothing (15 ms); a changed package list runs apt again.
# `run` binds /proc, /sys and /dev into the root (PoCL's hwloc needs /sys) and this repository at
# /src read-only, runs CMD with a clean environment (PATH, HOME=/root, LANG, TERM and
# RUSTICL_ENABLE=llvmpipe unless set) and unmounts on every exit path; builds go inside the root
# (e.g. /root/build). A lock serialises runs on one root, so mounts found under it, and processes
# still running in it, are a killed run's: the next call stops and removes them.
# Needs root, chroot, mount and debootstrap (Debian 12: apt-get install debootstrap; scripts/setup.sh
# installs it). Exit status: 0 done (run: CMD's status), 1 failed, 3 the mirror cannot be reached
# (scripts/test_trixie.sh then skips its stage instead of failing).
set -euo pipefail

# installed inside the root (PoCL 6 and rusticl, and what clgrad and its tests need to build and run)
PACKAGES=(
	pocl-opencl-icd mesa-opencl-icd clinfo ocl-icd-libopencl1   # PoCL 6, rusticl (and Clover)
	gcc g++ make cmake pkg-config ocl-icd-opencl-dev opencl-headers
	libclblast-dev libclfft-dev libcjson-dev zlib1g-dev libopenblas-dev libfftw3-dev
	python3 dataset-fashion-mnist                              # test_compare_quick; clgrad train
)

# debootstrap and chroot live in sbin, which a plain user's PATH may lack
PATH=$PATH:/usr/sbin:/sbin
say() { echo "setup-trixie: $*"; }
die() { echo "setup-trixie: error: $*" >&2; exit 1; }

src=$(cd "$(dirname "$0")/.." && pwd)
dir=${CLGRAD_TRIXIE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/clgrad/trixie-root}
mirror=${CLGRAD_TRIXIE_MIRROR:-http://deb.debian.org/debian}
mode=setup
case "${1:-}" in
	""|setup) [ $# -le 1 ] || die "setup takes no arguments" ;;
	run) mode=run; shift; [ $# -ge 1 ] || die "usage: $0 run CMD [ARG...]" ;;
	umount) mode=umount ;;
	-h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	*) echo "usage: $0 [setup | run CMD... | umount]" >&2; exit 2 ;;
esac

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot and mount); run it as root, e.g. sudo $0 $*"
for t in chroot mount umount mountpoint flock; do
	command -v "$t" >/dev/null || die "$t not found"
done
mkdir -p "$(dirname "$dir")"
dir=$(realpath -m "$dir")
[ "$dir" != / ] || die "CLGRAD_TRIXIE_DIR must not be /"

# one run at a time on a root: whoever holds the lock owns every mount under it
exec 9>"$dir.lock"
flock -w 3600 9 || die "another setup_trixie.sh has held $dir.lock for an hour"

# mount points at or below the root, deepest first (/proc/self/mounts escapes spaces as \040)
mounts_under() {
	awk -v d="$dir" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}
unmount_all() {
	local m
	for m in src dev sys proc; do
		while mountpoint -q "$dir/$m" 2>/dev/null; do
			umount -R "$dir/$m" 2>/dev/null || umount -R -l "$dir/$m" || break
		done
	done
	m=$(mounts_under)
	[ -z "$m" ] || { echo "setup-trixie: error: still mounted under $dir: $m" >&2; return 1; }
}
# processes whose root is this root: this script's command and its children, or what a killed run left
inside_pids() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$dir" ] && echo "${p#/proc/}"
	done
	return 0
}
stop_inside() {
	local pids i
	pids=$(inside_pids)
	[ -n "$pids" ] || return 0
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null || true
	for i in 1 2 3 4 5 6 7 8 9 10; do
		pids=$(inside_pids)
		[ -n "$pids" ] || return 0
		sleep 0.5
	done
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null || true
}
stale() {
	local m
	m=$(mounts_under)
	[ -z "$m" ] && return 0
	if [ -n "$(inside_pids)" ]; then
		say "stopping what an earlier run left running in the root: $(inside_pids | wc -l) process(es)"
		stop_inside
	fi
	say "removing $(echo "$m" | wc -l) mount(s) left under $dir by an earlier run"
	unmount_all
}
# with_src=1: the repository at /src too (read-only)
mount_all() {
	mount -t proc proc "$dir/proc"
	mount --rbind /sys "$dir/sys"
	mount --make-rslave "$dir/sys"
	mount --rbind /dev "$dir/dev"
	mount --make-rslave "$dir/dev"
	if [ "${1:-0}" = 1 ]; then
		mkdir -p "$dir/src"
		mount --bind "$src" "$dir/src"
		mount -o remount,bind,ro "$dir/src"
	fi
}
# the command runs in the background so that a signal reaches this script at once: the trap stops
# the command, then the EXIT trap unmounts
child=
on_signal() {
	trap - INT TERM HUP
	[ -z "$child" ] || { stop_inside; wait "$child" 2>/dev/null || true; }
	exit "$1"
}
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'on_signal 129' HUP
in_root() {
	local rc=0
	chroot "$dir" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" RUSTICL_ENABLE="${RUSTICL_ENABLE:-llvmpipe}" \
		DEBIAN_FRONTEND=noninteractive "$@" <&0 9>&- &
	child=$!
	wait "$child" || rc=$?
	child=
	return "$rc"
}
reachable() {
	wget -q --spider -T 20 -t 2 "$mirror/dists/trixie/InRelease" 2>/dev/null
}
offline() {
	echo "setup-trixie: $1: $mirror/dists/trixie/InRelease cannot be reached (no network?)" >&2
	exit 3
}

stale
if [ "$mode" = umount ]; then
	say "nothing mounted under $dir"
	exit 0
fi
if [ "$mode" = run ]; then
	[ -e "$dir/.clgrad-packages" ] || die "no finished trixie root in $dir: run $0 first"
	trap 'unmount_all' EXIT
	mount_all 1
	rc=0
	in_root /bin/sh -c 'cd /src && exec "$@"' sh "$@" || rc=$?
	exit "$rc"
fi

# 1. debootstrap, once (an unfinished root is removed and made again)
if [ ! -e "$dir/.clgrad-debootstrap" ]; then
	command -v debootstrap >/dev/null ||
		die "debootstrap not found: apt-get install debootstrap (scripts/setup.sh installs it)"
	command -v wget >/dev/null || die "wget not found (debootstrap needs it)"
	reachable || offline "cannot make the root"
	if [ -e "$dir" ]; then
		say "removing the unfinished root in $dir"
		rm -rf --one-file-system "$dir"
	fi
	say "debootstrap --variant=minbase trixie $dir $mirror (about 150 MB; the log: $dir.debootstrap.log)"
	start=$(date +%s)
	if ! debootstrap --variant=minbase trixie "$dir" "$mirror" >"$dir.debootstrap.log" 2>&1; then
		tail -n 15 "$dir.debootstrap.log" >&2
		reachable || offline "debootstrap failed"
		die "debootstrap failed (the last lines of $dir.debootstrap.log above)"
	fi
	touch "$dir/.clgrad-debootstrap"
	say "debootstrap done in $(($(date +%s) - start)) s"
fi

# 2. the packages, when the list differs from the stamp's
want=$(printf '%s\n' "${PACKAGES[@]}" | sort -u)
if [ "$(cat "$dir/.clgrad-packages" 2>/dev/null)" = "$want" ]; then
	say "$dir is ready (Debian $(cat "$dir/etc/debian_version"), ${#PACKAGES[@]} packages)"
	exit 0
fi
say "installing in the root: ${PACKAGES[*]}"
start=$(date +%s)
cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
# no service is started by a package inside the root
printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
chmod +x "$dir/usr/sbin/policy-rc.d"
trap 'unmount_all' EXIT
mount_all 0
if ! in_root apt-get update -q >"$dir.apt.log" 2>&1 ||
	! in_root apt-get install -y -q --no-install-recommends "${PACKAGES[@]}" >>"$dir.apt.log" 2>&1; then
	tail -n 15 "$dir.apt.log" >&2
	reachable || offline "apt-get failed"
	die "apt-get failed inside the root (the last lines of $dir.apt.log above)"
fi
in_root apt-get clean
echo "$want" >"$dir/.clgrad-packages"
say "packages installed in $(($(date +%s) - start)) s; $dir is ready (Debian $(cat "$dir/etc/debian_version"))"
