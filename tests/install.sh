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
for f in bin/bfi lib/libbfi.a lib/libbfi.so lib/libbfi.so.3 lib/libbfi_read.a lib/libbfi_read.so \
	lib/libbfi_read.so.2 lib/pkgconfig/bfi.pc \
	include/bfi/bfi.h include/bfi/bfi_writer.h include/bfi/bfi_error.h include/bfi/bfi_hash.h \
	include/bfi/bfi_paths.h include/bfi/bfi_seq.h share/man/man1/bfi.1 share/man/man1/bfi-build.1 \
	share/man/man1/bfi-serve.1 share/man/man3/bfi.3 share/man/man5/bfi.5 \
	share/bash-completion/completions/bfi; do
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
# linked statically through pkg-config --static: no libbfi.so, nor its dependencies', at run time
# (a sanitizer's runtime cannot be linked into a -static program: there the
# libraries pkg-config names are taken static, the C library and ASan's dynamic)
sflags=$(PKG_CONFIG_PATH="$T/stage/opt/bfi/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$T/stage" \
	pkg-config --libs --static bfi)
case $mode in
sanitize | tsan) link="-Wl,-Bstatic $(echo "$sflags" | sed 's/ -lpthread\| -lm//g') -Wl,-Bdynamic -lpthread -lm" ;;
*) link="-static $sflags" ;;
esac
# shellcheck disable=SC2086
if $cc -std=c11 $san -I"$T/stage/opt/bfi/include/bfi" -o "$T/api_static" "$T/api.c" $link 2>"$T/err" &&
	! ldd "$T/api_static" 2>/dev/null | grep -q 'libbfi\|liblmdb\|libxxhash\|libjson-c\|libexpat' &&
	(cd "$T" && ./api_static) | tr '\n' ' ' | grep -qx 'fruit veg '; then
	echo "PASS install: a program links libbfi statically through pkg-config --static, and runs"
else
	echo "FAIL install: pkg-config --static does not link: $link"
	cat "$T/err"
fi
# the Python module is staged with the library's installed path recorded, and answers
# (a sanitized library loads into python3 only after the ASan runtime)
asan=
[ "$mode" = sanitize ] && asan=$($cc -print-file-name=libasan.so)
py=$(find "$T/stage/opt/bfi/lib" -path '*-packages/bfi/__init__.py' | head -1)
if [ -n "$py" ] && grep -qx 'LIBRARY = "/opt/bfi/lib/libbfi.so.3"' "${py%__init__.py}_libpath.py" &&
	printf 'fruit\tapple\nveg\tkale\n' >"$T/s.tsv" && ./bfi build -q -o "$T/snap" --tsv "$T/s.tsv" &&
	env ${asan:+LD_PRELOAD="$asan" ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0} \
		PYTHONPATH="${py%/bfi/__init__.py}" BFI_LIBRARY="$T/stage/opt/bfi/lib/libbfi.so.3" \
		python3 -c 'import bfi, sys; print(bfi.open(sys.argv[1]).query(["apple", "kale"]))' "$T/snap" \
		2>"$T/err" | grep -qx "\[\['fruit'\], \['veg'\]\]"; then
	echo "PASS install: the Python module is staged, knows where the library goes, and answers"
else
	echo "FAIL install: the staged Python module (${py:-not staged})"
	cat "$T/err" 2>/dev/null
fi
# ninja uninstall's script removes every file install put, and nothing of the user's
uninstall_ok() {
	echo mine >"$T/stage/opt/bfi/include/bfi/notes.txt" &&
		sh tools/uninstall.sh "$T/stage" /opt/bfi >"$T/log" 2>&1 || { cat "$T/log"; return 1; }
	left=$(find "$T/stage" -type f -o -type l)
	[ "$left" = "$T/stage/opt/bfi/include/bfi/notes.txt" ] || { echo "left: $left"; return 1; }
	# and the folders it made, but the one holding the user's file
	empty=$(find "$T/stage" -type d -empty)
	[ -z "$empty" ] || { echo "empty folders left: $empty"; return 1; }
	! sh tools/uninstall.sh "$T/stage" /opt/bfi >/dev/null 2>&1 # a second time: nothing listed, an error
}
if uninstall_ok >"$T/out" 2>&1; then
	echo "PASS install: uninstall removes every file and folder install put, and leaves the user's"
else
	echo "FAIL install: uninstall"
	cat "$T/out"
fi
# installed twice, then uninstalled, into a DESTDIR holding '|', '&' and a space:
# nothing is left, and bfi.pc names the prefix as given
twice_ok() {
	d="$T/a|b&c d"
	for i in 1 2; do
		sh tools/install.sh "$d" '/opt/x&y' >"$T/log" 2>&1 || { cat "$T/log"; return 1; }
	done
	grep -qx 'prefix=/opt/x&y' "$d/opt/x&y/lib/pkgconfig/bfi.pc" || { echo "bfi.pc:"; grep prefix= "$d/opt/x&y/lib/pkgconfig/bfi.pc"; return 1; }
	sh tools/uninstall.sh "$d" '/opt/x&y' >"$T/log" 2>&1 || { cat "$T/log"; return 1; }
	left=$(find "$d" -mindepth 1)
	[ -z "$left" ] || { echo "left after two installs and an uninstall: $left"; return 1; }
}
if twice_ok >"$T/out" 2>&1; then
	echo "PASS install: installed twice into a DESTDIR with '|', '&' and a space, uninstall leaves nothing"
else
	echo "FAIL install: two installs, or an odd DESTDIR"
	cat "$T/out"
fi

# On a CI machine, as root: the real thing at the default prefix. The README's
# C example builds with plain pkg-config and runs with no LD_LIBRARY_PATH
# (install ran ldconfig), python3 imports the module, and uninstall takes it
# all away again.
if [ "${CI:-}" = true ] && [ "$(id -u)" = 0 ]; then
	if [ -e /usr/local/share/bfi/installed ]; then
		echo "(a bfi is installed in /usr/local already: the default-prefix install is not tried over it)"
	else
		real_ok() {
			DESTDIR= sh tools/install.sh "" /usr/local >"$T/log" 2>&1 || { cat "$T/log"; return 1; }
			# the interpreter install.sh installed the module for, as it says
			py=$(sed -n 's/^installed the Python module into .* (for \(.*\))$/\1/p' "$T/log")
			[ -n "$py" ] || { echo "install.sh names no python3:"; cat "$T/log"; return 1; }
			# shellcheck disable=SC2046
			$cc -std=c11 $san -o "$T/api_real" "$T/api.c" $(pkg-config --cflags --libs bfi) &&
				(cd "$T" && ./api_real) | tr '\n' ' ' | grep -qx 'fruit veg ' || return 1
			env ${asan:+LD_PRELOAD="$asan" ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0} \
				"$py" -c 'import bfi, sys; print(bfi.open(sys.argv[1]).query("kale"))' "$T/snap" |
				grep -qx "\['veg'\]" || { echo "$py cannot import bfi from the default prefix"; return 1; }
			# (Debian's /usr/local/man is a link to share/man: compare where they lead)
			[ "$(readlink -f "$(man -w bfi-build)")" = /usr/local/share/man/man1/bfi-build.1 ] &&
				[ "$(readlink -f "$(man -w 5 bfi)")" = /usr/local/share/man/man5/bfi.5 ] ||
				{ echo "man does not find the installed pages: $(man -w bfi-build 2>&1)"; return 1; }
			sh tools/uninstall.sh "" /usr/local >"$T/log" 2>&1 || { cat "$T/log"; return 1; }
			[ ! -e /usr/local/lib/libbfi.so.3 ] && [ ! -e /usr/local/include/bfi ] &&
				[ ! -e /usr/local/bin/bfi ] && ! pkg-config --exists bfi
		}
		if real_ok >"$T/out" 2>&1; then
			echo "PASS install: at /usr/local the README's example builds with pkg-config and runs, python3 imports bfi, man finds the pages, uninstall removes it"
		else
			echo "FAIL install: the install at /usr/local"
			cat "$T/out"
			sh tools/uninstall.sh "" /usr/local >/dev/null 2>&1
		fi
	fi
fi
