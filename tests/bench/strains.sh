#!/bin/sh
# strains.sh - sets that share most of their keys, the shape a species'
# strains or a pan-genome takes: NGROUPS (1,000) groups of PER (100) sets,
# each set its group's core of CORE (1,000) bases with one base in 200
# changed, then OWN (300) bases of its own; one FASTA record a set
# (--per-record), k = 31. Reads of 150 bp at θ = 0.8: 1,000 cut from
# groups' cores (a whole group answers), 1,000 from sets' own parts (one
# set answers) and 1,000 random (none); and on the same sets with a mobile
# element of 1,000 bases appended to a random SHARE (0.3) of them, in
# every group (a plasmid), 100 reads of the element (a third of all sets
# answer), and the core reads again on those sets. Each read set on
# --layout flat and --layout tree, and which of the two bfi build's
# default writes for each (the tree for the strains alone, flat once the
# element spreads the sets' sizes: spec, "Choosing the layout"): whole
# process on one thread, medians of ROUNDS; and per read in the library
# (bfi bench --threshold: p50, lines touched, the latency bound for them).
# Every read must find the sets it was cut from, and the pairs only one
# layout answers are counted.
# Usage: [BFI=./bfi] [NGROUPS=1000] [PER=100] [CORE=1000] [OWN=300] [SHARE=0.3] [ROUNDS=3]
#        sh tests/bench/strains.sh [WORKDIR]
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-strains}
BFI=${BFI:-$PWD/bfi}
NGROUPS=${NGROUPS:-1000}
PER=${PER:-100}
CORE=${CORE:-1000}
OWN=${OWN:-300}
ROUNDS=${ROUNDS:-3}
SHARE=${SHARE:-0.3}
B=$PWD/tests/bench
command -v /usr/bin/time >/dev/null || { echo "strains.sh: needs GNU time (apt-get install time)" >&2; exit 2; }
mkdir -p "$W"
tag=${NGROUPS}x$PER
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ms() { echo $(($(date +%s%N) / 1000000)); }

[ -s "$W/own$tag.fa" ] ||
	python3 "$B/synth_docs.py" strains "$W/sets$tag.fa" "$W/core$tag.fa" "$W/own$tag.fa" \
		"$NGROUPS" "$PER" "$CORE" "$OWN" 1000 150 5
[ -s "$W/random.fa" ] || python3 "$B/synth_docs.py" random 1000 150 12 >"$W/random.fa"
[ -s "$W/mobile$tag.fa" ] ||
	python3 "$B/synth_docs.py" mobile "$W/sets$tag.fa" "$W/setsm$tag.fa" "$W/mobile$tag.fa" "$SHARE" \
		1000 100 150 6
for l in flat tree; do
	for v in "" m; do
		snap=$W/$l$v$tag
		if [ ! -f "$snap/index.bfi" ]; then
			/usr/bin/time -f "%e %M" -o "$W/build.$l$v" "$BFI" build -q -o "$snap" --layout "$l" \
				--per-record --input fasta --kmer 31 "$W/sets$v$tag.fa"
		fi
		read -r secs kib <"$W/build.$l$v"
		echo "$NGROUPS groups of $PER${v:+ with the mobile element}, $l: build $secs s, peak RSS $((kib / 1024)) MiB, index $(($(stat -c %s "$snap/index.bfi") / 1048576)) MiB"
	done
done
# which of the two the default writes, byte for byte, on each variant
for v in "" m; do
	rm -rf "$W/default$v$tag"
	"$BFI" build -q -o "$W/default$v$tag" --per-record --input fasta --kmer 31 "$W/sets$v$tag.fa" 2>/dev/null
	for l in flat tree; do
		cmp -s "$W/default$v$tag/index.bfi" "$W/$l$v$tag/index.bfi" &&
			echo "$NGROUPS groups of $PER${v:+ with the mobile element}: the default writes $l"
	done
	rm -rf "$W/default$v$tag"
done
for r in core own random mobile core+mobile; do
	reads=$W/$r$tag.fa v=
	[ "$r" = random ] && reads=$W/random.fa
	[ "$r" = mobile ] && v=m
	[ "$r" = core+mobile ] && reads=$W/core$tag.fa v=m # cores, on the sets with the element
	for l in flat tree; do
		rm -f "$W/q.t"
		i=0
		while [ "$i" -lt "$ROUNDS" ]; do
			t0=$(ms)
			"$BFI" query --threads 1 --kmer 31 -t 0.8 --fasta "$reads" "$W/$l$v$tag" >"$W/$l.$r.out"
			t1=$(ms)
			echo $((t1 - t0)) >>"$W/q.t"
			i=$((i + 1))
		done
		echo "$r reads, $l: $(median <"$W/q.t") ms whole process ($(awk -F '\t' '{ s += (NF - 1) / 2 } END { printf "%.1f", NR ? s / NR : 0 }' "$W/$l.$r.out") sets a read); in the library: $("$BFI" bench --threshold 0.8 --kmer 31 --layout "$l" "$W/$l$v$tag" "$reads" |
			awk '/queries  p50/ { p50 = $5 } /lines\/query/ { lines = $1; bound = $8 }
				END { print "p50 " p50 " us a read, " lines " lines, latency bound " bound " us" }')"
	done
	[ "$r" = random ] && continue
	# each read's sets, sorted by name (the layouts number the sets differently)
	for l in flat tree; do
		awk -F '\t' '{ for (i = 2; i <= NF; i += 2) print $1 "\t" $i }' "$W/$l.$r.out" | sort >"$W/$l.$r.sets"
	done
	# every read finds the sets it was cut from: a core read its group's, an own read its set,
	# a read of the element every set that carries it
	if [ "$r" = mobile ]; then
		carriers=$(awk '/^>/ { name = substr($1, 2); next } length($0) > '"$((CORE + OWN + 500))"' { n++ } END { print n }' "$W/setsm$tag.fa")
		awk -F '\t' -v want="$carriers" '{ n[$1]++ } END { for (r in n) if (n[r] < want) { print "missed carriers: " r; bad = 1 } exit bad }' \
			"$W/flat.$r.sets" || { echo "mobile reads: a read missed a carrier"; exit 1; }
	else
		awk -F '\t' '{ split($1, a, "_"); if (index($2, a[2]) == 1) hit[$1] = 1; seen[$1] = 1 }
			END { for (r in seen) if (!(r in hit)) { print "missed: " r; bad = 1 } exit bad }' \
			"$W/flat.$r.sets" || { echo "$r reads: a read found none of its sets"; exit 1; }
	fi
	# the two layouts' filters differ (each sized its own way), so their false positives may
	echo "$r reads: $(comm -3 "$W/flat.$r.sets" "$W/tree.$r.sets" | wc -l) of $(sort -u "$W/flat.$r.sets" "$W/tree.$r.sets" | wc -l) (read, set) pairs answered by one layout only"
done
