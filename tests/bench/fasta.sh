#!/bin/sh
# fasta.sh - issue 6's genome figures: bfi build --input fasta on the
# genome workload's FASTA files (gzip) against ../shared/data/kmers.c's
# per-genome k-mer files.
#   1. each set's distinct canonical 31-mers (bfi inspect --sets) equal the
#      line count of kmers.c's file, and the index's filters are
#      byte-identical to a build from those files (named as the FASTA files
#      are; the header differs, since it binds a catalog that records how
#      the keys were made);
#   2. present k-mers: 0 false negatives against the truth file; absent_hard
#      k-mers (a held-out genome of an indexed species): measured FPR;
#   3. build throughput (k-mers per second) and peak memory (/usr/bin/time).
# Usage: sh tests/bench/fasta.sh [GENOME_WORKDIR]   (the work directory of
# genome.sh, which fetches the data; after ./configure && ninja)
set -eu
cd "$(dirname "$0")/../.."
G=${1:-${TMPDIR:-/tmp}/bfi-bench-genome}
[ -f "$G/data/STATS.txt" ] || sh tests/bench/genome.sh "$G" >/dev/null
D=$G/data
cat "$D/STATS.txt"

echo "== build from FASTA (gzip), k = 31"
/usr/bin/time -f '%e s wall, %M KB peak RSS' ./bfi build -q -o "$G/fasta.snap" --input fasta \
	--kmer 31 --memory 8G "$D/fasta" 2>"$G/fasta.time"
cat "$G/fasta.time"
kmers=$(cat "$D"/kmers/*.txt | wc -l)
awk -v k="$kmers" -v t="$(cut -d' ' -f1 "$G/fasta.time")" \
	'BEGIN { printf "%d distinct (genome, k-mer) pairs in %.1f s: %.2f M k-mers/s\n", k, t, k / t / 1e6 }'

echo "== the same k-mers from kmers.c's files, named as the FASTA files are"
rm -rf "$G/keys" && mkdir -p "$G/keys"
for f in "$D"/kmers/*.txt; do ln -s "$f" "$G/keys/$(basename "$f" .txt)"; done
/usr/bin/time -f '%e s wall, %M KB peak RSS' ./bfi build -q -o "$G/keys.snap" --memory 8G \
	"$G/keys" 2>"$G/keys.time"
cat "$G/keys.time"
./bfi inspect --sets "$G/fasta.snap" | cut -f2,3 | sort >"$G/fasta.counts"
for f in "$D"/kmers/*.txt; do printf '%s\t%s\n' "$(basename "$f" .txt)" "$(wc -l <"$f")"; done |
	sort >"$G/kmers.counts"
if cmp -s "$G/fasta.counts" "$G/kmers.counts"; then
	echo "distinct k-mers per genome: all $(wc -l <"$G/kmers.counts") equal kmers.c's"
else
	echo "distinct k-mers per genome differ from kmers.c's:"
	diff "$G/kmers.counts" "$G/fasta.counts" | head
	exit 1
fi
if cmp -s -i 128 "$G/fasta.snap/index.bfi" "$G/keys.snap/index.bfi"; then
	echo "index.bfi from FASTA and from kmers.c's files: byte-identical past the header ($(stat -c %s "$G/fasta.snap/index.bfi") bytes)"
else
	echo "index.bfi from FASTA and from kmers.c's files differ"
	exit 1
fi

echo "== queries"
# the query files hold canonical k-mers: keys, taken as they are
./bfi query --keys "$G/fasta.snap" <"$D/queries/present.txt" >"$G/fasta.present.out"
awk -F'\t' 'NR == FNR { split($3, s, ","); for (i in s) want[$1, s[i]] = 1; next }
	{ for (i = 2; i <= NF; i++) got[$1, $i] = 1 }
	END { for (k in want) if (!(k in got)) fn++; printf "present k-mers: %d false negatives\n", fn + 0; exit fn > 0 }' \
	"$D/queries/present.truth.tsv" "$G/fasta.present.out"
./bfi query --keys --count "$G/fasta.snap" <"$D/queries/absent_hard.txt" |
	awk -F'\t' -v n="$(wc -l <"$D/set_names.txt")" '{ q++; m += $2 }
	END { printf "absent_hard k-mers: %d queries x %d genomes, %d false matches: FPR %.6f\n", q, n, m, m / (q * n) }'
./bfi inspect "$G/fasta.snap" | grep '^expected fpr'
