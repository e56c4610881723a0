#!/bin/sh
# prune.sh - threshold queries that prune, against counting every term on
# every set (BFI_PRUNE=off), the binary before them (OLD) and the peers:
# 1,000 150-bp reads at θ = 0.8, k = 31, FPR 0.01, each tool's whole
# process on one thread, ROUNDS (3) rounds alternating, medians.
#
# Workloads:
#   docs: the 2,226 documents of 10 kb that tests/bench/cobs.sh cuts from
#         the genome workload's bacteria (DOCS, a directory of them; made
#         by cobs.sh when absent);
#   syn:  SYN_N (100000) documents of 10 kb of random bases
#         (tests/bench/synth_docs.py).
# Reads: 1,000 cut from random documents (positive), 1,000 random (negative).
#
# Indexes: bfi's default flat layout and a tree (--layout tree) built by NEW,
# OLD's default flat layout built by OLD; COBS classic and compact
# (-f 0.01 --num-hashes 7) when COBS is set (built as cobs.sh says); Raptor
# 2.0's IBF (Debian's seqan-raptor) when RAPTOR is set, 5 hashes and sized
# so that its largest bin has FPR 0.01; Raptor's HIBF (raptor layout, then
# build, --fpr 0.01, 5 hashes, its most) when RAPTOR3 is set: seqan/raptor
# built from its source with cmake (-DCMAKE_BUILD_TYPE=Release), its CPM
# packages (hibf, seqan3, sharg, chopper, cereal, simde, tool_description_lib,
# yaml-cpp) given as local sources with -DCPM_<name>_SOURCE=DIR where the
# machine has no network. bfi's answers pruned and not must be
# byte-identical; the script stops if they differ.
#
# Usage: OLD=/path/to/old/bfi [NEW=...] [COBS=...] [RAPTOR=...] [RAPTOR3=...]
#        [WORKLOADS="docs syn"] sh tests/bench/prune.sh [WORKDIR]
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-prune}
NEW=${NEW:-$PWD/bfi}
: "${OLD:?set OLD to the binary to compare with}"
SYN_N=${SYN_N:-100000}
ROUNDS=${ROUNDS:-3}
mkdir -p "$W"
B=$PWD/tests/bench

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# seconds LABEL COMMAND...: the command's wall time in seconds (to the
# millisecond), appended to $W/LABEL.t; its output in $W/out
seconds() {
	label=$1
	shift
	t0=$(date +%s%N)
	"$@" >"$W/out" 2>"$W/err" || { cat "$W/err"; exit 1; }
	t1=$(date +%s%N)
	echo "$(((t1 - t0) / 1000000))" | awk '{ printf "%.3f\n", $1 / 1000 }' >>"$W/$label.t"
}

prepare() { # prepare NAME DOCDIR: reads and indexes of one workload
	n=$1 d=$2
	[ -f "$W/$n.pos.fa" ] || python3 "$B/synth_docs.py" reads "$d" 1000 150 11 >"$W/$n.pos.fa"
	[ -f "$W/$n.neg.fa" ] || python3 "$B/synth_docs.py" random 1000 150 12 >"$W/$n.neg.fa"
	[ -f "$W/$n.flat/index.bfi" ] || "$NEW" build -q -o "$W/$n.flat" --input fasta --kmer 31 "$d"
	[ -f "$W/$n.tree/index.bfi" ] || "$NEW" build -q -o "$W/$n.tree" --layout tree --input fasta --kmer 31 "$d"
	[ -f "$W/$n.old/index.bfi" ] || "$OLD" build -q -o "$W/$n.old" --input fasta --kmer 31 "$d"
	find "$d" -name "*.fa" | sort >"$W/$n.bins"
	if [ -n "${COBS:-}" ]; then
		for kind in classic compact; do
			[ -f "$W/$n.cobs_$kind" ] && continue
			"$COBS" $kind-construct -T 2 -f 0.01 --num-hashes 7 -k 31 --file-type fasta "$d" "$W/$n.cobs_$kind" >/dev/null 2>&1
			find "$d" -name "*.cobs_cache" -delete
		done
	fi
	if [ -n "${RAPTOR:-}" ] && [ ! -f "$W/$n.raptor2" ]; then
		# h = 5, FPR 0.01: m = -5 n / ln(1 - 0.01^(1/5)) = 9.86 n bits a bin, n the largest set's k-mers
		most=$("$NEW" inspect --json "$W/$n.flat" | python3 -c 'import json,sys; print(json.load(sys.stdin)["largest_set_keys"])')
		bins=$(($(wc -l <"$W/$n.bins") + 63))
		size=$(python3 -c "import math; print(math.ceil(9.86 * $most) * ($bins // 64 * 64) // 8 // 1024 + 1)")
		"$RAPTOR" build --kmer 31 --hash 5 --size "${size}k" --threads 2 --output "$W/$n.raptor2" "$W/$n.bins" >/dev/null 2>&1
	fi
	if [ -n "${RAPTOR3:-}" ] && [ ! -f "$W/$n.hibf" ]; then
		"$RAPTOR3" layout --input "$W/$n.bins" --kmer 31 --fpr 0.01 --hash 5 --threads 2 --output "$W/$n.layout" >/dev/null 2>&1
		"$RAPTOR3" build --input "$W/$n.layout" --threads 2 --output "$W/$n.hibf" >/dev/null 2>&1
	fi
	return 0
}

run() { # run NAME READS: every tool, one round
	n=$1 r=$2
	q="query --threads 1 --fasta $W/$n.$r.fa -t 0.8"
	seconds "$n.$r.old" "$OLD" $q "$W/$n.old"
	seconds "$n.$r.flat" "$NEW" $q "$W/$n.flat"
	cp "$W/out" "$W/$n.$r.flat.out"
	seconds "$n.$r.flat-off" env BFI_PRUNE=off "$NEW" $q "$W/$n.flat"
	cmp -s "$W/out" "$W/$n.$r.flat.out" || { echo "$n $r: flat answers differ with BFI_PRUNE=off"; exit 1; }
	seconds "$n.$r.tree" "$NEW" $q --layout tree "$W/$n.tree"
	cp "$W/out" "$W/$n.$r.tree.out"
	seconds "$n.$r.tree-off" env BFI_PRUNE=off "$NEW" $q --layout tree "$W/$n.tree"
	cmp -s "$W/out" "$W/$n.$r.tree.out" || { echo "$n $r: tree answers differ with BFI_PRUNE=off"; exit 1; }
	if [ -n "${COBS:-}" ]; then
		for kind in classic compact; do
			seconds "$n.$r.cobs_$kind" "$COBS" query -T 1 -t 0.8 -i "$W/$n.cobs_$kind" -f "$W/$n.$r.fa"
		done
	fi
	if [ -n "${RAPTOR:-}" ]; then
		seconds "$n.$r.raptor2" "$RAPTOR" search --threads 1 --threshold 0.8 --index "$W/$n.raptor2" \
			--query "$W/$n.$r.fa" --output "$W/raptor.out"
	fi
	if [ -n "${RAPTOR3:-}" ]; then
		seconds "$n.$r.hibf" "$RAPTOR3" search --threads 1 --threshold 0.8 --index "$W/$n.hibf" \
			--query "$W/$n.$r.fa" --output "$W/raptor.out"
	fi
	return 0
}

for n in ${WORKLOADS:-docs syn}; do
	case $n in
	docs)
		d=${DOCS:-${TMPDIR:-/tmp}/bfi-bench-cobs/d}
		[ -f "$d/doc2225.fa" ] || { echo "no documents in $d: run tests/bench/cobs.sh first, or set DOCS"; exit 1; } ;;
	syn)
		d=$W/syn
		[ -f "$d/doc$(printf %06d $((SYN_N - 1))).fa" ] || python3 "$B/synth_docs.py" docs "$d" "$SYN_N" 10000 7 ;;
	esac
	prepare "$n" "$d"
	rm -f "$W/$n".*.t
	i=0
	while [ "$i" -lt "$ROUNDS" ]; do
		run "$n" pos
		run "$n" neg
		i=$((i + 1))
	done
	echo "== $n: $(wc -l <"$W/$n.bins") documents; index bytes: flat $(stat -c %s "$W/$n.flat/index.bfi"), tree $(stat -c %s "$W/$n.tree/index.bfi"), old $(stat -c %s "$W/$n.old/index.bfi")"
	for f in "$W/$n".cobs_* "$W/$n.raptor2" "$W/$n.hibf"; do
		[ -f "$f" ] && echo "   $(basename "$f"): $(stat -c %s "$f") bytes"
	done
	for r in pos neg; do
		base=$(median <"$W/$n.$r.flat-off.t")
		for t in "$W/$n.$r".*.t; do
			v=$(median <"$t")
			echo "$n $r $(basename "$t" .t | cut -d. -f3): median $v s of $(tr '\n' ' ' <"$t")($(python3 -c "print('%.2f' % ($base / $v) if $v > 0 else '-')")x the unpruned flat)"
		done
	done
done
