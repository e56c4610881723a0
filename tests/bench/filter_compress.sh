#!/bin/sh
# filter_compress.sh - compressed filter files (spec/format.md, "Filter
# file", version 2) against plain ones at an equal measured rate: for N
# keys, `bfi filter create --expected-keys N` and the same with
# --compress (the k of 1 to the usual one whose file is smallest), each
# file's bytes, and the rate each gives on 10^6 keys it does not hold.
# Usage: sh tests/bench/filter_compress.sh [WORKDIR]   (after ./configure && ninja)
set -eu
cd "$(dirname "$0")/../.."
BFI=$PWD/bfi
W=${1:-${TMPDIR:-/tmp}/bfi-bench-filter}
mkdir -p "$W"
awk 'BEGIN { for (i = 0; i < 1000000; i++) print "absent-" i }' >"$W/absent"
for fpr in 0.01 0.001; do
	for n in 1000 20000 1000000; do
		awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) print "key-" i }' >"$W/keys"
		"$BFI" filter create -o "$W/plain.bff" --expected-keys "$n" --fpr "$fpr" "$W/keys"
		"$BFI" filter create -o "$W/wire.bff" --expected-keys "$n" --fpr "$fpr" --compress "$W/keys"
		for f in plain wire; do
			fp=$("$BFI" filter query "$W/$f.bff" <"$W/absent" | grep -c maybe || true)
			"$BFI" filter info --json "$W/$f.bff" | python3 -c "
import json, sys
d = json.load(sys.stdin)
print('p=%s n=%d %-5s m=%d k=%d: %d bytes (%.2f bits a key), measured rate %.5f' % ('$fpr', $n, '$f', d['bits'], d['hashes'], d['file_bytes'], d['file_bytes'] * 8 / $n, $fp / 1e6))"
		done
	done
done
