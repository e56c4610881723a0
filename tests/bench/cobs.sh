#!/bin/sh
# cobs.sh - bfi's writer beside COBS's compact index on the same documents:
# 2,226 documents of 10,000 bp cut from the bacterial genomes of the genome
# workload (../shared/data/make_genome_sets.sh), k = 31, FPR 0.01, 7
# hashes, at 1 and 2 threads, alternately; then bfi with --memory twice
# COBS's peak RSS.
# Then the same on the 65 genomes themselves. Reports each run's time and
# peak RSS (GNU time), medians and ratios, and index sizes; bfi's outputs
# must be byte-identical across threads and memory. ROUNDS (3) and GROUNDS
# (1) set the rounds for documents and genomes.
# COBS: build bingmann/cobs with its tlx and xxHash submodules at their
# pinned commits, its tests and python parts off (in CMakeLists.txt comment
# out add_subdirectory of extlib/googletest, tests and python), then
# cmake -DCMAKE_BUILD_TYPE=Release .. && make cobs.
# Usage: COBS=/path/to/cobs BFI=/path/to/release/bfi sh tests/bench/cobs.sh [GENOME-WORKDIR] [WORKDIR]
set -eu
cd "$(dirname "$0")/../.."
G=${1:-${TMPDIR:-/tmp}/bfi-bench-genome}
W=${2:-${TMPDIR:-/tmp}/bfi-bench-cobs}
BFI=${BFI:-$PWD/bfi}
: "${COBS:?set COBS to the cobs binary}"
[ -d "$G/data/fasta" ] || "${SHARED:-../shared}/data/make_genome_sets.sh" "$G/data" 31
mkdir -p "$W/d"
if [ ! -f "$W/d/doc2225.fa" ]; then
	python3 - "$G/data/fasta" "$W/d" <<'PY'
import glob, gzip, os, sys
n = 0
for f in sorted(glob.glob(os.path.join(sys.argv[1], '*.fa.gz'))):
    if 'MERS' in os.path.basename(f):
        continue
    with gzip.open(f, 'rt') as fh:
        s = ''.join(l.strip().upper() for l in fh if not l.startswith('>'))
    for at in range(0, len(s) - 9999, 10000):
        if n == 2226:
            break
        c = s[at:at + 10000]
        with open(os.path.join(sys.argv[2], 'doc%04d.fa' % n), 'w') as out:
            out.write('>doc%d\n' % n + ''.join(c[i:i + 80] + '\n' for i in range(0, len(c), 80)))
        n += 1
PY
fi
timed() { # timed LABEL COMMAND...: prints "LABEL: seconds s, peak RSS MB"; seconds in $W/s, KB in $W/kb
	label=$1
	shift
	rm -f "$W"/d/*.cobs_cache "$G"/data/fasta/*.cobs_cache # COBS caches parsed documents beside them
	/usr/bin/time -f "%e %M" -o "$W/time" "$@" >/dev/null 2>"$W/err" || { cat "$W/err"; exit 1; }
	read -r s kb <"$W/time"
	rm -f "$W"/d/*.cobs_cache "$G"/data/fasta/*.cobs_cache
	echo "$label: $s s, peak RSS $((kb / 1024)) MB"
	echo "$s" >"$W/s"
	echo "$kb" >"$W/kb"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# compare NAME INPUT ROUNDS: COBS and bfi alternately at 1 and 2 threads, then
# bfi at --memory twice COBS's peak; medians, ratios and index sizes
compare() {
	name=$1 in=$2 rounds=$3
	: >"$W/$name.log"
	r=0
	while [ "$r" -lt "$rounds" ]; do
		for t in 1 2; do
			rm -rf "$W/c.cobs_compact" "$W/c.cobs_compact.tmp" "$W/b$t"
			timed "$name cobs -T $t" "$COBS" compact-construct -T "$t" -f 0.01 --num-hashes 7 -k 31 "$in" "$W/c.cobs_compact"
			echo "cobs $t $(cat "$W/s") $(cat "$W/kb")" >>"$W/$name.log"
			timed "$name bfi --threads $t" "$BFI" build -q -o "$W/b$t" --threads "$t" --input fasta --kmer 31 --fpr 0.01 --hashes 7 "$in"
			echo "bfi $t $(cat "$W/s") $(cat "$W/kb")" >>"$W/$name.log"
		done
		r=$((r + 1))
	done
	cobs_kb=$(awk '$1 == "cobs" { if ($4 > m) m = $4 } END { print m }' "$W/$name.log")
	mem=$((cobs_kb * 2 / 1024))M
	rm -rf "$W/bm"
	timed "$name bfi --threads 2 --memory $mem (twice COBS's peak)" "$BFI" build -q -o "$W/bm" --threads 2 --memory "$mem" --input fasta --kmer 31 --fpr 0.01 --hashes 7 "$in"
	mem_s=$(cat "$W/s") mem_kb=$(cat "$W/kb")
	cmp "$W/b1/index.bfi" "$W/b2/index.bfi" && cmp "$W/b1/index.bfi" "$W/bm/index.bfi" && echo "$name: bfi byte-identical at 1 and 2 threads and at $mem"
	for t in 1 2; do
		c=$(awk -v t="$t" '$1 == "cobs" && $2 == t { print $3 }' "$W/$name.log" | median)
		b=$(awk -v t="$t" '$1 == "bfi" && $2 == t { print $3 }' "$W/$name.log" | median)
		awk -v n="$name" -v t="$t" -v c="$c" -v b="$b" -v r="$rounds" 'BEGIN {
			printf "%s, %d thread(s), median of %d: COBS %.2f s, bfi %.2f s: %.2fx\n", n, t, r, c, b, c / b }'
	done
	c2=$(awk '$1 == "cobs" && $2 == 2 { print $3 }' "$W/$name.log" | median)
	awk -v n="$name" -v m="$mem" -v s="$mem_s" -v kb="$mem_kb" -v c="$c2" 'BEGIN {
		printf "%s, --memory %s: %.2f s (COBS at 2 threads: %.2f s), peak RSS %.1f MB\n", n, m, s, c, kb / 1024 }'
	echo "$name index: COBS $(stat -c %s "$W/c.cobs_compact") bytes, bfi $(stat -c %s "$W/b1/index.bfi") bytes"
}
compare documents "$W/d" "${ROUNDS:-3}"
compare genomes "$G/data/fasta" "${GROUNDS:-1}"
