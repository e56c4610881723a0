#!/bin/sh
# text.sh - the real text workload (Debian package descriptions, 63,905 sets):
# build, query every present key and every absent word, and check the
# answers against the exact truth (zero false negatives; FPR vs theory).
# Usage: sh tests/bench/text.sh [WORKDIR]   (after ./configure && ninja;
# needs root for apt to fetch the data the first time, and python3)
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-text}
SHARED=${SHARED:-../shared}
if [ ! -f "$W/data/sets.tsv" ]; then
	"$SHARED/data/make_text_sets.sh" "$W/data" desc
fi
cat "$W/data/STATS.txt"
t0=$(date +%s.%N)
./bfi build -o "$W/text.snap" --tsv "$W/data/sets.tsv"
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "build: %.2f s\n", b - a }'
m=$(./bfi inspect --json "$W/text.snap" | sed 's/.*"bits": \([0-9]*\).*/\1/')
k=$(./bfi inspect --json "$W/text.snap" | sed 's/.*"hashes": \([0-9]*\).*/\1/')
# Every distinct key of the workload is a present query.
cut -f2 "$W/data/sets.tsv" | sort -u >"$W/present.txt"
./bfi query "$W/text.snap" <"$W/present.txt" >"$W/present.out"
./bfi query "$W/text.snap" <"$W/data/queries/absent_words.txt" >"$W/absent.out"
python3 tests/bench/check_workload.py "$W/data/sets.tsv" "$W/present.out" "$W/absent.out" "$m" "$k"
./bfi verify "$W/text.snap"
