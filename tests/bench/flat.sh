#!/bin/sh
# flat.sh - the Bloofi paper's synthetic workload (bfi synth) at N = 1,000,
# 10,000 and 100,000 sets (and 1,000,000 with N1M=1): flat beside plain, the
# memory-bandwidth bound and batches, each size in one bfi bench run, then
# the whole `bfi query` process over the same present keys (median of five
# runs, whole.sh).
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
done
