#!/bin/sh
# bare.sh - the time from a bare Debian 12 machine to the demo's output, for
# the README's first command in release mode (./configure && ninja demo)
# against the test mode (./configure --mode=sanitize && ninja demo). Each
# mode starts from its own copy of a fresh Debian 12 root (debootstrap's
# default set of packages: no compiler, no libraries) holding a clone of
# this tree, and runs as root in a chroot with CI=true and no stdin, so
# configure installs what the mode needs from Debian's archive: its time
# includes those downloads, at this machine's distance from the mirror.
# Reported: each mode's configure (with its installs) and build + demo
# seconds, the packages installed, and the demo's last line.
# Usage: (as root, with network to the Debian mirror)
#        [MIRROR=http://deb.debian.org/debian] sh tests/bench/bare.sh [WORKDIR]
set -eu
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
W=${1:-${TMPDIR:-/tmp}/bfi-bench-bare}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
[ "$(id -u)" = 0 ] || { echo "bare.sh: run as root (debootstrap and chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap </dev/null >/dev/null
mkdir -p "$W"
if [ ! -x "$W/base/bin/sh" ]; then
	echo "debootstrap bookworm into $W/base ..."
	rm -rf "$W/base"
	debootstrap bookworm "$W/base" "$MIRROR" >"$W/debootstrap.log" 2>&1 ||
		{ tail "$W/debootstrap.log" >&2; exit 1; }
fi
mounted=
cleanup() {
	for m in $mounted; do umount "$m" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM

run() { # run MODE COMMANDS: the seconds of configure and of ninja demo, in a fresh copy
	r=$W/$1
	rm -rf "$r"
	cp -a "$W/base" "$r"
	cp /etc/resolv.conf "$r/etc/resolv.conf"
	git clone -q "$ROOT" "$r/root/bfi"
	mount -t proc proc "$r/proc" && mounted="$r/proc $mounted"
	mount --bind /dev "$r/dev" && mounted="$r/dev $mounted"
	mount -t tmpfs tmpfs "$r/tmp" && mounted="$r/tmp $mounted"
	before=$(chroot "$r" dpkg-query -f '.\n' -W | wc -l)
	chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root CI=true sh -c "cd /root/bfi && t0=\$(date +%s.%N) && $2 &&
			t1=\$(date +%s.%N) && ninja demo && t2=\$(date +%s.%N) &&
			echo \"times \$t0 \$t1 \$t2\"" </dev/null >"$W/$1.log" 2>&1 ||
		{ tail -20 "$W/$1.log" >&2; exit 1; }
	after=$(chroot "$r" dpkg-query -f '.\n' -W | wc -l)
	umount "$r/tmp" "$r/dev" "$r/proc"
	mounted=
	grep '^times ' "$W/$1.log" | tail -1 | awk -v m="$1" -v p=$((after - before)) '{
		printf "%-8s configure %6.1f s, build and demo %6.1f s, all %6.1f s; %d packages installed\n",
			m, $3 - $2, $4 - $3, $4 - $2, p }'
	echo "         the demo ends: $(grep -v -e '^$' -e '^times ' "$W/$1.log" | tail -1)"
}
run release './configure'
run test './configure --mode=sanitize'
