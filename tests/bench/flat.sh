#!/bin/sh
# flat.sh - the Bloofi paper's synthetic workload (bfi synth) at N = 1,000,
# 10,000 and 100,000 sets (and 1,000,000 with N1M=1): flat beside plain, the
# memory-bandwidth bound and batches, each size in one bfi bench run, then
# the whole `bfi query` process over the same present keys (median of five
# runs, whole.sh). At N = 100,000 it also builds the same sets in the one
# block that space alone gives (--block-sets 100352) and times the two
# snapshots alternately, twice.
# Usage: sh tests/bench/flat.sh [WORKDIR]   (after ./configure && ninja)
# Appends a table row per layout to tests/bench/RESULTS.md with --results
# when RECORD=1.
set -eu
cd "$(dirname "$0")/../.."
. tests/bench/whole.sh
W=${1:-${TMPDIR:-/tmp}/bfi-bench-flat}
mkdir -p "$W"
sizes="1000 10000 100000"
[ "${N1M:-0}" = 1 ] && sizes="$sizes 1000000"
for n in $sizes; do
	if [ ! -f "$W/n$n.snap/index.bfi" ]; then
		./bfi synth -o "$W/n$n" -n "$n"
		layout=flat,plain
		[ "$n" -ge 1000000 ] && layout=flat # plain at 10^6 would take 12.6 GB more
		./bfi build -q -o "$W/n$n.snap" --expected-keys 10000 --layout $layout \
			--memory 16G --tsv "$W/n$n/sets.tsv"
	fi
	rec=
	[ "${RECORD:-0}" = 1 ] && rec="--results tests/bench/RESULTS.md --label synthetic-N=$n-present"
	echo "== N = $n, present keys"
	# shellcheck disable=SC2086
	./bfi bench --batch 1000 $rec "$W/n$n.snap" "$W/n$n/present.txt"
	echo "whole bfi query process, flat, us per present key: $(whole_query ./bfi "$W/n$n.snap" flat "$W/n$n/present.txt")"
	echo "== N = $n, absent keys"
	./bfi bench --layout flat "$W/n$n.snap" "$W/n$n/absent.txt" | tail -2
	if [ "$n" = 100000 ]; then
		# The writer cuts these sets of one width into blocks with
		# pre-filters because queries gain; --block-sets 100352 (196 x 512)
		# keeps the one block that space alone gives. Time the two
		# alternately, twice.
		[ -f "$W/n$n-one.snap/index.bfi" ] || ./bfi build -q -o "$W/n$n-one.snap" \
			--expected-keys 10000 --layout flat --block-sets 100352 --memory 16G --tsv "$W/n$n/sets.tsv"
		for round in 1 2; do
			for snap in "$W/n$n.snap" "$W/n$n-one.snap"; do
				echo "-- round $round, $(./bfi inspect "$snap" | awk '/^flat blocks/ { print $3 }') flat block(s), present keys"
				./bfi bench --layout flat "$snap" "$W/n$n/present.txt" | grep -A1 '^flat'
				echo "whole bfi query process, flat, us per present key: $(whole_query ./bfi "$snap" flat "$W/n$n/present.txt")"
			done
		done
	fi
done
