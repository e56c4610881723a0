#!/bin/sh
# install.sh - `ninja install`'s script stages headers, libraries, the bfi
# command and bfi.pc under DESTDIR+PREFIX, and a program built with nothing
# but the installed files and pkg-config works.
# Usage: sh tests/install.sh   (from the source root, after ninja)
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-install.XXXXXX")
trap 'rm -rf "$T"' EXIT
if ! sh tools/install.sh "$T/stage" /opt/bfi >"$T/log" 2>&1; then
	echo "FAIL install: tools/install.sh failed"
	cat "$T/log"
	exit 0
fi
missing=
for f in bin/bfi lib/libbfi.a lib/libbfi.so lib/libbfi.so.2 lib/pkgconfig/bfi.pc \
	include/bfi/bfi.h include/bfi/bfi_writer.h include/bfi/bfi_error.h include/bfi/bfi_hash.h; do
	[ -e "$T/stage/opt/bfi/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ] && grep -qx 'prefix=/opt/bfi' "$T/stage/opt/bfi/lib/pkgconfig/bfi.pc"; then
	echo "PASS install: DESTDIR and PREFIX honoured, every file staged"
else
	echo "FAIL install: missing:$missing"
fi
sed -n '/^<!-- example: api.c/,/^```$/p' README.md | sed '1,2d;$d' >"$T/api.c"
cc=$(sed -n 's/^cc = //p' build.ninja)
mode=$(sed -n 's/^mode = //p' build.ninja)
san=
[ "$mode" = sanitize ] && san=-fsanitize=address,undefined
flags=$(PKG_CONFIG_PATH="$T/stage/opt/bfi/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$T/stage" \
	pkg-config --cflags --libs --static bfi)
# shellcheck disable=SC2086
# Linked against the installed libbfi.so, found at run time through LD_LIBRARY_PATH.
if $cc -std=c11 $san -o "$T/api" "$T/api.c" $flags 2>"$T/err" &&
	(cd "$T" && LD_LIBRARY_PATH="$T/stage/opt/bfi/lib" ./api) | tr '\n' ' ' | grep -qx 'fruit veg '; then
	echo "PASS install: a program builds from the installed headers and bfi.pc, and runs on libbfi.so"
else
	echo "FAIL install: cannot build against the installed files"
	cat "$T/err"
fi
