#!/bin/sh
# genome.sh - the genome workload (65 genomes as sets of canonical 31-mers):
# build, check present k-mers against exact truth, then ask threshold
# queries (theta = 0.8) with 150-bp reads sampled from the indexed genomes:
# each must find its own genome. Reports throughput.
# Usage: sh tests/bench/genome.sh [WORKDIR] [READS]
# (after ./configure && ninja; needs root for apt the first time, and python3)
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-genome}
N=${2:-2000}
SHARED=${SHARED:-../shared}
mkdir -p "$W"
if [ ! -f "$W/data/STATS.txt" ]; then
	"$SHARED/data/make_genome_sets.sh" "$W/data" 31
fi
cat "$W/data/STATS.txt"
if [ ! -f "$W/genome.snap/index.bfi" ]; then
	t0=$(date +%s.%N)
	./bfi build -o "$W/genome.snap" --memory 8G "$W/data/kmers"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "build: %.1f s\n", b - a }'
fi
ls -l "$W/genome.snap"
# Present k-mers: every true set must be returned (truth: key, count, names).
./bfi query "$W/genome.snap" <"$W/data/queries/present.txt" >"$W/present.out"
awk -F'\t' 'NR == FNR { split($3, s, ","); for (i in s) want[$1, s[i] ".txt"] = 1; next }
	{ for (i = 2; i <= NF; i++) got[$1, $i] = 1 }
	END { for (k in want) if (!(k in got)) fn++; printf "present k-mers: %d false negatives\n", fn + 0; exit fn > 0 }' \
	"$W/data/queries/present.truth.tsv" "$W/present.out"
python3 tests/bench/sample_reads.py "$W/data/fasta" "$W/data/kmers" "$N" 150 42 >"$W/reads.tsv"
cut -f2 "$W/reads.tsv" >"$W/reads.txt"
t0=$(date +%s.%N)
./bfi query -k 31 -t 0.8 "$W/genome.snap" <"$W/reads.txt" >"$W/reads.out"
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v n="$N" 'BEGIN { printf "threshold queries (150-bp reads, k = 31, theta = 0.8): %d in %.2f s, %.0f reads/s (whole bfi query process)\n", n, b - a, n / (b - a) }'
paste "$W/reads.tsv" "$W/reads.out" | awk -F'\t' '
	{ found = 0; for (i = 4; i <= NF; i += 2) if ($i == $1) found = 1; if (found) ok++; else { miss++; if (miss < 5) print "missed: " $1 } }
	END { printf "reads found in their own genome: %d of %d\n", ok, ok + miss; exit miss > 0 }'
