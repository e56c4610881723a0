#!/bin/sh
# scaling.sh - the writer and the reader on 1 to 16 threads, on the genome
# workload of tests/bench/scale.sh (GENOMES random 5 Mbp genomes, k = 31):
#   - builds at --threads 1, 2, 4, 8 and 16: wall time, CPU time, and from
#     bfi build --stats the speed-up each allows on that many cores (CPU
#     over the busiest thread), which a machine with fewer cores can
#     measure; every index must be the same bytes;
#   - bfi query --fasta of READS 150-bp reads at θ = 0.8 on 1, 2, 4, 8 and
#     16 threads: wall time, and the same answers;
#   - and, for the documents, the same build on DOCS (a directory of
#     FASTA files, such as ../shared/data's 2,226 documents) if given.
# It runs on any machine and uses the cores it has; the predicted speed-ups
# are what --stats measures, the real ones need that many cores.
# MEMORY, if set, is every build's --memory: the default, a quarter of the
# machine's memory, may hold fewer large files than 16 threads read at once
# (the build then reads on fewer threads and says so).
# Usage: GENOMES=40 READS=100000 [MEMORY=12G] sh tests/bench/scaling.sh [WORKDIR] [DOCS]
#        (after ./configure && ninja)
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-scaling}
DOCS=${2:-}
N=${GENOMES:-40}
READS=${READS:-100000}
BFI=${BFI:-$PWD/bfi}
command -v /usr/bin/time >/dev/null || { echo "scaling.sh: needs GNU time (apt-get install time)" >&2; exit 2; }
mkdir -p "$W/g$N"
echo "machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
# 256 byte values onto 4 bases, 64 each: uniform random sequence (tests/bench/scale.sh's recipe)
map=$(printf 'ACGT%.0s' $(seq 64))
i=0
while [ "$i" -lt "$N" ]; do
	f=$(printf 'g%03d.fa' "$i")
	[ -s "$W/g$N/$f" ] ||
		{ echo ">$f"; head -c 5000000 /dev/urandom | tr '\000-\377' "$map" | fold -w 80; echo; } >"$W/g$N/$f"
	i=$((i + 1))
done
# reads: 150 bp from the genomes, each from a random place of a random genome
[ -s "$W/reads$READS.fa" ] || python3 - "$W/g$N" "$READS" >"$W/reads$READS.fa" <<'EOF'
import os, random, sys
d, n = sys.argv[1], int(sys.argv[2])
random.seed(1)
seqs = []
for f in sorted(os.listdir(d)):
    with open(os.path.join(d, f)) as h:
        seqs.append("".join(l.strip() for l in h if not l.startswith(">")))
for i in range(n):
    s = random.choice(seqs)
    at = random.randrange(len(s) - 150)
    print(f">r{i}\n{s[at:at + 150]}")
EOF

build() { # build NAME INPUT THREADS: a line of figures, the --stats table kept
	rm -rf "$W/$1"
	/usr/bin/time -f "%e %U %S" -o "$W/$1.time" "$BFI" build -q --stats --threads "$3" -o "$W/$1" \
		${MEMORY:+--memory "$MEMORY"} --input fasta --kmer 31 "$2" 2>"$W/$1.stats"
	read -r wall user sys <"$W/$1.time"
	read -r r_pred f_pred a_pred <<EOF2
$(awk '$3 == "reading" { r = $7 } $3 == "filling" { f = $7 } $3 == "all" { a = $7 } END { print r, f, a }' "$W/$1.stats")
EOF2
	printf '%-12s %3s threads: wall %7.2f s, cpu %7.2f s; allows reading %s, filling %s, all %s\n' \
		"$1" "$3" "$wall" "$(echo "$user $sys" | awk '{ print $1 + $2 }')" "$r_pred" "$f_pred" "$a_pred"
}

echo "== builds of $N genomes"
for t in 1 2 4 8 16; do
	build "g$N-t$t" "$W/g$N" $t
	cmp -s "$W/g$N-t1/index.bfi" "$W/g$N-t$t/index.bfi" || { echo "index at $t threads differs"; exit 1; }
done
if [ -n "$DOCS" ]; then
	echo "== builds of the documents in $DOCS"
	for t in 1 2 4 8 16; do
		build "docs-t$t" "$DOCS" $t
		cmp -s "$W/docs-t1/index.bfi" "$W/docs-t$t/index.bfi" || { echo "index at $t threads differs"; exit 1; }
	done
fi
echo "== $READS reads at θ = 0.8"
for t in 1 2 4 8 16; do
	/usr/bin/time -f "%e" -o "$W/q$t.time" "$BFI" query --threads "$t" --fasta "$W/reads$READS.fa" \
		-t 0.8 "$W/g$N-t1" >"$W/q$t.out"
	cmp -s "$W/q1.out" "$W/q$t.out" || { echo "answers at $t threads differ"; exit 1; }
	printf 'query %3s threads: %6.2f s, %s\n' "$t" "$(cat "$W/q$t.time")" \
		"$(awk -v a="$(cat "$W/q1.time")" -v b="$(cat "$W/q$t.time")" 'BEGIN { printf "%.2fx one thread", a / b }')"
done
