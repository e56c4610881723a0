#!/bin/sh
# pack.sh - bfi pack and unpack through the command line (spec/format.md,
# "Packs"): a snapshot and a collection of two segments packed and
# unpacked byte for byte; `zstd -d | tar -x` giving the same files; the
# unpacked collection answering as the packed one; a damaged pack refused
# with status 1 and nothing written, and a pack killed midway leaving
# nothing; a non-pack output never replaced; a collection unpacked over
# a collection, swapped in whole, but not while a writer holds its lock;
# --help and a mistyped option.
# Usage: sh tests/pack.sh ./bfi    (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-pack.XXXXXX")
trap 'rm -rf "$T"' EXIT
SUITE=pack
. tests/lib/check.sh # check NAME COMMAND...: the command must succeed
awk 'BEGIN { for (s = 0; s < 60; s++) for (i = 0; i < 200; i++) printf "set%02d\tkey-%d-%d\n", s, s % 7, i * (s + 1) }' >"$T/sets.tsv"
head -6000 "$T/sets.tsv" >"$T/a.tsv"
tail -6000 "$T/sets.tsv" >"$T/b.tsv"
"$BFI" build -q -o "$T/snap" --tsv "$T/sets.tsv" || exit 1
"$BFI" append -q "$T/coll" --tsv "$T/a.tsv" && "$BFI" append -q "$T/coll" --tsv "$T/b.tsv" || exit 1

# same DIR1 DIR2: the same files, byte for byte (a collection's LOCK is not packed)
same() {
	(cd "$1" && find . -type f ! -name LOCK | sort) >"$T/l1"
	(cd "$2" && find . -type f ! -name LOCK | sort) >"$T/l2"
	cmp -s "$T/l1" "$T/l2" || { echo "other files:"; diff "$T/l1" "$T/l2"; return 1; }
	while read -r f; do cmp "$1/$f" "$2/$f" || return 1; done <"$T/l1"
}
roundtrip() { # roundtrip SRC NAME: pack, unpack, compare; then zstd and tar
	"$BFI" pack -q --threads 2 -o "$T/$2.pack" "$1" &&
		"$BFI" unpack -q -o "$T/$2.out" "$T/$2.pack" && same "$1" "$T/$2.out" &&
		mkdir "$T/$2.tar" && zstd -q -d <"$T/$2.pack" | tar -x -C "$T/$2.tar" && same "$1" "$T/$2.tar"
}
check "a snapshot: packed, unpacked byte for byte; zstd -d | tar -x the same" roundtrip "$T/snap" snap
check "a collection of two segments: the same" roundtrip "$T/coll" coll
answers() {
	cut -f2 "$T/sets.tsv" | sort -u | head -300 >"$T/q"
	"$BFI" query "$T/coll" <"$T/q" >"$T/a1" && "$BFI" query "$T/coll.out" <"$T/q" >"$T/a2" &&
		cmp "$T/a1" "$T/a2" && "$BFI" verify -q "$T/coll.out"
}
check "the unpacked collection answers as the packed one, and verifies" answers
threads() {
	"$BFI" pack -q --threads 1 --frame 4K -o "$T/t1.pack" "$T/snap" &&
		"$BFI" pack -q --threads 2 --frame 4K -o "$T/t2.pack" "$T/snap" && cmp "$T/t1.pack" "$T/t2.pack"
}
check "the same pack at 1 and 2 threads" threads
stats() {
	"$BFI" pack -q --stats --frame 4K -o "$T/s.pack" "$T/snap" 2>"$T/e" && cmp "$T/s.pack" "$T/t1.pack" &&
		grep -q "stats: serial .* s CPU .* compressing .* over [0-9]* frames; at 16 threads at least" "$T/e"
}
check "--stats says where the CPU went, and changes no byte" stats
damaged() {
	size=$(stat -c %s "$T/t1.pack")
	cp "$T/t1.pack" "$T/bad.pack"
	printf 'X' | dd of="$T/bad.pack" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
	"$BFI" unpack -q -o "$T/bad.out" "$T/bad.pack" 2>"$T/e"
	[ $? -eq 1 ] && grep -q "frame" "$T/e" && [ ! -e "$T/bad.out" ] || return 1
	head -c $((size - 3)) "$T/t1.pack" >"$T/cut.pack"
	"$BFI" unpack -q -o "$T/bad.out" "$T/cut.pack" 2>"$T/e"
	[ $? -eq 1 ] && [ ! -e "$T/bad.out" ] && ! ls "$T" | grep -q 'tmp-' || return 1
	# cut before its seek table, and halfway: named truncated, not "not a pack"
	for cut in $((size - 3)) $((size / 2)); do
		head -c "$cut" "$T/t1.pack" >"$T/cut.pack"
		! "$BFI" query "$T/cut.pack" x 2>"$T/e" && grep -q "truncated" "$T/e" &&
			! "$BFI" verify "$T/cut.pack" >"$T/v" && grep -q "truncated\|cut short" "$T/v" || return 1
	done
	# a zstd file that is no pack is still called so
	printf 'hello\n' | zstd -q >"$T/hello.zst" && ! "$BFI" query "$T/hello.zst" x 2>"$T/e" &&
		grep -q "not a bfi pack" "$T/e" && ! grep -q truncated "$T/e"
}
check "a damaged or truncated pack: status 1, nothing written; a cut one named truncated" damaged
killed() { # a pack killed midway (SIGXFSZ at 4 KiB written) leaves no file behind
	(ulimit -f 8 && exec "$BFI" pack -q --frame 4K -o "$T/killed.pack" "$T/snap") 2>/dev/null
	st=$?
	[ "$st" -gt 128 ] && [ ! -e "$T/killed.pack" ] && ! ls -a "$T" | grep -q 'tmp-'
}
check "a pack killed midway leaves nothing behind" killed
not_replaced() {
	echo "precious" >"$T/keep"
	! "$BFI" pack -q -o "$T/keep" "$T/snap" 2>"$T/e" && grep -q "not a bfi pack" "$T/e" &&
		[ "$(cat "$T/keep")" = precious ] &&
		"$BFI" query "$T/snap" <"$T/q" >"$T/s0" &&
		! "$BFI" unpack -q -o "$T/snap" "$T/coll.pack" 2>"$T/e" && grep -q "not a collection" "$T/e" &&
		"$BFI" query "$T/snap" <"$T/q" >"$T/s3" && cmp "$T/s0" "$T/s3" &&
		mkdir "$T/mine" && echo "mine" >"$T/mine/notes" &&
		! "$BFI" unpack -q -o "$T/mine" "$T/coll.pack" 2>"$T/e" && grep -q "not a collection" "$T/e" &&
		[ "$(cat "$T/mine/notes")" = mine ]
}
check "a file that is not a pack is never replaced; a collection only over a collection" not_replaced
replaced() { # over a live collection: swapped whole; refused while a writer holds its lock
	cp -r "$T/coll" "$T/live" && "$BFI" append -q "$T/c2" --tsv "$T/b.tsv" &&
		"$BFI" pack -q -o "$T/c2.pack" "$T/c2" && "$BFI" query --json "$T/c2" <"$T/q" >"$T/want" &&
		"$BFI" unpack -q -o "$T/live" "$T/c2.pack" && same "$T/c2" "$T/live" &&
		"$BFI" query --json "$T/live" <"$T/q" >"$T/got" && cmp "$T/want" "$T/got" &&
		! ls -a "$T" | grep -q 'tmp-' || return 1
	flock "$T/live/LOCK" sleep 2 &
	sleep 0.5
	! "$BFI" unpack -q -o "$T/live" "$T/coll.pack" 2>"$T/e"
	st=$?
	wait
	[ "$st" -eq 0 ] && grep -q "holds the collection's lock" "$T/e" && same "$T/c2" "$T/live" &&
		! ls -a "$T" | grep -q 'tmp-'
}
check "a collection unpacked over a collection replaces it whole, unless a writer holds it" replaced
in_place() {
	"$BFI" query "$T/snap" <"$T/q" >"$T/s1" && "$BFI" query "$T/snap.pack" <"$T/q" >"$T/s2" &&
		cmp "$T/s1" "$T/s2" && "$BFI" query "$T/coll.pack" <"$T/q" >"$T/a3" && cmp "$T/a1" "$T/a3" &&
		"$BFI" verify "$T/snap.pack" | grep -q ": ok" && "$BFI" verify -q "$T/coll.pack" &&
		"$BFI" inspect "$T/coll.pack" | grep -q "collection   generation 2, 2 segments" &&
		{ "$BFI" verify "$T/bad.pack" >"$T/v"; [ $? -eq 1 ]; } && grep -q "CORRUPT: pack at byte" "$T/v"
}
check "query, inspect and verify read a pack in place; verify finds a damaged frame" in_place
usage() {
	"$BFI" pack --help | grep -q "^Usage: bfi pack" && "$BFI" unpack --help | grep -q "^Usage: bfi unpack" &&
		{ "$BFI" pack --levle 3 -o x y 2>"$T/e"; [ $? -eq 2 ]; } && [ "$(wc -l <"$T/e")" -le 3 ] &&
		grep -q "bfi pack --help" "$T/e"
}
check "--help, and a mistyped option's short word" usage
[ "$fails" -eq 0 ]
