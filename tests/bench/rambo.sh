#!/bin/sh
# rambo.sh - the RAMBO layout on real and synthetic data:
#  1. text workload: zero false negatives, and measured FPR for keys held by
#     V = 1, 2, 5, 10 sets beside Lemma 4.1 (tests/bench/check_rambo.py);
#  2. genome workload: zero false negatives on the present k-mers;
#  3. synthetic workload (100 keys per set) at N = 10^4, 10^5 and 10^6 with
#     flat and rambo in one snapshot, each bfi bench run timing both.
# Usage: sh tests/bench/rambo.sh [WORKDIR]  (after ./configure && ninja;
# TEXT=dir and GENOME=dir reuse data made by text.sh and genome.sh)
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-rambo}
TEXT=${TEXT:-${TMPDIR:-/tmp}/bfi-bench-text/data}
GENOME=${GENOME:-${TMPDIR:-/tmp}/bfi-bench-genome/data}
mkdir -p "$W"
echo "== text workload"
./bfi build -q -o "$W/text.snap" --layout rambo --tsv "$TEXT/sets.tsv"
./bfi inspect --json "$W/text.snap" >"$W/text.json"
ls -l "$W/text.snap/index.bfi"
python3 tests/bench/check_rambo.py "$TEXT/sets.tsv" "$W/text.json" ./bfi "$W/text.snap"
echo "== genome workload"
[ -f "$W/genome.snap/index.bfi" ] || ./bfi build -q -o "$W/genome.snap" --layout rambo --memory 8G "$GENOME/kmers"
./bfi inspect "$W/genome.snap" | sed -n '/^rambo/,/Lemma/p'
./bfi query --layout rambo "$W/genome.snap" <"$GENOME/queries/present.txt" >"$W/present.out"
awk -F'\t' 'NR == FNR { split($3, s, ","); for (i in s) want[$1, s[i] ".txt"] = 1; next }
	{ for (i = 2; i <= NF; i++) got[$1, $i] = 1 }
	END { for (k in want) if (!(k in got)) fn++; printf "present k-mers: %d false negatives\n", fn + 0; exit fn > 0 }' \
	"$GENOME/queries/present.truth.tsv" "$W/present.out"
echo "== synthetic workload, constant set size (100 keys), flat and rambo side by side"
for n in 10000 100000 1000000; do
	if [ ! -f "$W/n$n.snap/index.bfi" ]; then
		./bfi synth -o "$W/n$n" -n "$n"
		./bfi build -q -o "$W/n$n.snap" --layout flat,rambo --memory 16G --tsv "$W/n$n/sets.tsv"
	fi
	echo "-- N = $n"
	./bfi inspect "$W/n$n.snap" | grep -E '^files|^rambo|Lemma'
	./bfi bench "$W/n$n.snap" "$W/n$n/present.txt" | grep -E '^(flat|rambo|memory) |touched|faster'
done
