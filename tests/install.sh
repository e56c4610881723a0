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
# the Python module is staged with the library's installed path recorded, and answers
# (a sanitized library loads into python3 only after the ASan runtime)
asan=
[ "$mode" = sanitize ] && asan=$($cc -print-file-name=libasan.so)
py=$(find "$T/stage/opt/bfi/lib" -path '*-packages/bfi/__init__.py' | head -1)
if [ -n "$py" ] && grep -qx 'LIBRARY = "/opt/bfi/lib/libbfi.so.2"' "${py%__init__.py}_libpath.py" &&
	printf 'fruit\tapple\nveg\tkale\n' >"$T/s.tsv" && ./bfi build -q -o "$T/snap" --tsv "$T/s.tsv" &&
	env ${asan:+LD_PRELOAD="$asan" ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0} \
		PYTHONPATH="${py%/bfi/__init__.py}" BFI_LIBRARY="$T/stage/opt/bfi/lib/libbfi.so.2" \
		python3 -c 'import bfi, sys; print(bfi.open(sys.argv[1]).query(["apple", "kale"]))' "$T/snap" \
		2>"$T/err" | grep -qx "\[\['fruit'\], \['veg'\]\]"; then
	echo "PASS install: the Python module is staged, knows where the library goes, and answers"
else
	echo "FAIL install: the staged Python module (${py:-not staged})"
	cat "$T/err" 2>/dev/null
fi
