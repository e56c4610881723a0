#!/bin/sh
# prefetch.sh - the reader's software prefetches must survive the optimizer.
# GCC counts __builtin_prefetch as free of side effects, so a helper whose
# only work is prefetching was found "const" and every call to it deleted:
# the pre-filter look-ahead of flat queries and batches silently compiled
# to nothing. Each source file is compiled as the release build compiles it
# (-O2), and its object must hold at least one prefetch instruction per
# call site in the source.
# Usage: sh tests/prefetch.sh    (from the source root; tests/run.sh does this)
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-prefetch.XXXXXX")
trap 'rm -rf "$T"' EXIT
SUITE=prefetch
. "$(dirname "$0")/lib/check.sh"
CC=${CC:-cc}

# prefetches FILE: compile FILE at -O2; as many prefetch instructions as
# bfi__prefetch / _mm_prefetch calls in its source, or more.
prefetches() {
	sites=$(grep -c 'bfi__prefetch(\|_mm_prefetch(' "$1")
	o=$T/$(basename "$1" .c).o
	$CC -std=c11 -D_GNU_SOURCE -O2 -DBFI_HAVE_AVX2=1 -Iformat -Ireader -c "$1" -o "$o" || return 1
	have=$(objdump -d "$o" | grep -c 'prefetch')
	echo "$1: $sites call sites, $have prefetch instructions"
	[ "$sites" -gt 0 ] && [ "$have" -ge "$sites" ]
}

if ! command -v objdump >/dev/null; then
	echo "FAIL $SUITE: objdump (binutils) is needed"
	exit 1
fi
case $(uname -m) in
x86_64 | i?86) ;;
*)
	echo "PASS $SUITE: not x86, nothing to count"
	exit 0
	;;
esac
for f in reader/flat.c reader/pipe.c reader/rambo.c reader/kernel.c reader/tree.c; do
	check "$f keeps its prefetches at -O2" prefetches "$f"
done
exit $((fails > 0))
