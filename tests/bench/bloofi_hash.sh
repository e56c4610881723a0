#!/bin/sh
# bloofi_hash.sh - what moves the bf-cost of the paper's insertion build
# away from the paper's figures? Runs bloofi_sim.c (an independent
# re-implementation of the paper's insertion build and search) at N = 1,000,
# 10,000 and 100,000, several seeds each, in three configurations:
#   random  authors  a random hash, as bfi's probes are, and the child
#                    choice of the authors' code (as writer/bloofi.c);
#   java    authors  the authors' Java multiplicative hash, same choice;
#   random  nearest  a random hash and strictly the nearest child, as the
#                    paper's text reads (bfi's writer before 2026-11-22).
# Prints min / mean / max bf-cost per (N, configuration). About 5 minutes.
# Usage: sh tests/bench/bloofi_hash.sh [SEEDS]   (default 4; needs a C compiler)
set -eu
cd "$(dirname "$0")/../.."
SEEDS=${1:-4}
W=${TMPDIR:-/tmp}/bfi-bench-bloofi-hash
mkdir -p "$W"
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o "$W/bloofi_sim" tests/bench/bloofi_sim.c
for n in 1000 10000 100000; do
	for cfg in random:authors java:authors random:nearest; do
		hash=${cfg%:*}
		rule=${cfg#*:}
		s=1
		while [ "$s" -le "$SEEDS" ]; do
			"$W/bloofi_sim" "$n" "$hash" "$s" 10000 "$rule"
			s=$((s + 1))
		done | tee "$W/n$n-$hash-$rule.txt" >&2
		awk -v n="$n" -v c="$hash $rule" -F'bf-cost=' '
			{ split($2, a, " "); v = a[1] + 0; sum += v; k++
			  if (k == 1 || v < lo) lo = v; if (k == 1 || v > hi) hi = v }
			END { printf "N=%-7d %-15s %d seeds: bf-cost min %.2f mean %.2f max %.2f\n", n, c, k, lo, sum / k, hi }' \
			"$W/n$n-$hash-$rule.txt"
	done
done
