#!/bin/sh
# query_threads.sh - one short batch of reads shared by the threads: 1,000
# 150-bp reads (cut from the documents, and random) at θ = 0.8, k = 31,
# against N documents of 10 kb of random bases, bfi query --threads 1 and
# 2, and OLD's --threads 2 when OLD is given; the whole process, ROUNDS
# rounds alternating, medians. The answers at 1 and 2 threads must be
# byte-identical; the script stops if they differ.
#
# Usage: [OLD=/path/to/old/bfi] [NEW=./bfi] [N=10000] [ROUNDS=5] [LAYOUTS="flat tree"]
#        sh tests/bench/query_threads.sh [WORKDIR]
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-qthreads}
NEW=${NEW:-$PWD/bfi}
N=${N:-10000}
ROUNDS=${ROUNDS:-5}
LAYOUTS=${LAYOUTS:-flat tree}
B=$PWD/tests/bench
mkdir -p "$W"

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# seconds LABEL OUT COMMAND...: the command's wall time (ms precision) appended to $W/LABEL.t, its output in OUT
seconds() {
	label=$1 out=$2
	shift 2
	t0=$(date +%s%N)
	"$@" >"$out" 2>"$W/err" || { cat "$W/err"; exit 1; }
	t1=$(date +%s%N)
	echo "$(((t1 - t0) / 1000000))" | awk '{ printf "%.3f\n", $1 / 1000 }' >>"$W/$label.t"
}

[ -d "$W/docs$N" ] || python3 "$B/synth_docs.py" docs "$W/docs$N" "$N" 10000 7
[ -f "$W/pos$N.fa" ] || python3 "$B/synth_docs.py" reads "$W/docs$N" 1000 150 11 >"$W/pos$N.fa"
[ -f "$W/neg.fa" ] || python3 "$B/synth_docs.py" random 1000 150 12 >"$W/neg.fa"
for l in $LAYOUTS; do
	[ -f "$W/$l$N/index.bfi" ] ||
		"$NEW" build -q -o "$W/$l$N" --layout "$l" --input fasta --kmer 31 "$W/docs$N"
done

echo "N = $N documents, 1,000 reads at θ = 0.8, $ROUNDS rounds; medians in seconds"
for l in $LAYOUTS; do
	for r in pos neg; do
		reads=$W/$r$N.fa
		[ "$r" = neg ] && reads=$W/neg.fa
		rm -f "$W"/*.t
		i=0
		while [ "$i" -lt "$ROUNDS" ]; do
			for t in 1 2; do
				seconds "t$t" "$W/out.$t" "$NEW" query --threads "$t" --layout "$l" --kmer 31 -t 0.8 \
					--fasta "$reads" "$W/$l$N"
			done
			cmp -s "$W/out.1" "$W/out.2" || { echo "$l $r: the answers at 1 and 2 threads differ"; exit 1; }
			if [ -n "${OLD:-}" ]; then
				seconds old2 "$W/out.old" "$OLD" query --threads 2 --layout "$l" --kmer 31 -t 0.8 \
					--fasta "$reads" "$W/$l$N"
			fi
			i=$((i + 1))
		done
		one=$(median <"$W/t1.t") two=$(median <"$W/t2.t")
		line="$l $r: 1 thread $one s, 2 threads $two s ($(echo "$one $two" | awk '{ printf "%.2f", $1 / $2 }')x)"
		[ -n "${OLD:-}" ] && line="$line; OLD at 2 threads $(median <"$W/old2.t") s"
		echo "$line ($(grep -c . "$W/out.1") answer lines)"
	done
done
