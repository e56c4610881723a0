#!/bin/sh
# tree_real.sh - the tree layout against exact truth on the real workloads:
# the text workload (63,905 sets of words: every distinct word, and the
# absent words) and the genome workload (65 genomes of 31-mers: present
# k-mers, and 150-bp reads at theta = 0.8), with flat's timing beside the
# tree's on the same keys in the same run.
# Usage: sh tests/bench/tree_real.sh [TEXT_WORKDIR] [GENOME_WORKDIR]
# (the work directories of text.sh and genome.sh, which fetch the data;
# after ./configure && ninja; needs python3)
set -eu
cd "$(dirname "$0")/../.."
T=${1:-${TMPDIR:-/tmp}/bfi-bench-text}
G=${2:-${TMPDIR:-/tmp}/bfi-bench-genome}
[ -f "$T/data/sets.tsv" ] || sh tests/bench/text.sh "$T" >/dev/null
[ -f "$G/data/STATS.txt" ] || sh tests/bench/genome.sh "$G" >/dev/null

echo "== text: tree alone (clustered, fanout 64) against exact truth"
./bfi build -q -o "$T/tree.snap" --layout tree --tsv "$T/data/sets.tsv"
./bfi inspect "$T/tree.snap" | sed -n '/^tree/,/^sections/p' | sed '$d'
ls -l "$T/tree.snap/index.bfi"
cut -f2 "$T/data/sets.tsv" | sort -u >"$T/present.txt"
./bfi inspect --sets "$T/tree.snap" >"$T/tree.sets"
./bfi query "$T/tree.snap" <"$T/present.txt" >"$T/tree.present.out"
./bfi query "$T/tree.snap" <"$T/data/queries/absent_words.txt" >"$T/tree.absent.out"
# false negatives must be 0; the FPR line compares with one filter per set,
# which the tree's pruning only lowers
python3 tests/bench/check_workload.py "$T/data/sets.tsv" "$T/tree.sets" 7 \
	"$T/tree.present.out" "$T/tree.absent.out" 0.01
shuf -n 20000 --random-source="$T/present.txt" "$T/present.txt" >"$T/present20k.txt"
[ -f "$T/variable.snap/index.bfi" ] && ./bfi bench --layout flat "$T/variable.snap" "$T/present20k.txt" | grep -A1 '^flat'
./bfi bench --layout tree "$T/tree.snap" "$T/present20k.txt" | grep -A2 '^tree'

echo "== genome: tree alone against exact truth"
./bfi build -q -o "$G/tree.snap" --layout tree --memory 8G "$G/data/kmers"
./bfi inspect "$G/tree.snap" | sed -n '/^tree/,/^sections/p' | sed '$d'
./bfi query "$G/tree.snap" <"$G/data/queries/present.txt" >"$G/tree.present.out"
awk -F'\t' 'NR == FNR { split($3, s, ","); for (i in s) want[$1, s[i] ".txt"] = 1; next }
	{ for (i = 2; i <= NF; i++) got[$1, $i] = 1 }
	END { for (k in want) if (!(k in got)) fn++; printf "present k-mers: %d false negatives\n", fn + 0; exit fn > 0 }' \
	"$G/data/queries/present.truth.tsv" "$G/tree.present.out"
[ -f "$G/reads.tsv" ] || {
	python3 tests/bench/sample_reads.py "$G/data/fasta" "$G/data/kmers" 2000 150 42 >"$G/reads.tsv"
	cut -f2 "$G/reads.tsv" >"$G/reads.txt"
}
./bfi query -k 31 -t 0.8 "$G/tree.snap" <"$G/reads.txt" >"$G/tree.reads.out"
paste "$G/reads.tsv" "$G/tree.reads.out" | awk -F'\t' '
	{ found = 0; for (i = 4; i <= NF; i += 2) if ($i == $1) found = 1; if (found) ok++; else miss++ }
	END { printf "reads found in their own genome (tree, theta = 0.8): %d of %d\n", ok, ok + miss; exit miss > 0 }'
