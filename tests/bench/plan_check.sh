#!/bin/sh
# plan_check.sh - the 170 TB plan's arithmetic (tools/workflow/plan.py)
# against a run scaled down by SCALE (1,000) in run count: FILES runs of
# raw reads (reads.sh's generator: G-base random genomes at COV-fold,
# 0.5% substitutions, FASTQ.gz), routed by the two-level hash into SHARDS
# shards of CELLS/SHARDS cells each (about 9.6 runs a cell, as at full
# scale), R = 5, built two at a time with one thread each (a node's two
# jobs), stacked and folded as the workflow does. Printed: what plan.py
# predicts beside what the run measured, for distinct k-mers a run, build
# seconds a shard, shard, stack and fold bytes, false sets an absent k-mer
# reports (Lemma 4.1 with each cell's expected load), the rambo build's rates a core
# from FASTQ.gz, from FASTQ.gz with --min-count 2 (and the k-mers it keeps a run), and
# from k-mer lists (the genomes' k-mers, a line each),
# bfi stack's speed, and query time a k-mer on a shard and on the stack,
# warm and from a cold page cache. reads.sh's figures are kept in WORKDIR
# and reused.
# Usage: BFI=/path/to/release/bfi [SCALE=1000] [SHARDS=8] [CELLS=48] [G=100000]
#        [COV=30] sh tests/bench/plan_check.sh [WORKDIR]     (needs python3-numpy)
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-plan-check}
BFI=${BFI:-$PWD/bfi}
SCALE=${SCALE:-1000}
G=${G:-100000}
COV=${COV:-30}
SHARDS=${SHARDS:-8}
CELLS=${CELLS:-48}
PY=${PYTHON:-python3}
[ -n "${PYTHON:-}" ] || [ ! -x /usr/bin/python3 ] || PY=/usr/bin/python3
FILES=$((460000 / SCALE))
mkdir -p "$W"
# the runs, and the flat build's rate a core at this scale
[ -s "$W/reads.txt" ] || N=$FILES G=$G COV=$COV BFI=$BFI sh tests/bench/reads.sh "$W" >"$W/reads.txt"
cat "$W/reads.txt"
mb=$("$PY" -c "import os, sys; d = sys.argv[1]; f = os.listdir(d); print(sum(os.path.getsize(os.path.join(d, x)) for x in f) / len(f) / 1e6)" "$W/fq")
distinct=$(sed -n 's/.* \([0-9]*\) distinct canonical 31-mers.*/\1/p' "$W/reads.txt")
set -- --files "$FILES" --file-mb "$mb" --genome "$G" --input raw --nodes $((SHARDS / 2)) \
	--jobs-per-node 2 --threads 1 --cells "$CELLS"
eval "$("$PY" tools/workflow/plan.py "$@" --shell)"
echo "plan: $S shards of $b cells, R = $R, k = $K, m = $M bits a repetition, cells' rate as loaded $PE"
echo "distinct k-mers a run: predicted $D, measured $distinct (the first run)"
# the shards, two at a time, one thread each
rm -rf "$W"/shard.*
# shards NAME [OPTION...]: the S shards built two at a time, one thread each, into
# $W/NAME.j, their times in $W/NAME-times; prints their mean and sets rate to the
# occurrences a second a core
shards() {
	name=$1
	shift
	: >"$W/$name-times"
	i=0
	while [ "$i" -lt "$S" ]; do
		for j in $i $((i + 1)); do
			[ "$j" -lt "$S" ] || continue
			rm -rf "$W/$name.$j"
			/usr/bin/time -f "%e %U %S %M" -a -o "$W/$name-times" "$BFI" build -q --layout rambo \
				--threads 1 "$@" --route "$j/$S" --cells "$b" --reps "$R" --bits "$M" \
				--hashes "$K" --input fasta --kmer 31 -o "$W/$name.$j" "$W/fq" &
		done
		wait
		i=$((i + 2))
	done
	rate=$("$PY" - "$W/$name-times" "$OCC" "$FILES" "$S" <<'EOF'
import sys
t = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
occ = float(sys.argv[2]) * float(sys.argv[3]) / float(sys.argv[4])
print("%.4g" % (occ / (sum(u + s for w, u, s, m in t) / len(t))))
EOF
)
	awk -v r="$rate" -v what="build a shard${1:+ with $*}" '{ w += $1; c += $2 + $3; m = $4 > m ? $4 : m; n++ } END { printf "%s: %.1f s wall, %.1f CPU-s a shard (mean of %d, two at once), peak RSS %d MB: %.3g occurrences a second a core\n", what, w / n, c / n, n, m / 1024, r }' "$W/$name-times"
}
shards shard
raw_rate=$rate
# the same shards with the workflow's min_count: 2 (bfi build --min-count 2)
shards counted --min-count 2
rate_counted=$rate
rate=$raw_rate
DC=$("$PY" tools/workflow/plan.py "$@" --input counted --shell | tr ' ' '\n' | sed -n 's/^D=//p')
kept=$("$BFI" inspect --sets "$W/counted.0" | awk -F '\t' '{ k += $3; s += $7; n++ } END { printf "%.0f %.0f", k / n, s / n }')
echo "kept k-mers a run with --min-count 2: predicted $DC, measured ${kept% *} (of ${kept#* } seen; shard 0's runs)"
sz() { stat -c %s "$1/index.bfi"; }
shard_bytes=0
for j in $(seq 0 $((S - 1))); do shard_bytes=$((shard_bytes + $(sz "$W/shard.$j"))); done
echo "shards: predicted $((SHARD_BYTES * S)) bytes of rows in all, measured $shard_bytes bytes of index"
rm -rf "$W/stack" "$W/fold1" "$W/fold2" "$W/fold3"
/usr/bin/time -f "%e %M" -o "$W/t" "$BFI" stack -q -o "$W/stack" $(for j in $(seq 0 $((S - 1))); do echo "$W/shard.$j"; done)
read -r st sk <"$W/t"
stack_mbs=$("$PY" -c "print('%.1f' % ($(sz "$W/stack") / $st / 1e6))")
echo "stack: predicted $STACK_BYTES bytes of rows, measured $(sz "$W/stack") bytes of index, in $st s ($stack_mbs MB/s), peak RSS $((sk / 1024)) MB"
for f in 1 2 3; do
	"$BFI" fold -q --times "$f" -o "$W/fold$f" "$W/stack"
	eval "want=\$FOLD${f}_BYTES"
	echo "fold $f: predicted $want bytes of rows, measured $(sz "$W/fold$f")"
done
# absent k-mers: random 31-mers, none of which the runs hold but by chance
"$PY" -c "
import random
r = random.Random(7)
for _ in range(200000): print(''.join(r.choice('ACGT') for _ in range(31)))" >"$W/absent"
head -n 2000 "$W/absent" >"$W/absent2k"
for x in stack fold1 fold2 fold3; do
	"$BFI" query --layout rambo --kmer 31 "$W/$x" <"$W/absent2k" >"$W/$x.out"
	case $x in stack) pc=$PE ;; fold1) pc=$FOLD1_PE ;; fold2) pc=$FOLD2_PE ;; fold3) pc=$FOLD3_PE ;; esac
	"$PY" - "$W/$x.out" "$FILES" "$pc" "$R" "$x" <<'EOF'
import sys
out, n, pc, r, name = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
# a k-mer query is a term list: the k-mer, then each set and its score
hits = sum((len(l.rstrip("\n").split("\t")) - 1) // 2 for l in open(out))
print("%s: an absent k-mer reports %.2f sets; Lemma 4.1 with the cells as loaded, F p^R = %.2f"
      % (name, hits / 2000, n * pc ** r))
EOF
done
# the same index from k-mer lists: each run's genome k-mers, a line each (one build of all, as
# the stack answers), for the rambo build's rate a key
if [ ! -d "$W/kmers" ]; then
	mkdir -p "$W/kmers.tmp"
	"$PY" - "$W/kmers.tmp" "$FILES" "$G" <<'EOF'
import os, sys
import numpy as np
out, n, g = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for s in range(n):
    genome = np.random.default_rng(1000 + s).integers(0, 4, g, dtype=np.uint8)  # reads.sh's
    seq = np.frombuffer(b"ACGT", dtype=np.uint8)[genome].tobytes()
    with open(os.path.join(out, "s%03d" % s), "wb") as f:
        f.write(b"".join(seq[i:i + 31] + b"\n" for i in range(g - 30)))
EOF
	mv "$W/kmers.tmp" "$W/kmers"
fi
rm -rf "$W/keys.snap"
keys=$(cat "$W/kmers"/* | wc -l)
/usr/bin/time -f "%e %U %S" -o "$W/t" "$BFI" build -q --layout rambo --threads 1 --cells "$B" --shards "$S" \
	--reps "$R" --bits "$M" --hashes "$K" --input keys -o "$W/keys.snap" "$W/kmers"
read -r kw ku ks <"$W/t"
rate_keys=$("$PY" -c "print('%.4g' % ($keys / ($ku + $ks)))")
echo "from k-mer lists: $keys keys in $kw s ($ku + $ks CPU-s): $rate_keys keys a second a core"
# a k-mer's query: 200,000 absent k-mers on one shard and on the stack, warm (the second of two
# runs), and 2,000 on the stack from a cold page cache
qtime() { # qtime SNAP FILE: seconds a k-mer, the second of two runs
	"$BFI" query --layout rambo --kmer 31 "$1" <"$2" >/dev/null
	/usr/bin/time -f "%e" -o "$W/t" "$BFI" query --layout rambo --kmer 31 "$1" <"$2" >/dev/null
	"$PY" -c "print('%.2f' % ($(cat "$W/t") / $(wc -l <"$2") * 1e6))"
}
echo "query, warm: $(qtime "$W/shard.0" "$W/absent") us a k-mer on a shard, $(qtime "$W/stack" "$W/absent") us on the stack"
"$PY" -c "
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)" "$W/stack/index.bfi"
/usr/bin/time -f "%e" -o "$W/t" "$BFI" query --layout rambo --kmer 31 "$W/stack" <"$W/absent2k" >/dev/null
echo "query, cold: $("$PY" -c "print('%.1f' % ($(cat "$W/t") / 2000 * 1e6))") us a k-mer on the stack ($R x $K rows, from the disk)"
echo "== the plan at this scale, from these rates"
"$PY" tools/workflow/plan.py "$@" --rate "$rate" --rate-keys "$rate_keys" --stack-mbs "$stack_mbs"
echo "== the full plan, from these rates: raw runs, raw runs with --min-count 2, then k-mer lists"
set -- --rate "$rate" --rate-counted "$rate_counted" --rate-keys "$rate_keys" --stack-mbs "$stack_mbs"
"$PY" tools/workflow/plan.py "$@"
"$PY" tools/workflow/plan.py --input counted "$@"
"$PY" tools/workflow/plan.py --input kmers "$@"
