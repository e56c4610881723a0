#!/bin/sh
# tree.sh - issue 5's figures on the Bloofi paper's synthetic workload
# (bfi synth: set i holds [100 i, 100 i + 99]; p = 0.01, n_expected =
# 10,000, so m = 100,989 and k = 7).
#
# 1. bf-cost for present keys at N = 1,000, 10,000 and 100,000, order 2:
#    - incremental: the paper's insertion build, one width for every node,
#      every level stored (--bloofi-build incremental --bits 100989);
#    - offline, one width (--bits 100989 --fanout 2 --all-levels);
#    - offline, --expected-keys 10000 (inner nodes sized for their unions)
#      with --fanout 2 --all-levels, and with the default level rule.
# 2. Speed: flat and tree in one snapshot at N = 100,000 for fanouts 8 to
#    64, each with one bfi bench run (flat and tree side by side, present and
#    absent keys), and the whole `bfi query` process timed over the same
#    10,000 keys. N1M=1 adds N = 1,000,000 (a 12.6 GB flat and a 13 GB tree
#    snapshot, benched one after the other in this run); N1M=only runs just
#    that part; BFCOST=0 skips part 1, SPEED=0 the N = 100,000 speed
#    runs. The two do not both fit in memory, so before each layout's
#    runs the other snapshot's pages are dropped from the page cache (GNU dd
#    iflag=nocache): each layout then reads its own file into a page cache
#    that has room for it, as a server that maps one snapshot would.
# Usage: sh tests/bench/tree.sh [WORKDIR]   (after ./configure && ninja)
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-tree}
mkdir -p "$W"
BFI=./bfi

synth() {
	[ -f "$W/n$1/sets.tsv" ] || $BFI synth -o "$W/n$1" -n "$1"
}

# bf-cost and p50 of a snapshot's tree on present keys: "bf-cost p50"
tree_cost() {
	$BFI bench --layout tree --repeat 1 "$1" "$2" |
		awk '/^tree/ { p50 = $5 } /bf-cost/ { cost = $2 } END { print cost, p50 }'
}

# False negatives against the exact truth: key x is in set s<x / 100>.
false_negatives() { # snapshot layout keys
	$BFI query --layout "$2" "$1" <"$3" | awk -F'\t' '
		{ want = "s" int($1 / 100); ok = 0; for (i = 2; i <= NF; i++) if ($i == want) ok = 1; fn += !ok }
		END { print fn + 0; exit fn > 0 }'
}

if [ "${N1M:-0}" != only ] && [ "${BFCOST:-1}" = 1 ]; then
	echo "== bf-cost at the paper's settings (present keys; paper: 24.5, 104.29, 876.33)"
	printf '%-8s %-28s %-28s %-28s %-28s\n' N incremental "offline, one width" \
		"offline, union widths" "offline, default levels"
	for n in 1000 10000 100000; do
		synth $n
		row="$n"
		for cfg in "inc:--bloofi-build incremental --bits 100989 --hashes 7 --all-levels" \
			"one:--bits 100989 --hashes 7 --fanout 2 --all-levels" \
			"union:--expected-keys 10000 --fanout 2 --all-levels" \
			"dflt:--expected-keys 10000 --fanout 2"; do
			name=${cfg%%:*}
			opts=${cfg#*:}
			# shellcheck disable=SC2086
			$BFI build -q -o "$W/c$n-$name" --layout tree --keep-order $opts --memory 8G \
				--tsv "$W/n$n/sets.tsv"
			fn=$(false_negatives "$W/c$n-$name" tree "$W/n$n/present.txt")
			row="$row $(tree_cost "$W/c$n-$name" "$W/n$n/present.txt" | awk -v fn="$fn" '{ printf "%-28s", $1 " (p50 " $2 " us, " fn " FN)" }')"
			rm -rf "$W/c$n-$name"
		done
		echo "$row"
	done
fi

# Whole-process time per query, median of five runs: whole_query.
. tests/bench/whole.sh

# Drop a snapshot's index from the page cache (a no-op for the same file).
evict() { # snapshot-to-drop snapshot-kept
	[ "$1" = "$2" ] || dd if="$1/index.bfi" iflag=nocache count=0 status=none
}

# Each layout: bfi bench (which warms the pages it reads first), then the
# whole process (whole_query), with the other snapshot evicted first (at
# N = 10^6 the two snapshots do not both fit in memory).
speed() { # snapshot-with-flat snapshot-with-tree N
	for kind in present absent; do
		echo "-- N = $3, $kind keys"
		evict "$2" "$1"
		$BFI bench --repeat 5 --layout flat "$1" "$W/n$3/$kind.txt" | grep -A2 '^flat'
		f=$(whole_query "$BFI" "$1" flat "$W/n$3/$kind.txt")
		evict "$1" "$2"
		$BFI bench --repeat 5 --layout tree "$2" "$W/n$3/$kind.txt" | grep -A2 '^tree'
		t=$(whole_query "$BFI" "$2" tree "$W/n$3/$kind.txt")
		echo "whole bfi query process, us per query (start-up, open and output included): flat $f tree $t"
	done
	echo "false negatives on present keys: flat $(false_negatives "$1" flat "$W/n$3/present.txt")," \
		"tree $(false_negatives "$2" tree "$W/n$3/present.txt")"
}

if [ "${N1M:-0}" != only ] && [ "${SPEED:-1}" = 1 ]; then
	echo "== speed, N = 100,000 (flat and tree in one snapshot)"
	for d in 8 16 32 64; do
		$BFI build -q -o "$W/s100000-$d" --layout flat,tree --keep-order --expected-keys 10000 \
			--fanout $d --memory 8G --tsv "$W/n100000/sets.tsv"
		echo "-- fanout $d: $($BFI inspect "$W/s100000-$d" | awk '/^tree /')"
		speed "$W/s100000-$d" "$W/s100000-$d" 100000
		rm -rf "$W/s100000-$d"
	done
fi

if [ "${N1M:-0}" != 0 ]; then
	echo "== speed, N = 1,000,000 (flat and tree snapshots, one after the other)"
	synth 1000000
	[ -f "$W/f1m/index.bfi" ] || $BFI build -q -o "$W/f1m" --layout flat --keep-order \
		--expected-keys 10000 --memory 12G --tsv "$W/n1000000/sets.tsv"
	[ -f "$W/t1m/index.bfi" ] || $BFI build -q -o "$W/t1m" --layout tree --keep-order \
		--expected-keys 10000 --memory 12G --tsv "$W/n1000000/sets.tsv"
	$BFI inspect "$W/t1m" | sed -n '/^tree/,/^sections/p' | sed '$d'
	speed "$W/f1m" "$W/t1m" 1000000
fi
