#!/bin/sh
# million.sh - a million sets: N documents of 500 random bases, one FASTA
# record a set (--per-record), for N in NS (10^4 10^5 10^6), each through
# every command a user runs, to find what grows faster than N:
#   build   --layout flat and --layout tree: wall time, its rate in
#           k-mers a second, peak RSS, index and catalog sizes; and which
#           of the two bfi build's default writes (byte for byte);
#   open    bfi_open with the catalog checked, and without, beside the
#           catalog's floor: its file mapped and its digest taken (bench_open);
#   query   1,000 150-bp reads cut from the documents and 1,000 random, at
#           θ = 0.8, whole process on one thread, medians of ROUNDS;
#           every positive read must find its document;
#   verify, inspect --sets, and append of N/100 more sets to a collection
#           holding the N.
#   COBS    when COBS names its binary (built as tests/bench/cobs.sh says):
#           its compact index of the same records (a .mfasta file, a
#           document a record; -f 0.01, 7 hashes, k = 31, 2 threads), its
#           build time and peak RSS, and the same reads at -t 0.8, whole
#           process on one thread, each read finding its document.
# Made from a seed; nothing shipped. The 10^6 builds take minutes and
# about 10 GB of scratch space at the default --memory.
# Usage: [BFI=./bfi] [COBS=...] [NS="10000 100000 1000000"] [ROUNDS=3] sh tests/bench/million.sh [WORKDIR]
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-million}
BFI=${BFI:-$PWD/bfi}
NS=${NS:-10000 100000 1000000}
ROUNDS=${ROUNDS:-3}
B=$PWD/tests/bench
OPEN=$PWD/build/tests/bench/bench_open
command -v /usr/bin/time >/dev/null || { echo "million.sh: needs GNU time (apt-get install time)" >&2; exit 2; }
mkdir -p "$W"

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ms() { echo $(($(date +%s%N) / 1000000)); }
timed() { # timed FILE COMMAND...: "seconds peak-KiB" into FILE, output discarded
	f=$1
	shift
	/usr/bin/time -f "%e %M" -o "$f" "$@" >/dev/null 2>"$W/err" || { cat "$W/err" "$f"; exit 1; }
}

[ -f "$W/neg.fa" ] || python3 "$B/synth_docs.py" random 1000 150 12 >"$W/neg.fa"
for n in $NS; do
	[ -s "$W/pos$n.fa" ] ||
		python3 "$B/synth_docs.py" records "$W/docs$n.fa" "$W/pos$n.fa" "$n" 500 1000 150 7
	more=$((n / 100))
	[ -s "$W/more$n.fa" ] ||
		python3 "$B/synth_docs.py" records "$W/more$n.fa" "$W/more$n.reads" "$more" 500 1 150 8
	sed -i "s/^>doc/>more/" "$W/more$n.fa"
	kmers=$((n * 470))
	for l in flat tree; do
		snap=$W/$l$n
		if [ ! -f "$snap/index.bfi" ]; then
			timed "$W/build.$l$n" "$BFI" build -q -o "$snap" --layout "$l" --per-record --input fasta \
				--kmer 31 "$W/docs$n.fa"
		fi
		read -r secs kib <"$W/build.$l$n"
		echo "N=$n $l: build $secs s ($(echo "$kmers $secs" | awk '{ printf "%.2f", $1 / $2 / 1e6 }') M k-mers/s), peak RSS $((kib / 1024)) MiB, index $(($(stat -c %s "$snap/index.bfi") / 1048576)) MiB, catalog $(($(stat -c %s "$snap/catalog.mdb") / 1048576)) MiB"
		for r in pos neg; do
			reads=$W/pos$n.fa
			[ "$r" = neg ] && reads=$W/neg.fa
			rm -f "$W/q.t"
			i=0
			while [ "$i" -lt "$ROUNDS" ]; do
				t0=$(ms)
				"$BFI" query --threads 1 --kmer 31 -t 0.8 --fasta "$reads" "$snap" >"$W/q.out"
				t1=$(ms)
				echo $((t1 - t0)) >>"$W/q.t"
				i=$((i + 1))
			done
			if [ "$r" = pos ]; then # every read finds the document it was cut from
				awk -F '\t' '{ split($1, a, "_"); found = 0; for (i = 2; i <= NF; i++) if ($i == a[2]) found = 1
					if (!found) { print "missed: " $1; bad = 1 } } END { exit bad }' "$W/q.out" ||
					{ echo "N=$n $l: a positive read missed its document"; exit 1; }
			fi
			echo "N=$n $l: 1,000 $r reads $(median <"$W/q.t") ms whole process ($(awk -F '\t' '{ s += (NF - 1) / 2 } END { printf "%.1f", s / NR }' "$W/q.out") sets a read)"
		done
	done
	if [ -n "${COBS:-}" ]; then
		ln -sf "$W/docs$n.fa" "$W/docs$n.mfasta"
		if [ ! -f "$W/cobs$n.cobs_compact" ]; then
			rm -rf "$W/cobs$n.cobs_compact.tmp"
			timed "$W/build.cobs$n" "$COBS" compact-construct -T 2 -f 0.01 --num-hashes 7 -k 31 \
				--file-type any "$W/docs$n.mfasta" "$W/cobs$n.cobs_compact"
		fi
		read -r secs kib <"$W/build.cobs$n"
		echo "N=$n COBS compact: build $secs s, peak RSS $((kib / 1024)) MiB, index $(($(stat -c %s "$W/cobs$n.cobs_compact") / 1048576)) MiB"
		for r in pos neg; do
			reads=$W/pos$n.fa
			[ "$r" = neg ] && reads=$W/neg.fa
			timed "$W/t" "$COBS" query -T 1 -t 0.8 -i "$W/cobs$n.cobs_compact" -f "$reads"
			"$COBS" query -T 1 -t 0.8 -i "$W/cobs$n.cobs_compact" -f "$reads" >"$W/q.out" 2>/dev/null
			read -r secs kib <"$W/t"
			# COBS prints "*read count" and then the documents that answer, named file_record
			if [ "$r" = pos ]; then
				awk '/^\*/ { read = $1; split(substr($1, 2), a, "_"); want = substr(a[2], 4) + 0; next }
					{ n = split($1, d, "_"); if (d[n] + 0 == want) found[read] = 1 }
					END { for (x in found) got++; exit got < 1000 }' "$W/q.out" ||
					{ echo "N=$n COBS: a positive read missed its document"; exit 1; }
			fi
			echo "N=$n COBS compact: 1,000 $r reads $secs s whole process, peak RSS $((kib / 1024)) MiB"
		done
	fi
	rm -rf "$W/default$n"
	"$BFI" build -q -o "$W/default$n" --per-record --input fasta --kmer 31 "$W/docs$n.fa"
	for l in flat tree; do
		cmp -s "$W/default$n/index.bfi" "$W/$l$n/index.bfi" && echo "N=$n: the default writes $l, byte for byte"
	done
	snap=$W/default$n
	if [ -x "$OPEN" ]; then
		# its second round, the first having warmed the page cache
		"$OPEN" "$snap" 200 | awk -v n="$n" '{ for (i = 1; i < NF; i++) if ($i == "median") m = $(i + 1) }
			/^bfi_open\(0\)/ { full = m } /BFI_OPEN_TRUSTED/ { trusted = m } /^catalog floor/ { floor = m }
			END { print "N=" n ": open with the catalog checked, median " full " us; trusted (no catalog check) " trusted " us; the catalog mapped and its digest taken " floor " us" }'
	fi
	timed "$W/t" "$BFI" verify "$snap"
	read -r secs kib <"$W/t"
	echo "N=$n: verify $secs s, peak RSS $((kib / 1024)) MiB"
	timed "$W/t" "$BFI" inspect --sets "$snap"
	read -r secs kib <"$W/t"
	echo "N=$n: inspect --sets $secs s, peak RSS $((kib / 1024)) MiB"
	rm -rf "$W/coll$n"
	timed "$W/t" "$BFI" append -q "$W/coll$n" --per-record --input fasta --kmer 31 "$W/docs$n.fa"
	timed "$W/t" "$BFI" append -q "$W/coll$n" --per-record --input fasta --kmer 31 "$W/more$n.fa"
	read -r secs kib <"$W/t"
	echo "N=$n: append of $more sets to the collection of $n: $secs s, peak RSS $((kib / 1024)) MiB"
done
