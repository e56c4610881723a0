#!/bin/sh
# open.sh - build a >= 1 GB snapshot (8,192 sets, m = 1,048,576 bits, so
# 1 GiB of rows) and time bfi_open on it beside the OS floor.
# Usage: sh tests/bench/open.sh [WORKDIR]     (after ./configure && ninja)
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-open}
mkdir -p "$W"
if [ ! -f "$W/big.snap/index.bfi" ]; then
	awk 'BEGIN { for (s = 0; s < 8192; s++) for (i = 0; i < 8; i++) printf "set%05d\tkey-%d-%d\n", s, s, i }' |
		./bfi build -o "$W/big.snap" --bits 1048576 --hashes 7 --tsv -
fi
./build/tests/bench/bench_open "$W/big.snap" 2000
