#!/bin/sh
# collection.sh - what a collection's changes cost against a rebuild: the
# Bloofi paper's workload at N = 100,000 (bfi synth) built whole, then as a
# collection to which 1% more sets are appended, from which 1,000 sets are
# removed, and over which the present keys are queried with 1 segment,
# with 8, and with the 8 compacted into one.
# Usage: BFI=./bfi sh tests/bench/collection.sh [WORKDIR]
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-collection}
BFI=${BFI:-$PWD/bfi}
mkdir -p "$W"
[ -f "$W/syn/sets.tsv" ] || "$BFI" synth -o "$W/syn" -n 101000 >/dev/null
# the first 100,000 sets, and the 1,000 after them
awk -F'\t' 'substr($1, 2) + 0 < 100000' "$W/syn/sets.tsv" >"$W/base.tsv"
awk -F'\t' 'substr($1, 2) + 0 >= 100000' "$W/syn/sets.tsv" >"$W/more.tsv"
awk -F'\t' '{ print $1 }' "$W/base.tsv" | uniq | awk 'NR % 100 == 7' >"$W/gone.txt"
secs() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
P="--expected-keys 10000 --layout flat -q"
r=0
while [ "$r" -lt "${ROUNDS:-3}" ]; do
	rm -rf "$W/full" "$W/C"
	# shellcheck disable=SC2086
	full=$(secs "$BFI" build $P -o "$W/full" --tsv "$W/base.tsv")
	# shellcheck disable=SC2086
	"$BFI" append "$W/C" $P --tsv "$W/base.tsv"
	# shellcheck disable=SC2086
	app=$(secs "$BFI" append "$W/C" $P --tsv "$W/more.tsv")
	rm=$(secs "$BFI" remove -q "$W/C" --from "$W/gone.txt")
	echo "round $r: rebuild of 100,000 sets ${full} s; append of 1,000 ${app} s ($(echo "$app $full" | awk '{ printf "%.1f%%", 100 * $1 / $2 }') of the rebuild); remove of $(wc -l <"$W/gone.txt") ${rm} s"
	r=$((r + 1))
done
# queries: one segment against eight (the same sets cut in eight appends)
rm -rf "$W/C8"
awk -F'\t' -v w="$W" '{ print > (w "/part." int(substr($1, 2) / 12500)) }' "$W/base.tsv"
for f in "$W"/part.*; do
	# shellcheck disable=SC2086
	"$BFI" append "$W/C8" $P --tsv "$f"
done
head -2000 "$W/syn/present.txt" >"$W/q.txt"
# and the eight compacted into one (a copy, so that C8 stays eight)
rm -rf "$W/C1" && cp -r "$W/C8" "$W/C1"
comp=$(secs "$BFI" compact -q --full "$W/C1")
echo "compact --full of the 8 segments: ${comp} s"
# alternating, so that the machine's drift falls on all three alike
r=0
while [ "$r" -lt "${QROUNDS:-3}" ]; do
	for c in "$W/full" "$W/C8" "$W/C1"; do
		echo "round $r $(basename "$c"): $("$BFI" bench --layout flat "$c" "$W/q.txt" | grep '^flat')"
	done
	r=$((r + 1))
done
