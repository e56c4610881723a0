#!/bin/sh
# kmindex.sh - bfi against kmindex (kmtricks) on raw reads, kmtricks' home
# ground: one FASTQ.gz sample (reads.sh's), indexed keeping the k-mers seen
# twice or more (bfi build --min-count 2, kmindex build --hard-min 2), at 1
# and 2 threads: wall seconds and peak RSS of each build, the index bytes,
# and the k-mers each kept. kmtricks' kept k-mers are dumped (its pipeline
# in kmer:count mode, then aggregate as text) and must be as many as bfi
# keeps, and every one must be in bfi's index (no false negative).
# kmindex's filter is sized for 1% a k-mer with its one hash function
# (m = n / -ln 0.99 bits, n the kept k-mers), bfi's for 1% with its own k.
# With MEMORY=M, also bfi at --memory M on 2 threads.
# Usage: BFI=/path/to/release/bfi KMINDEX=/path/to/kmindex-bin SAMPLE=s000.fq.gz [MEMORY=448M]
#        sh tests/bench/kmindex.sh [WORKDIR]
#        (KMINDEX: ../shared/peers/build_kmindex.sh builds kmindex and kmtricks)
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-kmindex}
BFI=${BFI:-$PWD/bfi}
: "${KMINDEX:?the folder of kmindex and kmtricks}"
: "${SAMPLE:?a FASTQ.gz sample}"
SAMPLE=$(realpath "$SAMPLE")
mkdir -p "$W/in"
ln -sf "$SAMPLE" "$W/in/$(basename "$SAMPLE")"
name=$(basename "$SAMPLE" | sed 's/\.f[aq]*\(\.gz\)*$//; s/\.fastq.*//; s/\.fasta.*//')
echo "$name: $SAMPLE" >"$W/fof.txt"
row() { # row WHAT: the last /usr/bin/time line as "WHAT: S s, peak RSS M MB"
	read -r s kb <"$W/time"
	echo "$1: $s s, peak RSS $((kb / 1024)) MB"
}
for t in 1 2; do
	rm -rf "$W/bfi-$t"
	/usr/bin/time -f "%e %M" -o "$W/time" "$BFI" build -q --threads "$t" --min-count 2 \
		--input fasta --kmer 31 -o "$W/bfi-$t" "$W/in"
	row "bfi build --min-count 2, $t thread(s)"
done
cmp "$W/bfi-1/index.bfi" "$W/bfi-2/index.bfi" && echo "bfi: the same index at 1 and 2 threads"
if [ -n "${MEMORY:-}" ]; then # within about kmindex's memory
	rm -rf "$W/bfi-m"
	/usr/bin/time -f "%e %M" -o "$W/time" "$BFI" build -q --threads 2 --min-count 2 \
		--memory "$MEMORY" --input fasta --kmer 31 -o "$W/bfi-m" "$W/in"
	row "bfi build --min-count 2 --memory $MEMORY, 2 threads"
	cmp "$W/bfi-1/index.bfi" "$W/bfi-m/index.bfi" && echo "bfi: the same index at --memory $MEMORY"
fi
kept=$("$BFI" inspect --sets "$W/bfi-1" | awk -F '\t' '{ print $3 }')
seen=$("$BFI" inspect --sets "$W/bfi-1" | awk -F '\t' '{ print $7 }')
echo "bfi: kept $kept of $seen distinct 31-mers; index $(stat -c %s "$W/bfi-1/index.bfi") bytes"
bits=$(awk -v n="$kept" 'BEGIN { printf "%.0f", n / -log(0.99) }')
for t in 1 2; do
	rm -rf "$W/G-$t" "$W/R-$t"
	/usr/bin/time -f "%e %M" -o "$W/time" "$KMINDEX/kmindex" build --fof "$W/fof.txt" \
		--run-dir "$W/R-$t" --index "$W/G-$t" --register-as "$name" --hard-min 2 \
		--kmer-size 31 --bloom-size "$bits" --threads "$t" >"$W/kmindex-$t.log" 2>&1
	row "kmindex build --hard-min 2 --bloom-size $bits, $t thread(s)"
done
echo "kmindex: index $(du -sb "$W/R-1/matrices" | cut -f1) bytes (its matrices), run directory $(du -sb "$W/R-1" | cut -f1) bytes"
# kmtricks' kept k-mers, as text
rm -rf "$W/K"
"$KMINDEX/kmtricks" pipeline --file "$W/fof.txt" --run-dir "$W/K" --kmer-size 31 --hard-min 2 \
	--mode kmer:count:bin --until count --threads 2 >"$W/kmtricks.log" 2>&1
"$KMINDEX/kmtricks" aggregate --run-dir "$W/K" --count "$name:kmer" --format text \
	--output "$W/kmers.txt" >>"$W/kmtricks.log" 2>&1
km=$(wc -l <"$W/kmers.txt")
echo "kmtricks: kept $km distinct 31-mers (bfi $kept)"
cut -d ' ' -f 1 "$W/kmers.txt" >"$W/kmers.only"
missing=$("$BFI" query --kmer 31 -t 1 "$W/bfi-1" <"$W/kmers.only" | awk -F '\t' 'NF < 2' | wc -l)
echo "bfi: $missing of kmtricks' $km kept k-mers missing from its index"
