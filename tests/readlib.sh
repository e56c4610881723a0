#!/bin/sh
# readlib.sh - libbfi_read, the library's read-only half (format/ and
# reader/, without the writer and its input readers): a reader program
# builds against it alone and answers as bfi query does; it links no XML,
# JSON or zlib library and exports no writer call.
# Usage: sh tests/readlib.sh ./bfi   (from the source root, after ninja; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-readlib.XXXXXX")
trap 'rm -rf "$T"' EXIT
SUITE=readlib
. tests/lib/check.sh # check NAME COMMAND...: the command must succeed
cc=$(sed -n 's/^cc = //p' build.ninja)
cflags=$(sed -n 's/^cflags = //p' build.ninja)
ldflags=$(sed -n 's/^ldflags = //p' build.ninja)
read_libs=$(sed -n 's/^read_libs = //p' build.ninja)
cat >"$T/reader.c" <<'C'
/* Each line of stdin as a key: its sets' names, as bfi query prints them. */
#include <stdio.h>
#include <string.h>

#include "bfi.h"

int main(int argc, char **argv)
{
	bfi_snapshot *s = NULL;
	bfi_result *r = NULL;
	char line[4096];
	if (argc != 2 || bfi_open(argv[1], 0, &s) || bfi_result_create(&r))
		return 1;
	while (fgets(line, sizeof line, stdin)) {
		size_t len = strcspn(line, "\n");
		if (bfi_query_key(s, line, len, r))
			return 1;
		printf("%.*s", (int)len, line);
		for (size_t i = 0; i < bfi_result_count(r); i++) {
			const char *name;
			size_t nl;
			if (bfi_set_name(s, bfi_result_ordinals(r)[i], &name, &nl))
				return 1;
			printf("\t%.*s", (int)nl, name);
		}
		printf("\n");
	}
	bfi_result_destroy(&r);
	bfi_close(&s);
	return 0;
}
C
printf 'fruit\tapple\nfruit\tpear\nveg\tleek\nnuts\tpecan\nveg\tapple\n' >"$T/sets.tsv"
printf 'apple\npear\nleek\nkiwi\n' >"$T/keys"
"$BFI" build -q -o "$T/snap" --tsv "$T/sets.tsv" || exit 1
built() {
	# shellcheck disable=SC2086
	$cc -Ireader -Iformat $cflags -o "$T/reader" "$T/reader.c" $ldflags libbfi_read.a $read_libs 2>"$T/err" &&
		# shellcheck disable=SC2086
		ln -s "$(pwd)/libbfi_read.so" "$T/libbfi_read.so.2" &&
		# shellcheck disable=SC2086
		$cc -Ireader -Iformat $cflags -o "$T/reader_so" "$T/reader.c" $ldflags "$T/libbfi_read.so.2" \
			-Wl,-rpath,"$T" 2>>"$T/err"
}
check "a reader program builds against libbfi_read alone (static and shared)" built
same() {
	"$BFI" query "$T/snap" <"$T/keys" >"$T/want" && "$T/reader" "$T/snap" <"$T/keys" >"$T/got" &&
		"$T/reader_so" "$T/snap" <"$T/keys" >"$T/got_so" &&
		cmp "$T/want" "$T/got" && cmp "$T/want" "$T/got_so" && [ -s "$T/want" ]
}
check "it answers as bfi query" same
lean() {
	! echo "$read_libs" | grep -qE -- '-lz\b|-lexpat|-ljson-c' &&
		! ldd libbfi_read.so | grep -qE 'libz\.so|libexpat|libjson-c' &&
		! nm -D --defined-only libbfi_read.so | grep -q ' bfi_writer_' &&
		nm -D --defined-only libbfi.so | grep -q ' bfi_writer_create'
}
check "libbfi_read links no XML, JSON or zlib library and exports no writer call" lean
[ "$fails" -eq 0 ]
