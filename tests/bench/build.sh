#!/bin/sh
# build.sh - the writer's speed, memory and space, on synthetic key files:
# 200 sets x 50,000 random keys (10 M pairs), one file per set, built with
# --memory 1G and 16M at 1 and 2 threads, reporting pairs/s and peak RSS
# (GNU time), beside a second binary run alternately when BASE names one,
# and the machine's own two-core bound (two one-thread builds at once);
# then index.bfi against
# the bits of its filters at N = 1, 65 and 512 (20,000 keys a set; 2,000 at
# 512).
# Usage: sh tests/bench/build.sh [WORKDIR]   (after ./configure && ninja)
#        BASE=/path/to/old/bfi sh tests/bench/build.sh
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-build}
BFI=${BFI:-$PWD/bfi} # a release build: ./configure (sanitize builds run several times slower)
mkdir -p "$W"
command -v /usr/bin/time >/dev/null || { echo "build.sh: needs GNU time (apt-get install time)" >&2; exit 2; }
if [ ! -f "$W/keys/s199.txt" ]; then
	mkdir -p "$W/keys"
	awk -v dir="$W/keys" 'BEGIN { srand(7)
		for (j = 0; j < 200; j++) { f = sprintf("%s/s%03d.txt", dir, j)
			for (i = 0; i < 50000; i++) printf "%08x%08x\n", int(rand() * 4294967296), int(rand() * 4294967296) > f
			close(f) } }'
fi
run() { # run LABEL BINARY MEMORY THREADS: seconds in $W/secs
	/usr/bin/time -f "%e %M" -o "$W/time" "$2" build -q -o "$W/out-$1-$3-$4" --memory "$3" --threads "$4" "$W/keys"
	read -r secs kb <"$W/time"
	echo "$secs" >"$W/secs"
	awk -v l="$1" -v m="$3" -v t="$4" -v s="$secs" -v kb="$kb" 'BEGIN {
		printf "%-5s --memory %-4s --threads %d %6.2f s  %5.2f M pairs/s  peak RSS %6.1f MB\n", l, m, t, s, 10 / s, kb / 1024 }'
}
# The machine's own bound on two cores: two one-thread builds at once, each
# with its own output, against one alone; --threads 2 is measured beside it.
for round in 1 2 3; do
	for mem in 1G 16M; do
		run new "$BFI" "$mem" 1
		one=$(cat "$W/secs")
		run new "$BFI" "$mem" 2
		two=$(cat "$W/secs")
		[ -z "${BASE:-}" ] || run base "$BASE" "$mem" 1
	done
	rm -rf "$W/pair-a" "$W/pair-b"
	s0=$(date +%s.%N)
	"$BFI" build -q -o "$W/pair-a" --memory 1G --threads 1 "$W/keys" &
	"$BFI" build -q -o "$W/pair-b" --memory 1G --threads 1 "$W/keys"
	wait
	s1=$(date +%s.%N)
	awk -v one="$one" -v two="$two" -v a="$s0" -v b="$s1" 'BEGIN {
		printf "2 cores: --threads 2 is %.2fx one thread; two one-thread builds at once do %.2fx the work of one\n",
			one / two, 2 * one / (b - a) }'
done
cmp "$W/out-new-1G-1/index.bfi" "$W/out-new-16M-2/index.bfi" && echo "1G and 16M builds, 1 and 2 threads: byte-identical"
# Space: index.bfi beside the bits of the filters (each set's block width, and
# pre-filters); N = 10^4 and 10^5 from the Bloofi paper's workload (bfi synth).
for n in 1 65 512 10000 100000; do
	per=20000
	[ "$n" -lt 512 ] || per=2000
	if [ "$n" -ge 10000 ]; then
		"$BFI" synth -o "$W/synth" -n "$n" --queries 10 >/dev/null
		cp "$W/synth/sets.tsv" "$W/space.tsv"
	else
		awk -v n="$n" -v per="$per" 'BEGIN { for (j = 0; j < n; j++) for (i = 0; i < per; i++) printf "s%d\ts%d-key%d\n", j, j, i }' >"$W/space.tsv"
	fi
	"$BFI" build -q -o "$W/space-$n" --tsv "$W/space.tsv"
	size=$(stat -c %s "$W/space-$n/index.bfi")
	"$BFI" inspect --json "$W/space-$n" | python3 -c '
import json, sys
d = json.load(sys.stdin)
bits = sum(b["bits"] * b["sets"] + b["prefilter_bits"] for b in d["blocks"])
size = int(sys.argv[1])
print("N = %s: index.bfi %d bytes, filters %d bytes: %.3fx, %.3fx less 64 KiB" %
      (sys.argv[2], size, bits // 8, size / (bits / 8), (size - 65536) / (bits / 8)))' "$size" "$n"
done
