#!/bin/sh
# mixed.sh - genomes of mixed size: 16 bacteria (Debian's ragout-examples
# references), 4 Klebsiella (kleborate-examples) and 4 viruses of 10 kbp
# (gasic-examples), as sets of canonical 31-mers. Builds them with the
# default block plan (the bacteria a grouped run, whose blocks share their
# rows' lines) and with --block-cost 1M (each width a block of its own
# rows), and, if OLD is set, with that binary; prints each index's size against
# the sum of every set's own filter, m(n) at p = 0.01, and the time of
# READS 150-bp reads at θ = 0.8 and of 200,000 single k-mers, one thread,
# alternating the snapshots ROUNDS times (3). Every build must answer each
# k-mer with the genome it was cut from: no false negative.
# Usage: [OLD=/path/to/old/bfi] sh tests/bench/mixed.sh [WORKDIR] [READS]
#        (after ./configure && ninja; needs apt-get download, python3)
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-mixed}
READS=${2:-20000}
BFI=${BFI:-$PWD/bfi}
mkdir -p "$W/debs" "$W/root" "$W/g"
if [ "$(ls "$W/g" | wc -l)" -ne 24 ]; then
	(cd "$W/debs" && apt-get download ragout-examples kleborate-examples gasic-examples)
	for d in "$W"/debs/*.deb; do dpkg-deb -x "$d" "$W/root"; done
	R=$W/root/usr/share/doc
	for f in "$R"/ragout/examples/*/references/*.fasta.gz; do
		sp=$(basename "$(dirname "$(dirname "$f")")")
		cp "$f" "$W/g/${sp}__$(basename "$f" .fasta.gz).fa.gz"
	done
	for f in "$R"/kleborate/examples/data/*.fna.xz; do
		xz -dc "$f" | gzip -1 >"$W/g/Kleb__$(basename "$f" .fna.xz).fa.gz"
	done
	for f in "$R"/gasic/examples/genomes/*.fasta.gz; do
		cp "$f" "$W/g/Virus__$(basename "$f" .fasta.gz).fa.gz"
	done
fi
[ -s "$W/reads.fa" ] || python3 - "$W/g" "$READS" "$W" <<'EOF'
import gzip, os, random, sys
d, n, w = sys.argv[1], int(sys.argv[2]), sys.argv[3]
random.seed(7)
names = sorted(os.listdir(d))
seqs = ["".join(l.strip() for l in gzip.open(os.path.join(d, f), "rt") if not l.startswith(">"))
        for f in names]
with open(f"{w}/reads.fa", "w") as r, open(f"{w}/kmers.txt", "w") as k, \
        open(f"{w}/kmers.src", "w") as src:
    for i in range(n):
        s = random.choice(seqs)
        a = random.randrange(len(s) - 150)
        r.write(f">r{i}\n{s[a:a + 150]}\n")
    acgt = set("ACGTacgt")
    made = 0
    while made < 200000:  # k-mers of bases only: one with an N is no k-mer
        j = random.randrange(len(seqs))
        a = random.randrange(len(seqs[j]) - 31)
        if not set(seqs[j][a:a + 31]) <= acgt:
            continue
        k.write(seqs[j][a:a + 31] + "\n")
        src.write(names[j][:-len(".fa.gz")] + "\n")
        made += 1
EOF

variants="default cost1M"
[ -n "${OLD:-}" ] && variants="$variants old"
for v in $variants; do
	b=$BFI opt=
	[ $v = cost1M ] && opt="--block-cost 1M"
	[ $v = old ] && b=$OLD
	[ -f "$W/$v/index.bfi" ] || "$b" build -q -o "$W/$v" $opt --input fasta --kmer 31 "$W/g"
done
own=$("$BFI" inspect --sets "$W/default" | awk -F'\t' '
	{ n = $3; k = 7; m = -k * n / log(1 - exp(log(0.01) / k)); m = int(m) + (m > int(m)); s += m }
	END { printf "%.0f", s / 8 }')
echo "the sets' own filters: $own bytes"
for v in $variants; do
	bytes=$(stat -c %s "$W/$v/index.bfi")
	blocks=$("$BFI" inspect "$W/$v" | sed -n 's/^flat blocks *\([0-9]*\).*/\1/p')
	echo "$v: index.bfi $bytes bytes, $blocks blocks, $(awk -v a="$bytes" -v b="$own" 'BEGIN { printf "%.3fx", a / b }') the sets' own filters"
done
# no false negative: each k-mer's answer names the genome it was cut from
for v in $variants; do
	b=$BFI
	[ $v = old ] && b=$OLD
	"$b" query --threads 1 "$W/$v" <"$W/kmers.txt" >"$W/$v.kmers.out"
	paste "$W/kmers.src" "$W/$v.kmers.out" | awk -F'\t' -v v=$v '
		{ ok = 0; for (i = 3; i <= NF; i++) if ($i == $1) ok = 1; if (!ok) fn++ }
		END { printf "%s: %d k-mers, %d false negatives\n", v, NR, fn; exit fn > 0 }'
done
r=0
while [ "$r" -lt "${ROUNDS:-3}" ]; do
	for v in $variants; do
		b=$BFI
		[ $v = old ] && b=$OLD
		/usr/bin/time -f "%e" -o "$W/t" "$b" query --threads 1 --fasta "$W/reads.fa" -t 0.8 "$W/$v" >/dev/null
		rt=$(cat "$W/t")
		/usr/bin/time -f "%e" -o "$W/t" "$b" query --threads 1 "$W/$v" <"$W/kmers.txt" >/dev/null
		echo "$v: $READS reads at 0.8 $rt s, 200000 k-mers $(cat "$W/t") s"
	done
	r=$((r + 1))
done
