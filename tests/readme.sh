#!/bin/sh
# readme.sh - the C example in README.md must compile against this tree's
# library and print what the README says it prints.
# Usage: sh tests/readme.sh ./bfi   (from the source root; tests/run.sh does this)
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-readme.XXXXXX")
trap 'rm -rf "$T"' EXIT
root=$(pwd)
sed -n '/^<!-- example: api.c/,/^```$/p' README.md | sed '1,2d;$d' >"$T/api.c"
cc=$(sed -n 's/^cc = //p' build.ninja)
cflags=$(sed -n 's/^cflags = //p' build.ninja)
incs=$(sed -n 's/^incs = //p' build.ninja) # the tools' include paths: every public header
ldflags=$(sed -n 's/^ldflags = //p' build.ninja)
libs=$(sed -n 's/^libs = //p' build.ninja)
if [ "$(wc -l <"$T/api.c")" -lt 20 ]; then
	echo "FAIL readme: no C example found in README.md"
	exit 0
fi
# shellcheck disable=SC2086
if (cd "$root" && $cc $incs $cflags -Wno-missing-prototypes -o "$T/api" "$T/api.c" $ldflags libbfi.a $libs) 2>"$T/err"; then
	echo "PASS readme: the C API example compiles with the project's warnings"
else
	echo "FAIL readme: the C API example does not compile"
	cat "$T/err"
	exit 0
fi
if (cd "$T" && ./api >out 2>&1) && printf 'fruit\nveg\n' | cmp -s - "$T/out"; then
	echo "PASS readme: the C API example prints fruit and veg"
else
	echo "FAIL readme: the C API example's output differs"
	cat "$T/out"
fi
# ninja demo builds what the README's next steps use (libbfi.so, the manual)
# first, and its output says how to type bfi as the README does
if grep -q '^build demo: run bfi libbfi.so .*build/man/bfi-query.1' "$root/build.ninja" &&
	(cd "$root" && sh tools/demo.sh 2>&1) | grep -q 'export PATH="\$PWD:\$PATH"'; then
	echo "PASS readme: ninja demo builds libbfi.so and the manual first, and says how to put bfi on PATH"
else
	echo "FAIL readme: ninja demo does not build the manual, or does not say how to put bfi on PATH"
fi
