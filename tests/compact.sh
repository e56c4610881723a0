#!/bin/sh
# compact.sh - bfi compact and bfi merge against an exact oracle: a join
# answers every key as its sources did, and, where every filter has one
# width (--bits 512 --hashes 5, no pre-filters), as a fresh bfi build of
# the live sets; in the same order its index is that build's, byte for
# byte; RAMBO of one set of parameters is kept, and a tree over sets of one
# width rebuilt, as a fresh build's. Then: the size-tiered policy keeps
# segments at most log2(N) + 1;
# merge names what differs; a failure at any write, fsync or rename, and
# SIGKILL at any moment, leave the old generation (or output) or the new,
# whole; leftovers are swept.
# Usage: sh tests/compact.sh ./bfi   (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
SHIM=$(pwd)/build/tests/faults/shim.so
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-compact.XXXXXX")
trap 'rm -rf "$T"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0"
SUITE=compact
. "$(dirname "$0")/lib/check.sh"
W="--bits 512 --hashes 5 --prefilter never -q"

# parts p0..p5: sets PART_S over keys k0..k499; p0 and p1 have 600 sets, so
# that a block is lined, the others a few
for p in 0 1 2 3 4 5; do
	n=$([ $p -lt 2 ] && echo 600 || echo 7)
	awk -v p=$p -v n="$n" 'BEGIN { for (s = 0; s < n; s++) for (i = 0; i < 5 + (s * 7 + p) % 30; i++)
		printf "p%d_%d\tk%d\n", p, s, (s * 13 + i * 7 + p) % 500 }' >"$T/p$p.tsv"
done
awk 'BEGIN { for (i = 0; i < 520; i++) print "k" i; for (i = 0; i < 100; i++) print "absent" i }' >"$T/keys.txt"

# answers SNAP: "key<TAB>name" for each set answered (a key alone when none), sorted
pairs() { awk -F'\t' '{ if (NF == 1) print $1; for (i = 2; i <= NF; i++) print $1 "\t" $i }' | sort; }
answers() { "$BFI" query --keys "$1" <"$T/keys.txt" | pairs; }
gen() { od -An -t u8 -j 24 -N 8 "$1/MANIFEST" | tr -d ' '; }
segments() { "$BFI" inspect --json "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["collection"]["segments"])'; }
# live.tsv less the sets named
drop() { for n in "$@"; do printf '%s\n' "$n"; done >"$T/gone" &&
	awk -F'\t' 'NR == FNR { g[$1] = 1; next } !($1 in g)' "$T/gone" "$T/live.tsv" >"$T/live.new" &&
	mv "$T/live.new" "$T/live.tsv"; }
# fresh: a build of live.tsv; same SNAP: SNAP answers as it
fresh() { rm -rf "$T/fresh" && "$BFI" build $W -o "$T/fresh" --tsv "$T/live.tsv"; }
same() { fresh && answers "$1" >"$T/got" && answers "$T/fresh" >"$T/want" && cmp -s "$T/got" "$T/want"; }

# a collection of six appends, with removes and a replace between them
make_c() {
	rm -rf "$1" && : >"$T/live.tsv" || return 1
	for p in 0 1 2 3 4 5; do
		# shellcheck disable=SC2086
		"$BFI" append "$1" $W --tsv "$T/p$p.tsv" || return 1
		cat "$T/p$p.tsv" >>"$T/live.tsv"
	done
	"$BFI" remove -q "$1" p0_3 p0_500 p1_0 p1_599 p2_1 || return 1
	drop p0_3 p0_500 p1_0 p1_599 p2_1
	awk '$1 == "p3_2" { print "p3_2\tk" NR + 100 }' "$T/p3.tsv" >"$T/r.tsv"
	# shellcheck disable=SC2086
	"$BFI" append "$1" --replace $W --tsv "$T/r.tsv" || return 1
	drop p3_2 && cat "$T/r.tsv" >>"$T/live.tsv"
}

compacted() {
	make_c "$T/C" && same "$T/C" || return 1
	"$BFI" compact -q "$T/C" || return 1
	same "$T/C" && "$BFI" verify "$T/C" >/dev/null || return 1
	"$BFI" compact -q --full "$T/C" || return 1
	[ "$(segments "$T/C")" -eq 1 ] && same "$T/C" && "$BFI" verify "$T/C" >/dev/null || return 1
	# the removed sets are gone from the index: ordinals are the live sets
	"$BFI" inspect --json "$T/C" | python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(not (d["collection"]["ordinals"] == d["sets"]))'
}
check "compaction, by policy and --full, answers as a fresh build of the live sets" compacted

identical() {
	# the live sets in the collection's order: a fresh build of them in that order
	"$BFI" inspect --sets "$T/C" | cut -f2 >"$T/order" || return 1
	awk -F'\t' 'NR == FNR { o[$1] = NR; next } { print o[$1] "\t" $0 }' "$T/order" "$T/live.tsv" |
		sort -n -s -k1,1 | cut -f2- >"$T/ordered.tsv"
	rm -rf "$T/fresh2"
	# shellcheck disable=SC2086
	"$BFI" build $W --keep-order -o "$T/fresh2" --tsv "$T/ordered.tsv" || return 1
	cmp "$T"/C/seg-*/index.bfi "$T/fresh2/index.bfi"
}
check "fully compacted, the index is a fresh build's in the same order, byte for byte" identical

# widths chosen per segment, pre-filters where the planner wants them:
# the join keeps every filter and every answer
kept() {
	rm -rf "$T/V"
	for p in 0 1 2 3; do
		"$BFI" append "$T/V" -q --prefilter always --tsv "$T/p$p.tsv" || return 1
	done
	"$BFI" remove -q "$T/V" p0_7 p2_2 || return 1
	answers "$T/V" >"$T/before" || return 1
	"$BFI" compact -q --full "$T/V" && "$BFI" verify "$T/V" >/dev/null || return 1
	answers "$T/V" >"$T/after" && cmp -s "$T/before" "$T/after" || return 1
	! grep -q -P '\tp0_7$' "$T/after" && grep -q -P '\tp0_8$' "$T/after"
}
check "compaction of segments of other widths and pre-filters keeps every answer" kept

# one set appended at a time, compacted after each: G <= log2(N) + 1
tiered() {
	rm -rf "$T/G"
	n=0 most=0
	while [ $n -lt 48 ]; do
		printf 't%d\tk%d\n' $n $n >"$T/one.tsv"
		# shellcheck disable=SC2086
		"$BFI" append "$T/G" $W --tsv "$T/one.tsv" && "$BFI" compact -q "$T/G" || return 1
		n=$((n + 1))
		g=$(segments "$T/G")
		bound=$(python3 -c "import math; print(int(math.log2($n)) + 1)")
		[ "$g" -le "$bound" ] || { echo "$n sets in $g segments"; return 1; }
		most=$((g > most ? g : most))
	done
	echo "48 appends: at most $most segments"
	[ "$(printf 'k%d\n' 0 17 47 | "$BFI" query "$T/G" | cut -f2 | tr '\n' ' ')" = "t0 t17 t47 " ]
}
check "the size-tiered policy keeps G <= log2(N) + 1 over 48 appends" tiered

merged() {
	make_c "$T/M1" || return 1
	cp "$T/live.tsv" "$T/live1.tsv"
	awk -F'\t' '{ print "m" $0 }' "$T/p4.tsv" >"$T/m.tsv"
	rm -rf "$T/S" "$T/mo"
	# shellcheck disable=SC2086
	"$BFI" build $W -o "$T/S" --tsv "$T/m.tsv" || return 1
	"$BFI" merge -q -o "$T/mo" "$T/M1" "$T/S" && "$BFI" verify "$T/mo" >/dev/null || return 1
	cat "$T/live1.tsv" "$T/m.tsv" >"$T/live.tsv"
	same "$T/mo"
}
check "merge of a collection and a snapshot answers as a fresh build of both" merged

# a snapshot whose sets of widths far apart are a grouped run (spec, "Grouped
# blocks"): merge copies each run's block out, and answers as it did, false
# positives and all
grouped() {
	awk 'BEGIN { for (s = 0; s < 12; s++) { n = 2000 * 4 ^ int(s / 3)
		for (i = 0; i < n; i++) printf "g%d\tk%d\n", s, i * (s + 1) } }' >"$T/g.tsv" &&
		rm -rf "$T/G" "$T/go" && "$BFI" build -q -o "$T/G" --tsv "$T/g.tsv" || return 1
	"$BFI" inspect --json "$T/G" | python3 -c 'import json, sys
d = json.load(sys.stdin)
sys.exit(not (d["format"]["minor"] == 2 and any(b["grouped"] for b in d["blocks"])))' ||
		{ echo "  no grouped run made"; return 1; }
	awk 'NR % 97 == 0 { print $2 } END { for (i = 0; i < 3000; i++) print "absent" i }' "$T/g.tsv" >"$T/gk.txt"
	"$BFI" merge -q -o "$T/go" "$T/G" && "$BFI" verify "$T/go" >/dev/null &&
		"$BFI" query --keys "$T/G" <"$T/gk.txt" >"$T/gwant" &&
		"$BFI" query --keys "$T/go" <"$T/gk.txt" >"$T/ggot" && cmp -s "$T/gwant" "$T/ggot"
}
check "merge of a snapshot with a grouped run answers as it does" grouped

# a layout a join does not write is never dropped unsaid: plain gets a note
plain_noted() {
	printf 'p1\tk1\np2\tk2\n' | "$BFI" build -q -o "$T/PL" --layout flat,plain --tsv - &&
		rm -rf "$T/plo" && "$BFI" merge -o "$T/plo" "$T/PL" 2>"$T/pl.err" || return 1
	grep -q 'note: the plain layout is not kept' "$T/pl.err" || { cat "$T/pl.err"; return 1; }
	printf 'k1\nk2\n' | "$BFI" query --keys "$T/plo" | cut -f2 | tr '\n' ' ' | grep -qx 'p1 p2 '
}
check "merge says when it does not keep a plain layout, and answers as before" plain_noted

# flat, tree and RAMBO together are all kept, each answering as the source's own did
all_kept() {
	awk 'BEGIN { for (s = 0; s < 40; s++) for (i = 0; i < 50; i++) printf "a%d\tk%d\n", s, s * 13 + i }' >"$T/all.tsv" &&
		rm -rf "$T/ALL" "$T/allm" && "$BFI" build -q -o "$T/ALL" --layout flat,tree,rambo,plain --tsv "$T/all.tsv" &&
		"$BFI" merge -q -o "$T/allm" "$T/ALL" && "$BFI" verify "$T/allm" >/dev/null || return 1
	"$BFI" inspect "$T/allm" | grep -q '^layouts *flat rambo tree$' || { "$BFI" inspect "$T/allm" | grep layouts; return 1; }
	awk 'BEGIN { for (i = 0; i < 700; i++) print "k" i }' >"$T/allk.txt"
	for l in flat tree rambo; do
		"$BFI" query --keys --layout $l "$T/ALL" <"$T/allk.txt" >"$T/all.$l.want" &&
			"$BFI" query --keys --layout $l "$T/allm" <"$T/allk.txt" | cmp -s - "$T/all.$l.want" ||
			{ echo "  $l answers differ"; return 1; }
	done
}
check "merge of a snapshot with flat, tree and RAMBO keeps all three, each answering as before" all_kept

refused() {
	rm -rf "$T/k3" "$T/tx" "$T/tr" "$T/x"
	"$BFI" build -q --hashes 3 -o "$T/k3" --tsv "$T/m.tsv" &&
		mkdir -p "$T/docs" && echo "some words" >"$T/docs/d.txt" &&
		"$BFI" build -q --input text -o "$T/tx" "$T/docs" &&
		"$BFI" build -q --layout plain -o "$T/tr" --tsv "$T/m.tsv" || return 1
	"$BFI" merge -o "$T/x" "$T/S" "$T/k3" 2>"$T/e1"
	r1=$?
	"$BFI" merge -o "$T/x" "$T/S" "$T/tx" 2>"$T/e2"
	r2=$?
	"$BFI" merge -o "$T/x" "$T/S" "$T/tr" 2>"$T/e3"
	r3=$?
	"$BFI" merge -o "$T/x" "$T/S" "$T/S" 2>"$T/e4"
	r4=$?
	"$BFI" merge -o "$T/S" "$T/S" "$T/M1" 2>"$T/e5"
	r5=$?
	"$BFI" compact "$T/S" 2>"$T/e6"
	r6=$?
	[ $r1 -eq 2 ] && grep -q 'differ in k (hashes)' "$T/e1" &&
		[ $r2 -eq 2 ] && grep -q 'differ in input' "$T/e2" &&
		[ $r3 -eq 2 ] && grep -q 'has neither a flat layout nor a tree' "$T/e3" &&
		[ $r4 -eq 2 ] && grep -q 'more than one input holds a set named' "$T/e4" &&
		[ $r5 -eq 2 ] && grep -q 'names the input' "$T/e5" &&
		[ $r6 -eq 2 ] && grep -q 'not a collection' "$T/e6" && [ ! -e "$T/x" ] &&
		"$BFI" verify "$T/S" >/dev/null
}
check "merge names the parameter that differs, and refuses duplicate names and its own input" refused

# the fault shim: each write, fsync and rename of a writer failed in turn
# (ENOSPC, EIO); the command says so and the collection keeps its old
# generation, whole, or the command succeeds and the new one is whole
faults() {
	[ -f "$SHIM" ] || { echo "no $SHIM"; return 1; }
	make_c "$T/P" && answers "$T/P" >"$T/P.ans" || return 1
	rm -rf "$T/Q0" && "$BFI" merge -q -o "$T/Q0" "$T/P" || return 1 # merge's old output
	for cmd in append remove compact merge; do
		case $cmd in
		append) set -- append "$T/W" $W --tsv "$T/m.tsv" ;;
		remove) set -- remove -q "$T/W" p4_1 p5_2 ;;
		compact) set -- compact -q --full "$T/W" ;;
		merge) set -- merge -q -o "$T/Q" "$T/W" "$T/S" ;;
		esac
		rm -rf "$T/W" "$T/Q" && cp -r "$T/P" "$T/W" && cp -r "$T/Q0" "$T/Q" || return 1
		BFI_FAULT_COUNT="$T/count" LD_PRELOAD="$SHIM" "$BFI" "$@" || return 1
		n=$(cat "$T/count")
		i=1 ok=0 failed=0
		while [ $i -le "$n" ]; do
			rm -rf "$T/W" && cp -r "$T/P" "$T/W" || return 1
			[ $cmd != merge ] || { rm -rf "$T/Q" && cp -r "$T/Q0" "$T/Q"; } || return 1
			if BFI_FAULT_AT=$i LD_PRELOAD="$SHIM" "$BFI" "$@" 2>"$T/e"; then
				ok=$((ok + 1))
				if [ $cmd = merge ]; then
					"$BFI" verify "$T/Q" >/dev/null || { echo "$cmd, call $i: the output is broken"; return 1; }
				else
					"$BFI" verify "$T/W" >/dev/null && [ "$(gen "$T/W")" -eq "$(($(gen "$T/P") + 1))" ] ||
						{ echo "$cmd, call $i: succeeded, but not whole at the next generation"; return 1; }
				fi
			else
				failed=$((failed + 1))
				[ -s "$T/e" ] || { echo "$cmd, call $i: failed without a message"; return 1; }
				if [ $cmd = merge ]; then
					"$BFI" verify "$T/Q" >/dev/null && answers "$T/Q" | cmp -s - "$T/P.ans" ||
						{ echo "$cmd, call $i: the old output is not intact"; return 1; }
				else
					"$BFI" verify "$T/W" >/dev/null && [ "$(gen "$T/W")" -eq "$(gen "$T/P")" ] &&
						answers "$T/W" | cmp -s - "$T/P.ans" ||
						{ echo "$cmd, call $i: the old generation is not intact"; return 1; }
					# the next writer sweeps what the failed one left
					"$BFI" remove -q "$T/W" p5_0 || return 1
					[ "$(ls "$T/W" | grep -c -v -x -e LOCK -e MANIFEST)" -eq "$(segments "$T/W")" ] ||
						{ echo "$cmd, call $i: leftovers: $(ls "$T/W")"; return 1; }
				fi
			fi
			i=$((i + 1))
		done
		echo "$cmd: $n calls, each failed once: $failed failed cleanly, $ok succeeded whole" >>"$T/fault.counts"
	done
}
rm -f "$T/fault.counts"
check "a failure at every write, fsync and rename of append, remove, compact, merge: old or new, whole" faults
cat "$T/fault.counts" 2>/dev/null

# SIGKILL at random moments of compact (60 trials) and merge (40). A
# compaction changes no answer, so the collection answers the same at
# either generation; a merge's output, which starts as another snapshot,
# is that snapshot or the merge, whole
killed() {
	rm -rf "$T/B" && : >"$T/big.tsv" || return 1
	for p in 0 1 2 3 4 5 6 7; do
		awk -v p=$p 'BEGIN { for (s = 0; s < 1500; s++) for (i = 0; i < 8; i++)
			printf "b%d_%d\tk%d\n", p, s, (s * 11 + i * 31 + p) % 500 }' >"$T/b.tsv"
		"$BFI" append "$T/B" --bits 4096 --hashes 5 --prefilter never -q --tsv "$T/b.tsv" || return 1
	done
	"$BFI" remove -q "$T/B" b0_1 b3_3 b7_7 || return 1
	answers "$T/B" >"$T/B.ans" || return 1
	rm -rf "$T/M0" && "$BFI" build -q -o "$T/M0" --tsv "$T/p0.tsv" && answers "$T/M0" >"$T/M0.ans" || return 1
	# each command's whole run, timed uncut, so that the kills fall across
	# it at any speed of machine or build (a sanitizer's is several times slower)
	rm -rf "$T/K" "$T/M" && cp -r "$T/B" "$T/K" && cp -r "$T/M0" "$T/M" || return 1
	a=$(date +%s%N) && "$BFI" compact -q --full "$T/K" && b=$(date +%s%N) || return 1
	"$BFI" merge -q -o "$T/M" "$T/B" && c=$(date +%s%N) || return 1
	answers "$T/M" | cmp -s - "$T/B.ans" || { echo "the merge answers otherwise"; return 1; }
	ms_compact=$(((b - a) / 1000000)) ms_merge=$(((c - b) / 1000000))
	t=0 old=0 new=0
	while [ $t -lt 100 ]; do
		rm -rf "$T/K" "$T/M" && cp -r "$T/B" "$T/K" && cp -r "$T/M0" "$T/M" || return 1
		if [ $t -lt 60 ]; then
			"$BFI" compact -q --full "$T/K" 2>"$T/kerr" &
			ms=$ms_compact
		else
			"$BFI" merge -q -o "$T/M" "$T/B" 2>"$T/kerr" &
			ms=$ms_merge
		fi
		pid=$!
		# a moment in [0, 1.25 x the run), in seconds
		sleep "$(awk -v s=$t -v ms="$ms" 'BEGIN { srand(s); printf "%.3f", rand() * ms * 1.25 / 1000 }')"
		kill -9 $pid 2>/dev/null
		wait $pid
		rc=$?
		# the run ended by itself (0) or by the kill (137); never an error of its own
		[ $rc -eq 0 ] || [ $rc -eq 137 ] || { echo "trial $t: exit $rc: $(cat "$T/kerr")"; return 1; }
		if [ $t -lt 60 ]; then
			"$BFI" verify "$T/K" >/dev/null || { echo "trial $t: does not verify"; return 1; }
			answers "$T/K" | cmp -s - "$T/B.ans" || { echo "trial $t: other answers"; return 1; }
			if [ "$(gen "$T/K")" = "$(gen "$T/B")" ]; then
				old=$((old + 1))
				"$BFI" remove -q "$T/K" b5_5 || return 1 # a writer that runs to the end sweeps
				[ "$(ls "$T/K" | grep -c -v -x -e LOCK -e MANIFEST)" -eq "$(segments "$T/K")" ] ||
					{ echo "trial $t: leftovers: $(ls "$T/K")"; return 1; }
			else
				new=$((new + 1))
			fi
		else
			"$BFI" verify "$T/M" >/dev/null || { echo "trial $t: the output does not verify"; return 1; }
			answers "$T/M" >"$T/M.ans"
			if cmp -s "$T/M.ans" "$T/M0.ans"; then
				old=$((old + 1))
			elif cmp -s "$T/M.ans" "$T/B.ans"; then
				new=$((new + 1))
			else
				echo "trial $t: the output answers as neither"
				return 1
			fi
		fi
		t=$((t + 1))
	done
	# what killed merges staged beside the output, the next merge clears
	"$BFI" merge -q -o "$T/M" "$T/B" || return 1
	[ -z "$(ls -d "$T"/M.tmp-* 2>/dev/null)" ] || { echo "staging left: $(ls -d "$T"/M.tmp-*)"; return 1; }
	echo "100 joins killed (uncut: compact $ms_compact ms, merge $ms_merge ms): $old left the old generation, $new the new" >"$T/kill.counts"
	[ $old -gt 10 ] && [ $new -gt 10 ]
}
check "100 compactions and merges killed at random moments: old or new, whole; leftovers swept" killed
cat "$T/kill.counts" 2>/dev/null

# a segment whose sets are all removed is dropped; inspect lists each segment's live sets
dropped() {
	rm -rf "$T/Z" && cat "$T/p0.tsv" >"$T/live.tsv" || return 1
	# shellcheck disable=SC2086
	"$BFI" append "$T/Z" $W --tsv "$T/p0.tsv" && "$BFI" append "$T/Z" $W --tsv "$T/p2.tsv" || return 1
	cut -f1 "$T/p2.tsv" | sort -u >"$T/gone2"
	"$BFI" remove -q "$T/Z" --from "$T/gone2" && "$BFI" remove -q "$T/Z" p0_9 || return 1
	drop p0_9
	"$BFI" inspect --json "$T/Z" | python3 -c 'import json, sys
l = json.load(sys.stdin)["collection"]["segment_list"]
sys.exit(not ([(x["sets"], x["live"]) for x in l] == [(600, 599), (7, 0)] and l[1]["first"] == 600))' || return 1
	"$BFI" compact -q "$T/Z" && [ "$(segments "$T/Z")" -eq 1 ] && same "$T/Z" &&
		"$BFI" verify "$T/Z" >/dev/null || return 1
	# p0's segment, which lost less than half, is kept as it was
	"$BFI" inspect "$T/Z" | grep -q '^  seg-0000000000000001-0000  600 sets, 599 live'
}
check "a segment whose sets are all removed is dropped; inspect lists segments' live sets" dropped

# RAMBO: kept when every segment has the same parameters, its cells ORed
# as bfi stack does, so that it answers as a fresh build of all the sets;
# a segment of other parameters keeps it out, with a note that names why
rambo() {
	R="--layout flat,rambo --cells 8 --reps 2 --bits 4096 --hashes 5 --prefilter never -q"
	rm -rf "$T/R" && : >"$T/live.tsv" || return 1
	for p in 2 3 4 5; do
		# shellcheck disable=SC2086
		"$BFI" append "$T/R" $R --tsv "$T/p$p.tsv" && cat "$T/p$p.tsv" >>"$T/live.tsv" || return 1
	done
	"$BFI" compact --full "$T/R" 2>"$T/e1" && "$BFI" verify "$T/R" >/dev/null || return 1
	! grep -q note "$T/e1" && "$BFI" inspect "$T/R" | grep -q '^layouts      flat rambo$' || return 1
	rm -rf "$T/fresh"
	# shellcheck disable=SC2086
	"$BFI" build $R -o "$T/fresh" --tsv "$T/live.tsv" || return 1
	for l in flat rambo; do
		"$BFI" query --keys --layout $l "$T/R" <"$T/keys.txt" | pairs >"$T/got" &&
			"$BFI" query --keys --layout $l "$T/fresh" <"$T/keys.txt" | pairs >"$T/want" &&
			cmp -s "$T/got" "$T/want" || { echo "$l differs"; return 1; }
	done
	awk '{ print "q" $0 }' "$T/p2.tsv" >"$T/q.tsv"
	# shellcheck disable=SC2086
	"$BFI" append "$T/R" --layout flat,rambo --cells 16 --reps 2 --bits 4096 --hashes 5 -q \
		--tsv "$T/q.tsv" && "$BFI" compact --full "$T/R" 2>"$T/e2" || return 1
	grep -q "note: the rambo layout is not kept: .*segment 1) differs in the rambo layout's cells (B)" "$T/e2" &&
		"$BFI" inspect "$T/R" | grep -q '^layouts      flat$' && "$BFI" verify "$T/R" >/dev/null
}
check "compaction keeps RAMBO of one set of parameters, as a fresh build; else says why not" rambo

# the tree: rebuilt over the joined columns, level 0 the sets' filters and
# each level above the OR of its children, when every segment has a tree
# and every live set one width; else a note names the segment that keeps it out
tree() {
	w=$W
	W="--bits 4096 --hashes 5 --prefilter never -q --layout flat,tree --fanout 4"
	make_c "$T/TR"
	rc=$?
	Wt=$W
	W=$w
	[ $rc -eq 0 ] || return 1
	"$BFI" compact --full "$T/TR" 2>"$T/e1" && "$BFI" verify "$T/TR" >/dev/null || return 1
	! grep -q note "$T/e1" && "$BFI" inspect "$T/TR" | grep -q '^layouts      flat tree$' || return 1
	"$BFI" inspect --sets "$T/TR" | cut -f2 >"$T/order" || return 1
	awk -F'\t' 'NR == FNR { o[$1] = NR; next } { print o[$1] "\t" $0 }' "$T/order" "$T/live.tsv" |
		sort -n -s -k1,1 | cut -f2- >"$T/ordered.tsv"
	rm -rf "$T/fresh3"
	# shellcheck disable=SC2086
	"$BFI" build $Wt --keep-order -o "$T/fresh3" --tsv "$T/ordered.tsv" || return 1
	for l in flat tree; do
		"$BFI" query --keys --layout $l "$T/TR" <"$T/keys.txt" | pairs >"$T/got" &&
			"$BFI" query --keys --layout $l "$T/fresh3" <"$T/keys.txt" | pairs >"$T/want" &&
			cmp -s "$T/got" "$T/want" || { echo "$l differs"; return 1; }
	done
	# the index is the fresh build's, byte for byte: the tree's upper levels too
	cmp -s "$T"/TR/seg-*/index.bfi "$T/fresh3/index.bfi" || { echo "not the fresh build's bytes"; return 1; }
	"$BFI" inspect "$T"/TR/seg-* | grep -q '^tree         2 levels, fanout 4' || return 1
	# a segment of other widths keeps the tree out, and the note says why
	awk '{ print "w" $0 }' "$T/p2.tsv" >"$T/w.tsv"
	"$BFI" append "$T/TR" --bits 8192 --hashes 5 --prefilter never -q --layout flat,tree \
		--tsv "$T/w.tsv" && "$BFI" compact --full "$T/TR" 2>"$T/e2" || return 1
	grep -q "note: the tree layout is not kept: .*segment 1) holds filters of 8192 bits, others of 4096" "$T/e2" &&
		"$BFI" inspect "$T/TR" | grep -q '^layouts      flat$' && "$BFI" verify "$T/TR" >/dev/null || return 1
	# so does an input without a tree
	rm -rf "$T/TM" "$T/TW" && "$BFI" build -q --bits 4096 --hashes 5 -o "$T/TW" --tsv "$T/w.tsv" &&
		"$BFI" merge -o "$T/TM" "$T/fresh3" "$T/TW" 2>"$T/e3" || return 1
	grep -q "note: the tree layout is not kept: .*TW has no tree layout" "$T/e3" &&
		"$BFI" inspect "$T/TM" | grep -q '^layouts      flat$' || return 1
	# segments of a tree alone join from their leaves into a tree alone
	rm -rf "$T/TO" || return 1
	for p in 0 1 2; do
		"$BFI" append "$T/TO" --layout tree --bits 4096 --hashes 5 --prefilter never -q \
			--tsv "$T/p$p.tsv" || return 1
	done
	"$BFI" remove -q "$T/TO" p0_3 p1_9 && "$BFI" compact -q --full "$T/TO" &&
		"$BFI" verify "$T/TO" >/dev/null && [ "$(segments "$T/TO")" -eq 1 ] || return 1
	"$BFI" inspect "$T/TO" | grep -q '^layouts      tree$' || return 1
	cat "$T/p0.tsv" "$T/p1.tsv" "$T/p2.tsv" >"$T/live.tsv" && drop p0_3 p1_9 && rm -rf "$T/TOF" &&
		"$BFI" build -q --layout tree --bits 4096 --hashes 5 --prefilter never -o "$T/TOF" \
			--tsv "$T/live.tsv" || return 1
	answers "$T/TO" >"$T/got" && answers "$T/TOF" >"$T/want" && cmp -s "$T/got" "$T/want"
}
check "compaction rebuilds the tree of sets of one width, as a fresh build, byte for byte, with or without flat; else says why not" tree

helps() { "$BFI" compact --help | grep -q -- --full && "$BFI" merge --help | grep -q -- --output; }
check "compact and merge have --help" helps
exit $((fails > 0))
