#!/bin/sh
# text.sh - the real text workload (Debian package descriptions, 63,905 sets):
# build with variable-width blocks and with one fixed width at the same
# target FPR, query every distinct key and every absent word, and check the
# answers against the exact truth (zero false negatives; FPR vs theory and
# vs the target); then time the TREC 2005 efficiency topics as AND queries
# and check them against exact truth too.
# Usage: sh tests/bench/text.sh [WORKDIR]   (after ./configure && ninja;
# needs root for apt to fetch the data the first time, and python3)
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-text}
SHARED=${SHARED:-../shared}
mkdir -p "$W"
if [ ! -f "$W/data/sets.tsv" ]; then
	"$SHARED/data/make_text_sets.sh" "$W/data" desc
fi
cat "$W/data/STATS.txt"
cut -f2 "$W/data/sets.tsv" | sort -u >"$W/present.txt"
for variant in variable fixed; do
	flag=
	[ $variant = fixed ] && flag=--fixed-width
	t0=$(date +%s.%N)
	./bfi build -q -o "$W/$variant.snap" $flag --tsv "$W/data/sets.tsv"
	t1=$(date +%s.%N)
	bytes=$(stat -c %s "$W/$variant.snap/index.bfi")
	blocks=$(./bfi inspect --json "$W/$variant.snap" | sed 's/.*"blocks": \[\(.*\)\], "target_fpr.*/\1/' | grep -o first_set | wc -l)
	awk -v a="$t0" -v b="$t1" -v n="$bytes" -v v=$variant -v bl="$blocks" \
		'BEGIN { printf "%s width: build %.2f s, index.bfi %d bytes, %d blocks\n", v, b - a, n, bl }'
	./bfi inspect --sets "$W/$variant.snap" >"$W/$variant.sets"
	./bfi query "$W/$variant.snap" <"$W/present.txt" >"$W/$variant.present.out"
	./bfi query "$W/$variant.snap" <"$W/data/queries/absent_words.txt" >"$W/$variant.absent.out"
	python3 tests/bench/check_workload.py "$W/data/sets.tsv" "$W/$variant.sets" 7 \
		"$W/$variant.present.out" "$W/$variant.absent.out" 0.01
done
v=$(stat -c %s "$W/variable.snap/index.bfi")
f=$(stat -c %s "$W/fixed.snap/index.bfi")
awk -v v="$v" -v f="$f" 'BEGIN { printf "variable / fixed index size: %.4f\n", v / f }'

# TREC 2005 efficiency topics as AND queries over the words of the sets.
TREC=$SHARED/data/queries/trec05_efficiency_topics.txt
./bfi bench --expr --repeat 1 "$W/variable.snap" "$TREC" | sed -n '4,5p'
./bfi query --expr "$W/variable.snap" <"$TREC" >"$W/trec.out"
python3 tests/bench/check_and_queries.py "$W/data/sets.tsv" "$TREC" "$W/trec.out"
