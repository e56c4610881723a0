#!/bin/sh
# forms.sh - what the query forms beyond a plain threshold cost, side by
# side in one run: N random genomes of G bases, READS 150-base reads cut
# from them with substitutions at rate ERR; bfi query --fasta on one
# thread at -t 0.8 (the plain threshold), --errors E (each read's own need
# by the k-mer lemma), and --format matrix at -t 0.8 (cells below it "-")
# against -t 0 (every cell its ratio), each ROUNDS times, alternating.
# Reported: each form's median seconds and its ratio to -t 0.8's, and how
# many reads each answers with their source genome. Then findere at z = 0,
# 3 and 6 at -t LOW (0.02, about 3 of a read's k-mers): the false
# answers (a genome other than the read's source; random genomes share no
# 31-mer, so the exact scan's answer is the source alone) on the reads
# and on as many random reads, against the (read, genome) pairs asked, and
# the seconds beside the plain query's at -t LOW.
# Usage: BFI=/path/to/release/bfi [N=40] [G=250000] [READS=20000] [ERR=0.01]
#        [E=2] [ROUNDS=5] [LOW=0.02] sh tests/bench/forms.sh [WORKDIR]
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-forms}
BFI=${BFI:-$PWD/bfi}
N=${N:-40}
G=${G:-250000}
READS=${READS:-20000}
ERR=${ERR:-0.01}
E=${E:-2}
ROUNDS=${ROUNDS:-5}
LOW=${LOW:-0.02}
mkdir -p "$W/g"
python3 - "$W" "$N" "$G" "$READS" "$ERR" <<'EOF'
import random, sys
w, n, g, reads, err = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
r = random.Random(1)
genomes = []
for i in range(n):
    s = "".join(r.choices("ACGT", k=g))
    genomes.append(s)
    with open(f"{w}/g/g{i:03d}.fa", "w") as f:
        f.write(f">g{i:03d}\n{s}\n")
with open(f"{w}/reads.fa", "w") as f:
    for i in range(reads):
        src = r.randrange(n)
        at = r.randrange(g - 150)
        s = list(genomes[src][at:at + 150])
        for p in range(150):
            if r.random() < err:
                s[p] = "ACGT"[("ACGT".index(s[p]) + r.randrange(1, 4)) % 4]
        f.write(f">r{i}_g{src:03d}\n{''.join(s)}\n")
with open(f"{w}/random.fa", "w") as f:
    for i in range(reads):
        f.write(f">x{i}_none\n{''.join(r.choices('ACGT', k=150))}\n")
EOF
[ -d "$W/snap" ] || "$BFI" build -q -o "$W/snap" --input fasta --kmer 31 "$W"/g/*.fa
run() { # NAME ARGS...: seconds of one run, appended to $W/NAME.t; the output in $W/NAME.out
	name=$1
	shift
	s=$(date +%s.%N)
	"$BFI" query --threads 1 --fasta "$W/reads.fa" "$@" "$W/snap" >"$W/$name.out"
	e=$(date +%s.%N)
	echo "$s $e" | awk '{ printf "%.4f\n", $2 - $1 }' >>"$W/$name.t"
}
rm -f "$W"/*.t
for _ in $(seq "$ROUNDS"); do
	run plain -t 0.8
	run errors --errors "$E"
	run mplain -t 0.8 --format matrix
	run mevery -t 0 --format matrix
done
median() { sort -n "$W/$1.t" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
found() { # reads answered with their source: names output, a read's id ends with its genome
	awk -F '\t' '{ split($1, p, "_"); for (i = 2; i <= NF; i++) if ($i == p[2]) { n++; break } } END { print n + 0 }' "$W/$1.out"
}
p=$(median plain)
printf 'N=%s G=%s reads=%s err=%s E=%s, %s rounds, one thread\n' "$N" "$G" "$READS" "$ERR" "$E" "$ROUNDS"
printf '%-28s %8s s  %5s  %s\n' "-t 0.8" "$p" "1.00" "$(found plain) reads with their source"
x=$(median errors)
printf '%-28s %8s s  %5s  %s\n' "--errors $E" "$x" "$(echo "$x $p" | awk '{ printf "%.2f", $1 / $2 }')" "$(found errors) reads with their source"
x=$(median mplain)
printf '%-28s %8s s  %5s\n' "-t 0.8 --format matrix" "$x" "$(echo "$x $p" | awk '{ printf "%.2f", $1 / $2 }')"
x=$(median mevery)
printf '%-28s %8s s  %5s\n' "-t 0 --format matrix" "$x" "$(echo "$x $p" | awk '{ printf "%.2f", $1 / $2 }')"

# findere: false answers at -t LOW by z, on the reads and on random reads
false() { # OUT: answers other than the read's source, in --format tsv
	awk -F '\t' 'NR > 1 && $2 != "" { split($1, p, "_"); if ($2 != p[2]) n++ } END { print n + 0 }' "$1"
}
pairs=$((READS * (N - 1)))
rpairs=$((READS * N))
s=$(date +%s.%N)
"$BFI" query --threads 1 --fasta "$W/reads.fa" -t "$LOW" --format tsv "$W/snap" >"$W/low.tsv"
e=$(date +%s.%N)
printf 'plain -t %s: %s s on the reads (findere'"'"'s cost is against this)\n' "$LOW" "$(echo "$s $e" | awk '{ printf "%.3f", $2 - $1 }')"
for z in 0 3 6; do
	s=$(date +%s.%N)
	"$BFI" query --threads 1 --fasta "$W/reads.fa" --findere "$z" -t "$LOW" --format tsv "$W/snap" >"$W/z$z.tsv"
	e=$(date +%s.%N)
	"$BFI" query --threads 1 --fasta "$W/random.fa" --findere "$z" -t "$LOW" --format tsv "$W/snap" >"$W/zr$z.tsv"
	fr=$(false "$W/z$z.tsv")
	fx=$(false "$W/zr$z.tsv")
	printf 'findere z=%s -t %s: %8s false of %s pairs (%s) on reads, %8s of %s (%s) on random reads, %s s\n' \
		"$z" "$LOW" "$fr" "$pairs" "$(echo "$fr $pairs" | awk '{ printf "%.2e", $1 / $2 }')" \
		"$fx" "$rpairs" "$(echo "$fx $rpairs" | awk '{ printf "%.2e", $1 / $2 }')" \
		"$(echo "$s $e" | awk '{ printf "%.3f", $2 - $1 }')"
done
