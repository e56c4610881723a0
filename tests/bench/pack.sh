#!/bin/sh
# pack.sh - bfi pack and unpack against the tools a user would reach for:
# for each workload, the packed size and time at --threads 1 and 2 (level
# 3, the default, and 19), against `tar c | zstd -19 --long -T2`,
# `tar c | xz -T2` and `tar c` alone on the same files; then bfi unpack
# against `cat PACK >/dev/null` of the same pack (page cache warm), in the
# same run, ROUNDS times (3), medians.
#
# Workloads (each built here by the bfi under test, when absent):
#   text:   Debian's package descriptions (../shared/data/make_text_sets.sh)
#   genome: the 65 genomes, k = 31 (../shared/data/make_genome_sets.sh)
#   fixed:  the genomes with --fixed-width (every filter the largest's m)
#   coll:   the text sets as a collection of 4 segments, one removed set
#
# Usage: [WORKLOADS="text genome fixed coll"] [ROUNDS=3] sh tests/bench/pack.sh [WORKDIR]
#        (after ./configure && ninja)
set -eu
cd "$(dirname "$0")/../.."
BFI=$PWD/bfi
W=${1:-${TMPDIR:-/tmp}/bfi-bench-pack}
SHARED=${SHARED:-../shared}
ROUNDS=${ROUNDS:-3}
mkdir -p "$W"
[ -f "$W/text/sets.tsv" ] || "$SHARED/data/make_text_sets.sh" "$W/text" desc
[ -d "$W/genome/fasta" ] || "$SHARED/data/make_genome_sets.sh" "$W/genome" 31
[ -f "$W/text.snap/index.bfi" ] || "$BFI" build -q -o "$W/text.snap" --tsv "$W/text/sets.tsv"
[ -f "$W/genome.snap/index.bfi" ] || "$BFI" build -q -o "$W/genome.snap" --input fasta --kmer 31 "$W/genome/fasta"
[ -f "$W/fixed.snap/index.bfi" ] || "$BFI" build -q -o "$W/fixed.snap" --fixed-width --input fasta --kmer 31 "$W/genome/fasta"
if [ ! -f "$W/coll.snap/MANIFEST" ]; then
	# each set whole in one of 4 parts, dealt in turn as they first appear
	awk -F '\t' -v w="$W" '!($1 in p) { p[$1] = n++ % 4 } { print > (w "/part." p[$1]) }' "$W/text/sets.tsv"
	for p in "$W"/part.*; do "$BFI" append -q "$W/coll.snap" --tsv "$p"; done
	"$BFI" remove -q "$W/coll.snap" "$(head -1 "$W/text/sets.tsv" | cut -f1)"
	rm -f "$W"/part.*
fi

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now() { date +%s.%N; }
# timed LABEL CMD...: seconds of CMD (a shell string), appended to $W/LABEL.t
timed() {
	label=$1
	shift
	t0=$(now)
	sh -c "$*"
	t1=$(now)
	echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$W/$label.t"
}

for n in ${WORKLOADS:-text genome fixed coll}; do
	src=$W/$n.snap
	raw=$(find "$src" -type f ! -name LOCK -printf '%s\n' | awk '{ s += $1 } END { print s }')
	rm -f "$W"/*.t
	r=0
	while [ "$r" -lt "$ROUNDS" ]; do
		timed bfi1 "'$BFI' pack -q --threads 1 -o '$W/$n.pack' '$src'"
		timed bfi2 "'$BFI' pack -q --threads 2 -o '$W/$n.pack' '$src'"
		timed bfi19 "'$BFI' pack -q --threads 2 --level 19 -o '$W/$n.19.pack' '$src'"
		timed tar "tar -C '$src' --exclude=LOCK -cf '$W/$n.tar' ."
		timed zstd19 "tar -C '$src' --exclude=LOCK -cf - . | zstd -q -19 --long -T2 -o '$W/$n.tar.zst' -f"
		timed xz "tar -C '$src' --exclude=LOCK -cf - . | xz -T2 -c >'$W/$n.tar.xz'"
		timed cat "cat '$W/$n.pack' >/dev/null"
		rm -rf "$W/$n.out"
		timed unpack "'$BFI' unpack -q -o '$W/$n.out' '$W/$n.pack'"
		timed verify "'$BFI' verify -q '$W/$n.pack'"
		r=$((r + 1))
	done
	diff -r -x LOCK "$src" "$W/$n.out" >/dev/null || { echo "$n: unpacked files differ"; exit 1; }
	echo "== $n: $raw bytes of files"
	for t in bfi1 bfi2 bfi19 tar zstd19 xz; do
		case $t in
		bfi1 | bfi2) f=$W/$n.pack ;; bfi19) f=$W/$n.19.pack ;; tar) f=$W/$n.tar ;;
		zstd19) f=$W/$n.tar.zst ;; xz) f=$W/$n.tar.xz ;;
		esac
		s=$(stat -c %s "$f")
		m=$(median <"$W/$t.t")
		echo "$n $t: $s bytes ($(python3 -c "print('%.3f' % ($s / $raw))")x the files), median $m s of $(tr '\n' ' ' <"$W/$t.t")"
	done
	u=$(median <"$W/unpack.t")
	c=$(median <"$W/cat.t")
	echo "$n unpack: median $u s; cat of the pack $c s; verify of the pack $(median <"$W/verify.t") s"
done
