#!/bin/sh
# text_docs.sh - issue 6's text figure: the Debian descriptions as raw
# documents (one file per package, split from the Translation-en index that
# text.sh fetched) built with --input text, against the pre-tokenized
# sets.tsv that ../shared/data/make_text_sets.py wrote from the same index.
# Both are built in package-name order; the two index.bfi files must be
# byte-identical past the header, which binds the catalog (the documents'
# catalog records that its keys are text terms). Also times the build and
# text queries (--text).
# Usage: sh tests/bench/text_docs.sh [TEXT_WORKDIR]   (after text.sh)
set -eu
cd "$(dirname "$0")/../.."
T=${1:-${TMPDIR:-/tmp}/bfi-bench-text}
[ -f "$T/data/sets.tsv" ] || sh tests/bench/text.sh "$T" >/dev/null
export LC_ALL=C
rm -rf "$T/docs" && mkdir -p "$T/docs"
# One file per package: its long description (the Description-en line's
# text and the lines after it), first stanza only, as make_text_sets.py reads
# them; a description with no letter or digit makes no set there, nor here.
awk -v dir="$T/docs" '
	function flush() {
		if (pkg != "" && have && !(pkg in seen) && tolower(text) ~ /[a-z0-9]/) {
			seen[pkg] = 1; f = dir "/deb:" pkg; printf "%s", text > f; close(f)
		}
		pkg = ""; have = 0; text = ""
	}
	/^Package:/ { pkg = $2; next }
	/^Description-/ { have = 1; sub(/^[^:]*:/, ""); text = $0 "\n"; next }
	/^ / { if (have) text = text $0 "\n"; next }
	/^[ \t]*$/ { flush(); next }
	END { flush() }' "$T/data/src/Translation-en"
echo "documents: $(ls "$T/docs" | wc -l), sets in sets.tsv: $(cut -f1 "$T/data/sets.tsv" | uniq | sort -u | wc -l)"
/usr/bin/time -f '%e s, %M KB peak RSS' ./bfi build -q -o "$T/docs.snap" --input text "$T/docs" 2>"$T/docs.time"
echo "build from documents: $(cat "$T/docs.time")"
sort -s -t "$(printf '\t')" -k1,1 "$T/data/sets.tsv" >"$T/sets.byname.tsv"
/usr/bin/time -f '%e s, %M KB peak RSS' ./bfi build -q -o "$T/tsv.snap" --tsv "$T/sets.byname.tsv" 2>"$T/tsv.time"
echo "build from sets.tsv:    $(cat "$T/tsv.time")"
if cmp -s -i 128 "$T/docs.snap/index.bfi" "$T/tsv.snap/index.bfi"; then
	echo "index.bfi from documents and from sets.tsv: byte-identical past the header"
else
	echo "the builds differ:"
	./bfi inspect --sets "$T/docs.snap" | cut -f2,3 | sort >"$T/docs.counts"
	./bfi inspect --sets "$T/tsv.snap" | cut -f2,3 | sort >"$T/tsv.counts"
	diff "$T/tsv.counts" "$T/docs.counts" | head
	exit 1
fi
head -20000 "$T/data/queries/trec05_efficiency_topics.txt" 2>/dev/null >"$T/trec.txt" ||
	head -20000 ../shared/data/queries/trec05_efficiency_topics.txt >"$T/trec.txt"
t0=$(date +%s%N)
./bfi query --text --count "$T/docs.snap" <"$T/trec.txt" >"$T/trec.out"
t1=$(date +%s%N)
awk -v a="$t0" -v b="$t1" -v n="$(wc -l <"$T/trec.txt")" \
	'BEGIN { printf "TREC topics as --text queries: %d in %.2f s, %.0f queries/s (whole process)\n", n, (b - a) / 1e9, n / ((b - a) / 1e9) }'
