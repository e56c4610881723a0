#!/bin/sh
# uninstall.sh DESTDIR PREFIX - run by `ninja uninstall`: removes what
# `ninja install` put under DESTDIR+PREFIX, as listed in
# PREFIX/share/bfi/installed, and nothing else: each listed path only if it
# is a regular file or a symbolic link, then the folders install made (also
# listed), only if they are then empty, and the Python module's bytecode
# cache of its own two files.
set -eu
dest=${1:-}
prefix=${2:-/usr/local}
root=$dest$prefix
list=$root/share/bfi/installed
if [ ! -f "$list" ]; then
	echo "bfi uninstall: $list not found: nothing installed under $root by ninja install" >&2
	exit 1
fi
n=0
while IFS= read -r p; do
	case $p in
	"dir "*) continue ;; # made by install: removed below, once emptied
	esac
	case $p in
	"$prefix"/*) ;;
	*)
		echo "bfi uninstall: $list names $p, outside $prefix: left alone" >&2
		continue
		;;
	esac
	f=$dest$p
	if [ -L "$f" ] || [ -f "$f" ]; then
		rm -f "$f"
		n=$((n + 1))
	fi
	case $p in
	*/bfi/*.py) # a module of the Python package: its compiled copy too
		d=$(dirname "$f")
		m=$(basename "$f" .py)
		rm -f "$d"/__pycache__/"$m".*.pyc
		rmdir "$d/__pycache__" 2>/dev/null || true
		rmdir "$d" 2>/dev/null || true
		;;
	esac
done <"$list"
# the folders install made, the last made first (so children before parents), if empty
dirs=$(mktemp "${TMPDIR:-/tmp}/bfi-uninstall.XXXXXX")
trap 'rm -f "$dirs"' EXIT
# (a shell loop, not sed: DESTDIR may hold '|' or '&')
while IFS= read -r p; do
	case $p in
	"dir "*) printf '%s%s\n' "$dest" "${p#dir }" ;;
	esac
done <"$list" | awk '{ a[NR] = $0 } END { for (i = NR; i; i--) print a[i] }' >"$dirs"
rm -f "$list"
rmdir "$root/share/bfi" "$root/include/bfi" 2>/dev/null || true
while IFS= read -r d; do
	rmdir "$d" 2>/dev/null || true
done <"$dirs"
if [ -z "$dest" ] && [ "$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then
	ldconfig
fi
echo "removed $n files of bfi from $root"
