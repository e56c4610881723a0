#!/bin/sh
# bloofi_hash.sh - does the hash function explain the gap between our
# incremental Bloofi build and the paper's bf-cost? Runs bloofi_sim.c (an
# independent re-implementation of the paper's insertion build and search)
# with a random hash, as bfi's probes are, and with the authors' Java
# multiplicative hash, over several seeds, at N = 1,000, 10,000 and 100,000,
# and prints min / mean / max bf-cost per (N, hash). About 4 minutes.
# Usage: sh tests/bench/bloofi_hash.sh [SEEDS]   (default 8; needs a C compiler)
set -eu
cd "$(dirname "$0")/../.."
SEEDS=${1:-8}
W=${TMPDIR:-/tmp}/bfi-bench-bloofi-hash
mkdir -p "$W"
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o "$W/bloofi_sim" tests/bench/bloofi_sim.c
for n in 1000 10000 100000; do
	for hash in random java; do
		s=1
		while [ "$s" -le "$SEEDS" ]; do
			"$W/bloofi_sim" "$n" "$hash" "$s"
			s=$((s + 1))
		done | tee "$W/n$n-$hash.txt" >&2
		awk -v n="$n" -v h="$hash" -F'bf-cost=' '
			{ split($2, a, " "); c = a[1] + 0; sum += c; k++
			  if (k == 1 || c < lo) lo = c; if (k == 1 || c > hi) hi = c }
			END { printf "N=%-7d %-6s %d seeds: bf-cost min %.2f mean %.2f max %.2f\n", n, h, k, lo, sum / k, hi }' \
			"$W/n$n-$hash.txt"
	done
done
