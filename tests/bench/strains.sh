#!/bin/sh
# strains.sh - sets that share most of their keys, the shape a species'
# strains or a pan-genome takes: NGROUPS (1,000) groups of PER (100) sets,
# each set its group's core of CORE (1,000) bases with one base in 200
# changed, then OWN (300) bases of its own; one FASTA record a set
# (--per-record), k = 31. Reads of 150 bp at θ = 0.8: 1,000 cut from
# groups' cores (a whole group answers) and 1,000 from sets' own parts
# (one set answers), whole process on one thread, medians of ROUNDS, on
# --layout flat and --layout tree (which bfi build's default writes for
# these: 100,000 sets of like size); every read must find the sets it was
# cut from, and the pairs only one layout answers are counted.
# Usage: [BFI=./bfi] [NGROUPS=1000] [PER=100] [CORE=1000] [OWN=300] [ROUNDS=3]
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
B=$PWD/tests/bench
command -v /usr/bin/time >/dev/null || { echo "strains.sh: needs GNU time (apt-get install time)" >&2; exit 2; }
mkdir -p "$W"
tag=${NGROUPS}x$PER
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ms() { echo $(($(date +%s%N) / 1000000)); }

[ -s "$W/own$tag.fa" ] ||
	python3 "$B/synth_docs.py" strains "$W/sets$tag.fa" "$W/core$tag.fa" "$W/own$tag.fa" \
		"$NGROUPS" "$PER" "$CORE" "$OWN" 1000 150 5
for l in flat tree; do
	snap=$W/$l$tag
	if [ ! -f "$snap/index.bfi" ]; then
		/usr/bin/time -f "%e %M" -o "$W/build.$l" "$BFI" build -q -o "$snap" --layout "$l" --per-record \
			--input fasta --kmer 31 "$W/sets$tag.fa"
	fi
	read -r secs kib <"$W/build.$l"
	echo "$NGROUPS groups of $PER, $l: build $secs s, peak RSS $((kib / 1024)) MiB, index $(($(stat -c %s "$snap/index.bfi") / 1048576)) MiB"
done
for r in core own; do
	for l in flat tree; do
		rm -f "$W/q.t"
		i=0
		while [ "$i" -lt "$ROUNDS" ]; do
			t0=$(ms)
			"$BFI" query --threads 1 --kmer 31 -t 0.8 --fasta "$W/$r$tag.fa" "$W/$l$tag" >"$W/$l.$r.out"
			t1=$(ms)
			echo $((t1 - t0)) >>"$W/q.t"
			i=$((i + 1))
		done
		echo "$r reads, $l: $(median <"$W/q.t") ms whole process ($(awk -F '\t' '{ s += (NF - 1) / 2 } END { printf "%.1f", s / NR }' "$W/$l.$r.out") sets a read)"
	done
	# each read's sets, sorted by name (the layouts number the sets differently)
	for l in flat tree; do
		awk -F '\t' '{ for (i = 2; i <= NF; i += 2) print $1 "\t" $i }' "$W/$l.$r.out" | sort >"$W/$l.$r.sets"
	done
	# every read finds the sets it was cut from: a core read its group's, an own read its set
	awk -F '\t' '{ split($1, a, "_"); if (index($2, a[2]) == 1) hit[$1] = 1; seen[$1] = 1 }
		END { for (r in seen) if (!(r in hit)) { print "missed: " r; bad = 1 } exit bad }' \
		"$W/flat.$r.sets" || { echo "$r reads: a read found none of its sets"; exit 1; }
	# the two layouts' filters differ (each sized its own way), so their false positives may
	echo "$r reads: $(comm -3 "$W/flat.$r.sets" "$W/tree.$r.sets" | wc -l) of $(sort -u "$W/flat.$r.sets" "$W/tree.$r.sets" | wc -l) (read, set) pairs answered by one layout only"
done
