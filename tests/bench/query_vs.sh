#!/bin/sh
# query_vs.sh - query speed kept across a writer change: the Bloofi paper's
# workload at N = 100,000 (bfi synth, --expected-keys 10000) and the
# 65-genome workload (../shared/data/make_genome_sets.sh, k = 31), each
# built by OLD and by NEW into its own snapshot (their formats may differ),
# then `bfi bench --layout flat` of each on its own snapshot, alternately,
# ROUNDS times (5), single keys and batches of 1,000; the p50 and q/s lines.
# Usage: OLD=/path/to/old/bfi NEW=/path/to/new/bfi sh tests/bench/query_vs.sh [WORKDIR] [GENOME-WORKDIR]
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-query-vs}
G=${2:-${TMPDIR:-/tmp}/bfi-bench-genome}
: "${OLD:?set OLD to the binary to compare with}"
NEW=${NEW:-$PWD/bfi}
mkdir -p "$W"
[ -d "$G/data/fasta" ] || "${SHARED:-../shared}/data/make_genome_sets.sh" "$G/data" 31
[ -f "$W/n100000/sets.tsv" ] || "$NEW" synth -o "$W/n100000" -n 100000 >/dev/null
for v in old new; do
	b=$OLD
	[ "$v" = new ] && b=$NEW
	[ -f "$W/n5-$v/index.bfi" ] || "$b" build -q -o "$W/n5-$v" --expected-keys 10000 --layout flat --tsv "$W/n100000/sets.tsv"
	[ -f "$W/genome-$v/index.bfi" ] || "$b" build -q -o "$W/genome-$v" --input fasta --kmer 31 "$G/data/fasta"
done
r=0
while [ "$r" -lt "${ROUNDS:-5}" ]; do
	for v in old new; do
		b=$OLD
		[ "$v" = new ] && b=$NEW
		echo "$v N=100000 single: $("$b" bench --layout flat "$W/n5-$v" "$W/n100000/present.txt" | grep '^flat')"
		echo "$v genome single:   $("$b" bench --layout flat "$W/genome-$v" "$G/data/queries/present.txt" | grep '^flat')"
		echo "$v genome batch:    $("$b" bench --layout flat --batch 1000 "$W/genome-$v" "$G/data/queries/present.txt" | grep '^batch')"
	done
	r=$((r + 1))
done
