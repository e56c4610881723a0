#!/bin/sh
# collection.sh - bfi append and bfi remove against an exact oracle: after
# every commit the collection answers every key with the same set names as
# a fresh bfi build of the live sets (every filter --bits 512 --hashes 5,
# no pre-filters, so a set's bits are the same in either), at N = 50 and
# N = 20,000. Then: a name held is refused
# without --replace, a second writer is refused with the holder's pid (and
# waits with --wait), other key rules and unknown names are refused with
# nothing committed, and what killed writers left is swept.
# Usage: sh tests/collection.sh ./bfi   (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-collection.XXXXXX")
trap 'rm -rf "$T"' EXIT
SUITE=collection
. "$(dirname "$0")/lib/check.sh"
W="--bits 512 --hashes 5 --prefilter never -q"

# sets a0..a29 and b0..b19 over keys k0..k120; r: a new a1 of other keys
awk 'BEGIN { for (s = 0; s < 30; s++) for (i = 0; i < 20; i++) printf "a%d\tk%d\n", s, s * 3 + i }' >"$T/a.tsv"
awk 'BEGIN { for (s = 0; s < 20; s++) for (i = 0; i < 20; i++) printf "b%d\tk%d\n", s, s * 5 + i }' >"$T/b.tsv"
awk 'BEGIN { for (i = 0; i < 20; i++) printf "a1\tk%d\n", 1000 + i }' >"$T/r.tsv"
awk 'BEGIN { for (i = 0; i < 140; i++) print "k" i; for (i = 1000; i < 1020; i++) print "k" i;
	for (i = 0; i < 200; i++) print "absent" i }' >"$T/keys.txt"

# answers QUERIED: a line "key<TAB>name" for each set answered (a key alone
# when none), sorted, so that neither ordinals nor order matter
answers() { "$BFI" query --keys "$1" <"$T/keys.txt" |
	awk -F'\t' '{ if (NF == 1) print $1; for (i = 2; i <= NF; i++) print $1 "\t" $i }' | sort; }

# same LIVE.TSV: the collection answers as a fresh build of LIVE.TSV
same() {
	rm -rf "$T/fresh"
	# shellcheck disable=SC2086
	"$BFI" build $W -o "$T/fresh" --tsv "$1" || return 1
	answers "$T/C" >"$T/got" && answers "$T/fresh" >"$T/want" && cmp -s "$T/got" "$T/want"
}

steps() {
	# shellcheck disable=SC2086
	"$BFI" append "$T/C" $W --tsv "$T/a.tsv" || return 1
	same "$T/a.tsv" || return 1
	# shellcheck disable=SC2086
	"$BFI" append "$T/C" $W --tsv "$T/b.tsv" || return 1
	cat "$T/a.tsv" "$T/b.tsv" >"$T/live.tsv"
	same "$T/live.tsv" || return 1
	"$BFI" remove -q "$T/C" a1 b2 || return 1
	grep -v -e '^a1	' -e '^b2	' "$T/live.tsv" >"$T/live2.tsv"
	same "$T/live2.tsv" || return 1
	# a1, removed, may come again; then replaced by itself
	# shellcheck disable=SC2086
	"$BFI" append "$T/C" $W --tsv "$T/r.tsv" || return 1
	cat "$T/live2.tsv" "$T/r.tsv" >"$T/live3.tsv"
	same "$T/live3.tsv" || return 1
	# shellcheck disable=SC2086
	"$BFI" append "$T/C" --replace $W --tsv "$T/r.tsv" || return 1
	same "$T/live3.tsv" || return 1
	"$BFI" inspect --json "$T/C" >/dev/null
}
check "after every append, remove and replace the answers equal a fresh build of the live sets" steps

# the same at N = 20,000: four appends of 5,000 sets, 700 removed, 100
# replaced by sets of other keys, and every answer checked after each step
large() {
	for p in 0 1 2 3; do
		awk -v p=$p 'BEGIN { for (s = 0; s < 5000; s++) for (i = 0; i < 3 + (s + p) % 6; i++)
			printf "L%d_%d\tk%d\n", p, s, (s * 7919 + i * 104729 + p * 31) % 50000 }' >"$T/L$p.tsv"
	done
	awk 'BEGIN { for (s = 0; s < 5000; s += 50) printf "L1_%d\tk%d\n", s, 60000 + s }' >"$T/Lr.tsv"
	awk 'BEGIN { for (i = 0; i < 2000; i++) print "k" (i * 25); for (s = 0; s < 5000; s += 50)
		print "k" (60000 + s); for (i = 0; i < 300; i++) print "absent" i }' >"$T/Lkeys.txt"
	lsame() {
		rm -rf "$T/Lfresh"
		# shellcheck disable=SC2086
		"$BFI" build $W -o "$T/Lfresh" --tsv "$T/Llive.tsv" || return 1
		"$BFI" query --keys "$T/L" <"$T/Lkeys.txt" | sort >"$T/got" &&
			"$BFI" query --keys "$T/Lfresh" <"$T/Lkeys.txt" | sort >"$T/want" || return 1
		# the same names for every key, whatever their order on the line
		python3 -c 'import sys
a, b = ([(l.split("\t")[0], sorted(l.rstrip("\n").split("\t")[1:])) for l in open(f)] for f in sys.argv[1:])
sys.exit(a != b)' "$T/got" "$T/want" || { echo "$1: other answers"; return 1; }
	}
	rm -rf "$T/L" && : >"$T/Llive.tsv" || return 1
	for p in 0 1; do
		# shellcheck disable=SC2086
		"$BFI" append "$T/L" $W --tsv "$T/L$p.tsv" && cat "$T/L$p.tsv" >>"$T/Llive.tsv" && lsame "append L$p" || return 1
	done
	awk 'BEGIN { for (s = 3; s < 5000; s += 10) print "L0_" s; for (s = 5; s < 5000; s += 25) print "L1_" s }' >"$T/Lgone"
	"$BFI" remove -q "$T/L" --from "$T/Lgone" || return 1
	awk -F'\t' 'NR == FNR { g[$1] = 1; next } !($1 in g)' "$T/Lgone" "$T/Llive.tsv" >"$T/Llive2.tsv" &&
		mv "$T/Llive2.tsv" "$T/Llive.tsv" && lsame "remove 700" || return 1
	# shellcheck disable=SC2086
	"$BFI" append "$T/L" --replace $W --tsv "$T/Lr.tsv" || return 1
	cut -f1 "$T/Lr.tsv" | sort -u >"$T/Lgone"
	{ awk -F'\t' 'NR == FNR { g[$1] = 1; next } !($1 in g)' "$T/Lgone" "$T/Llive.tsv"; cat "$T/Lr.tsv"; } >"$T/Llive2.tsv" &&
		mv "$T/Llive2.tsv" "$T/Llive.tsv" && lsame "replace 100" || return 1
	for p in 2 3; do
		# shellcheck disable=SC2086
		"$BFI" append "$T/L" $W --tsv "$T/L$p.tsv" && cat "$T/L$p.tsv" >>"$T/Llive.tsv" && lsame "append L$p" || return 1
	done
	[ "$("$BFI" inspect --json "$T/L" | python3 -c 'import json, sys; print(json.load(sys.stdin)["sets"])')" -eq \
		"$(cut -f1 "$T/Llive.tsv" | sort -u | wc -l)" ]
}
check "the same at N = 20,000: 4 appends, 700 removed, 100 replaced, each step a fresh build's answers" large

held() {
	g=$(od -An -t u8 -j 24 -N 8 "$T/C/MANIFEST" | tr -d ' ')
	# shellcheck disable=SC2086
	"$BFI" append "$T/C" $W --tsv "$T/r.tsv" 2>"$T/err"
	[ $? -eq 2 ] && grep -q 'already holds a set named a1' "$T/err" &&
		[ "$(od -An -t u8 -j 24 -N 8 "$T/C/MANIFEST" | tr -d ' ')" = "$g" ] &&
		[ "$(ls -d "$T"/C/seg-* | wc -l)" -eq 4 ]
}
check "a name the collection holds is refused without --replace; nothing committed, nothing left" held

busy() {
	command -v flock >/dev/null || return 0
	flock "$T/C/LOCK" sh -c "echo 4242 >'$T/C/LOCK'; sleep 2" &
	sleep 0.5
	"$BFI" remove "$T/C" a3 2>"$T/err"
	rc=$?
	wait
	[ $rc -eq 2 ] && grep -q 'another writer holds the collection.s lock (pid 4242)' "$T/err" &&
		echo k9 | "$BFI" query "$T/C" | grep -q a3 # and the refused writer touched nothing
}
check "a second writer is refused, naming the holder's pid, and touches nothing" busy

waits() {
	command -v flock >/dev/null || return 0
	flock "$T/C/LOCK" sleep 1 &
	sleep 0.3
	"$BFI" remove -q --wait "$T/C" a3 && wait && ! "$BFI" query "$T/C" <<EOF | grep -q 'a3'
k9
EOF
}
check "--wait waits for the lock, then commits" waits

refused() {
	mkdir -p "$T/docs" && echo "some words here" >"$T/docs/d1.txt"
	"$BFI" append "$T/C" -q --input text "$T/docs" 2>"$T/err1"
	r1=$?
	"$BFI" remove "$T/C" nosuchset 2>"$T/err2"
	r2=$?
	[ $r1 -eq 2 ] && grep -q "input differs" "$T/err1" && [ $r2 -eq 2 ] &&
		grep -q 'holds no set named nosuchset' "$T/err2" && [ "$(ls -d "$T"/C/seg-* | wc -l)" -eq 4 ]
}
check "other key rules and unknown names are refused, nothing committed" refused

swept() {
	mkdir "$T/C/seg-00000000000000ff-0000" && : >"$T/C/seg-00000000000000ff-0000/index.bfi" &&
		: >"$T/C/MANIFEST.tmp-99" && mkdir "$T/C/notours" || return 1
	"$BFI" remove -q "$T/C" a4 || return 1
	[ ! -e "$T/C/seg-00000000000000ff-0000" ] && [ ! -e "$T/C/MANIFEST.tmp-99" ] && [ -d "$T/C/notours" ]
}
check "the next writer sweeps unlisted segments and stray manifests, and nothing else" swept

verified() {
	"$BFI" verify "$T/C" >"$T/out1" || return 1
	grep -q ': ok' "$T/out1" || return 1
	# four segments; a1, b2, the second a1, a3 and a4 removed
	"$BFI" inspect --json "$T/C" | python3 -c 'import json, sys; d = json.load(sys.stdin); c = d["collection"]; sys.exit(not (c["segments"] == 4 and c["ordinals"] == d["sets"] + 5))' || return 1
	cp -r "$T/C" "$T/D" && chmod -R u+w "$T/D" || return 1
	seg=$(ls -d "$T"/D/seg-* | head -1)
	printf '\001' | dd of="$seg/index.bfi" bs=1 seek=5000 conv=notrunc 2>/dev/null
	"$BFI" verify "$T/D" >"$T/out2"
	r1=$?
	printf 'x' | dd of="$T/D/MANIFEST" bs=1 seek=70 conv=notrunc 2>/dev/null
	"$BFI" verify "$T/D" >"$T/out3"
	r2=$?
	[ $r1 -eq 1 ] && grep -q "CORRUPT: $(basename "$seg")/index.bfi" "$T/out2" && [ $r2 -eq 1 ] &&
		grep -q 'CORRUPT: MANIFEST' "$T/out3"
}
check "verify and inspect take a collection; a damaged segment or manifest is named" verified

# kill -9 at random moments of append and remove, 100 times: each time the
# collection is whole at the old generation or the new, never between;
# then one writer sweeps every leftover, and the answers are a fresh
# build's of the live sets
killed() {
	rm -rf "$T/K" && mkdir "$T/K.in" || return 1
	# shellcheck disable=SC2086
	"$BFI" append "$T/K" $W --tsv "$T/a.tsv" || return 1
	cp "$T/a.tsv" "$T/K.live"
	# an uncut append and remove, timed on a copy, so that the kills fall
	# across them at any speed of machine or build (a sanitizer's is several times slower)
	awk 'BEGIN { for (s = 0; s < 2000; s++) for (j = 0; j < 20; j++) printf "u_%d\tk%d\n", s, s * 7 + j }' >"$T/K.in/t.tsv"
	rm -rf "$T/Kt" && cp -r "$T/K" "$T/Kt" || return 1
	# shellcheck disable=SC2086
	a=$(date +%s%N) && "$BFI" append "$T/Kt" $W --tsv "$T/K.in/t.tsv" && b=$(date +%s%N) &&
		"$BFI" remove -q "$T/Kt" a3 && c=$(date +%s%N) || return 1
	ms_append=$(((b - a) / 1000000)) ms_remove=$(((c - b) / 1000000))
	rm -rf "$T/Kt"
	i=0 old=0 new=0
	while [ $i -lt 100 ]; do
		awk -v t=$i 'BEGIN { for (s = 0; s < 2000; s++) for (j = 0; j < 20; j++) printf "t%d_%d\tk%d\n", t, s, s * 7 + j }' >"$T/K.in/t.tsv"
		g=$(od -An -t u8 -j 24 -N 8 "$T/K/MANIFEST" | tr -d ' ')
		n=$(wc -l <"$T/K.live")
		if [ $((i % 4)) -eq 3 ]; then
			victim=$(awk -F'\t' 'NR % 97 == 1 { print $1 }' "$T/K.live" | tail -1)
			"$BFI" remove -q "$T/K" "$victim" 2>"$T/K.err" &
			ms=$ms_remove
		else
			# shellcheck disable=SC2086
			"$BFI" append "$T/K" $W --tsv "$T/K.in/t.tsv" 2>"$T/K.err" &
			ms=$ms_append
		fi
		pid=$!
		# a moment in [0, 1.25 x the uncut run), in seconds
		sleep "$(awk -v s=$i -v ms="$ms" 'BEGIN { srand(s); printf "%.3f", rand() * ms * 1.25 / 1000 }')"
		kill -9 $pid 2>/dev/null
		wait $pid
		rc=$?
		# the run ended by itself (0) or by the kill (137); never an error of its own
		[ $rc -eq 0 ] || [ $rc -eq 137 ] || { echo "trial $i: exit $rc: $(cat "$T/K.err")"; return 1; }
		h=$(od -An -t u8 -j 24 -N 8 "$T/K/MANIFEST" | tr -d ' ')
		"$BFI" verify "$T/K" >/dev/null || { echo "trial $i: verify failed"; return 1; }
		if [ "$h" = "$g" ]; then
			old=$((old + 1))
		elif [ "$h" = "$((g + 1))" ]; then # committed: the new generation, whole
			new=$((new + 1))
			if [ $((i % 4)) -eq 3 ]; then
				grep -v "^$victim	" "$T/K.live" >"$T/K.tmp" && mv "$T/K.tmp" "$T/K.live"
			else
				cat "$T/K.in/t.tsv" >>"$T/K.live"
			fi
		else
			echo "trial $i: generation $h after $g"
			return 1
		fi
		sets=$("$BFI" inspect --json "$T/K" | python3 -c 'import json, sys; print(json.load(sys.stdin)["sets"])')
		want=$(cut -f1 "$T/K.live" | sort -u | wc -l)
		[ "$sets" -eq "$want" ] || { echo "trial $i: $sets live sets, want $want"; return 1; }
		i=$((i + 1))
	done
	echo "killed writers (uncut: append $ms_append ms, remove $ms_remove ms): $old left the old generation, $new the new" >"$T/K.counts"
	[ $old -gt 10 ] && [ $new -gt 10 ] || return 1 # the kills came before and after commits
	"$BFI" remove -q "$T/K" a0 || return 1 # a writer that runs to the end sweeps
	grep -v '^a0	' "$T/K.live" >"$T/K.tmp" && mv "$T/K.tmp" "$T/K.live"
	segs=$("$BFI" inspect --json "$T/K" | python3 -c 'import json, sys; print(json.load(sys.stdin)["collection"]["segments"])')
	[ "$(ls "$T/K" | grep -c -v -x -e LOCK -e MANIFEST)" -eq "$segs" ] ||
		{ echo "leftovers: $(ls "$T/K")"; return 1; }
	rm -rf "$T/fresh"
	# shellcheck disable=SC2086
	"$BFI" build $W -o "$T/fresh" --tsv "$T/K.live" || return 1
	answers "$T/K" >"$T/got" && answers "$T/fresh" >"$T/want" && cmp -s "$T/got" "$T/want"
}
check "100 writers killed at random moments: old or new generation, whole; leftovers swept" killed
cat "$T/K.counts" 2>/dev/null

unmade() {
	"$BFI" append "$T/new" -q --tsv "$T/no-such.tsv" 2>"$T/err3"
	[ $? -eq 2 ] && grep -q '^bfi append: .*no-such.tsv: No such file' "$T/err3" && [ ! -e "$T/new" ] &&
		mkdir "$T/mine" && "$BFI" append "$T/mine" -q --tsv "$T/no-such.tsv" 2>/dev/null
	[ $? -eq 2 ] && [ -d "$T/mine" ] && [ -z "$(ls "$T/mine")" ]
}
check "a first append that fails says bfi append, and leaves no collection (nor removes a directory it did not make)" unmade

helps() { "$BFI" append --help | grep -q -- --replace && "$BFI" remove --help | grep -q -- --from; }
check "append and remove have --help" helps
exit $((fails > 0))
