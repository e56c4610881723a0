#!/bin/sh
# sections.sh - where zstd would pay inside a snapshot (spec/format.md,
# "Section table", encoding 1): each section of each snapshot given, and
# its catalog, compressed alone with zstd at levels 3 and 19, and the time
# zstd -d takes to give the section back against cat of it, so that a
# section's ratio can be weighed against what decompressing it costs a
# reader.
# Usage: sh tests/bench/sections.sh SNAP...   (snapshots, or collections' segments)
set -eu
cd "$(dirname "$0")/../.."
BFI=${BFI:-$PWD/bfi}
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-sections.XXXXXX")
trap 'rm -rf "$T"' EXIT
now() { date +%s.%N; }
for snap in "$@"; do
	"$BFI" inspect --json "$snap" | python3 -c '
import json, sys
for s in json.load(sys.stdin)["sections"]:
    print(s["kind"], s["offset"], s["stored_size"])' >"$T/secs"
	echo "== $snap"
	while read -r kind off size; do
		dd if="$snap/index.bfi" of="$T/sec" bs=4096 skip=$((off / 4096)) count=$(((size + 4095) / 4096)) 2>/dev/null
		truncate -s "$size" "$T/sec"
		z3=$(zstd -q -3 -c "$T/sec" | wc -c)
		z19=$(zstd -q -19 -T2 -c "$T/sec" | tee "$T/sec.zst" | wc -c)
		t0=$(now); zstd -q -d -c "$T/sec.zst" >/dev/null; t1=$(now); cat "$T/sec" >/dev/null; t2=$(now)
		echo "$kind $size $z3 $z19 $t0 $t1 $t2" | awk '{ printf "%-10s %12d bytes: zstd -3 %.3fx, -19 %.3fx; zstd -d %.3f s against cat %.3f s\n", $1, $2, $3 / $2, $4 / $2, $6 - $5, $7 - $6 }'
	done <"$T/secs"
	size=$(stat -c %s "$snap/catalog.mdb")
	z3=$(zstd -q -3 -c "$snap/catalog.mdb" | wc -c)
	z19=$(zstd -q -19 -T2 -c "$snap/catalog.mdb" | wc -c)
	echo "catalog $size $z3 $z19" | awk '{ printf "%-10s %12d bytes: zstd -3 %.3fx, -19 %.3fx (catalog.mdb, a file of its own)\n", $1, $2, $3 / $2, $4 / $2 }'
done
