#!/bin/sh
# cobs.sh - bfi's writer beside COBS's compact index on the same documents:
# 2,226 documents of 10,000 bp cut from the bacterial genomes of the genome
# workload (../shared/data/make_genome_sets.sh), k = 31, FPR 0.01, 7
# hashes, at 1 and 2 threads; then bfi with --memory twice COBS's peak RSS.
# Reports time, peak RSS (GNU time) and index size; bfi's outputs must be
# byte-identical across threads and memory.
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
timed() { # timed LABEL COMMAND...: prints "LABEL: seconds s, peak RSS MB"
	label=$1
	shift
	rm -f "$W"/d/*.cobs_cache # COBS caches parsed documents beside them
	/usr/bin/time -f "%e %M" -o "$W/time" "$@" >/dev/null 2>"$W/err" || { cat "$W/err"; exit 1; }
	read -r s kb <"$W/time"
	echo "$label: $s s, peak RSS $((kb / 1024)) MB"
	echo "$kb" >"$W/kb"
}
for round in 1 2; do
	for t in 1 2; do
		rm -rf "$W/c.cobs_compact" "$W/c.cobs_compact.tmp" "$W/b$t"
		timed "cobs compact-construct -T $t" "$COBS" compact-construct -T "$t" -f 0.01 --num-hashes 7 -k 31 "$W/d" "$W/c.cobs_compact"
		[ "$t" -eq 1 ] && cobs_kb=$(cat "$W/kb")
		timed "bfi build --threads $t" "$BFI" build -q -o "$W/b$t" --threads "$t" --input fasta --kmer 31 --fpr 0.01 --hashes 7 "$W/d"
	done
done
mem=$((cobs_kb * 2 / 1024))M
rm -rf "$W/bm"
timed "bfi build --threads 2 --memory $mem (twice COBS's peak)" "$BFI" build -q -o "$W/bm" --threads 2 --memory "$mem" --input fasta --kmer 31 --fpr 0.01 --hashes 7 "$W/d"
cmp "$W/b1/index.bfi" "$W/b2/index.bfi" && cmp "$W/b1/index.bfi" "$W/bm/index.bfi" && echo "bfi: byte-identical at 1 and 2 threads and at $mem"
echo "index: COBS $(stat -c %s "$W/c.cobs_compact") bytes, bfi $(stat -c %s "$W/b1/index.bfi") bytes"
