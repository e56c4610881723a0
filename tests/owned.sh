#!/bin/sh
# owned.sh - bfi writes only what is its own: every file it writes by name
# is made new beside its target and never through a name someone planted;
# a published snapshot never carries a marker a sweep would honour; two
# writers of one filter file never lose each other's keys; a collection is
# never started in a directory of the user's. Each case failed before its
# fix (../shared/reviews/hostile-2026-11-27.md, H1, H2, M8, M9, L4-L8, L10).
# Usage: sh tests/owned.sh ./bfi    (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
DATA=$(pwd)/tests/data/demo
SHIM=$(pwd)/build/tests/faults/shim.so
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-owned.XXXXXX")
trap 'rm -rf "$T"' EXIT
SUITE=owned
. tests/lib/check.sh
# the shim is preloaded into a sanitized bfi too
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0"
said() { grep -q -- "$1" "$T/err" || { echo "  stderr lacks '$1':"; cat "$T/err"; return 1; }; }

"$BFI" build -q -o "$T/snap" "$DATA" || exit 1
printf 'lmdb\nzstd\ngzip\n' >"$T/q"

# --- H1: inspect --html writes nothing through a planted name ---
# A link planted where the old temporary name was (FILE.tmp-PID): the
# victim keeps its bytes, the page is a regular file of its own.
planted_ok() {
	echo "precious data" >"$T/victim.txt"
	sh -c 'ln -s "$1/victim.txt" "$1/page.html.tmp-$$" && exec "$2" inspect --html "$1/page.html" "$3"' \
		sh "$T" "$BFI" "$T/snap" || return 1
	grep -qx "precious data" "$T/victim.txt" || { echo "  the victim was overwritten"; return 1; }
	[ -f "$T/page.html" ] && [ ! -L "$T/page.html" ] || { echo "  page.html is not a regular file"; return 1; }
	grep -q '<!DOCTYPE html>' "$T/page.html"
}
check "inspect --html: a link planted at FILE.tmp-PID leaves its victim alone" planted_ok

# What is at FILE and is not a page of the user's is refused, and kept.
not_replaced() {
	mkfifo "$T/fifo" && ln -s "$T/victim.txt" "$T/link.html" && cp -r "$T/snap" "$T/h.snap" || return 1
	for target in "$T/fifo" "$T/link.html" "$T/h.snap/index.bfi" "$T/h.snap/catalog.mdb"; do
		if "$BFI" inspect --html "$target" "$T/snap" 2>"$T/err"; then
			echo "  --html $target was accepted"
			return 1
		fi
	done
	[ -p "$T/fifo" ] && [ -L "$T/link.html" ] && grep -qx "precious data" "$T/victim.txt" &&
		"$BFI" verify "$T/h.snap" >/dev/null || return 1
	if [ "$(id -u)" = 0 ]; then # a device node: rename would have replaced it
		mknod "$T/null" c 1 3 || return 1
		! "$BFI" inspect --html "$T/null" "$T/snap" 2>"$T/err" && [ -c "$T/null" ] &&
			said "not a regular file" || return 1
	fi
	"$BFI" inspect --html - "$T/snap" | grep -q '<!DOCTYPE html>'
}
check "inspect --html refuses a FIFO, a link, a device and a snapshot's files; '-' is stdout" not_replaced

# synth replaces its files the same way: a link in their place is refused
synth_ok() {
	mkdir "$T/syn" && ln -s "$T/victim.txt" "$T/syn/sets.tsv" || return 1
	! "$BFI" synth -o "$T/syn" -n 10 2>"$T/err" && said "symbolic link" &&
		grep -qx "precious data" "$T/victim.txt" && [ -L "$T/syn/sets.tsv" ]
}
check "synth: a link where one of its files goes is refused, its target kept" synth_ok

# --- L5: bench --results: errors said once, write errors seen ---
bench_ok() {
	! "$BFI" bench --results /dev/full --repeat 1 "$T/snap" "$T/q" >/dev/null 2>"$T/err" || return 1
	mkdir "$T/resdir"
	! "$BFI" bench --results "$T/resdir" --repeat 1 "$T/snap" "$T/q" >/dev/null 2>"$T/err" || return 1
	[ "$(grep -c . "$T/err")" -eq 1 ] || { echo "  more than one line:"; cat "$T/err"; return 1; }
	"$BFI" bench --results "$T/results.md" --repeat 1 "$T/snap" "$T/q" >/dev/null &&
		grep -q '^| date |' "$T/results.md"
}
check "bench --results: /dev/full and a directory fail with one message; a file is appended to" bench_ok

# --- H2: a build killed the moment it published leaves no honoured marker ---
# The shim kills the build right after its rename into place, before the
# marker is removed: a copy of the published snapshot under a staging-like
# name is then not the directory its marker names, and the next build
# leaves it alone; the staging directory the killed build left is swept.
killed_publish_ok() {
	for how in new replace; do
		rm -rf "$T/pub" "$T"/pub.tmp-*
		[ $how = replace ] && { "$BFI" build -q -o "$T/pub" "$DATA" || return 1; }
		BFI_KILL_AFTER_PUBLISH=1 LD_PRELOAD="$SHIM" "$BFI" build -q -o "$T/pub" "$DATA" 2>/dev/null
		[ $? -eq 137 ] || { echo "  the shim did not kill the build ($how)"; return 1; }
		"$BFI" verify "$T/pub" >/dev/null || return 1
		cp -r "$T/pub" "$T/pub.tmp-20261127-backup" || return 1
		"$BFI" build -q -o "$T/pub" "$DATA" || return 1
		[ -f "$T/pub.tmp-20261127-backup/index.bfi" ] ||
			{ echo "  the next build deleted the backup ($how)"; return 1; }
		left=$(ls -d "$T"/pub.tmp-* | grep -vc backup)
		[ "$left" -eq 0 ] || { echo "  $left staging directories left ($how)"; ls -a "$T"; return 1; }
	done
}
check "a build killed just after publishing: a backup copy survives the next build" killed_publish_ok

# --- M8: concurrent filter adds lose no key ---
filter_adds_ok() {
	"$BFI" filter create -o "$T/la.bff" --expected-keys 100000 /dev/null || return 1
	i=1
	while [ $i -le 40 ]; do echo "ka_$i" >"$T/fa$i"; echo "kb_$i" >"$T/fb$i"; i=$((i + 1)); done
	# without --wait: an add refused as busy says so; every add that returned 0 holds its key
	(i=1; while [ $i -le 40 ]; do "$BFI" filter add "$T/la.bff" "$T/fa$i" 2>>"$T/busy" && echo "ka_$i"; i=$((i + 1)); done) >"$T/oka" &
	(i=1; while [ $i -le 40 ]; do "$BFI" filter add "$T/la.bff" "$T/fb$i" 2>>"$T/busy" && echo "kb_$i"; i=$((i + 1)); done) >"$T/okb"
	wait
	lost=$(cat "$T/oka" "$T/okb" | "$BFI" filter query --unknown "$T/la.bff" | wc -l)
	[ "$lost" -eq 0 ] || { echo "  $lost keys of successful adds are missing"; return 1; }
	! grep -v "another bfi filter add holds it" "$T/busy" | grep -q . || { cat "$T/busy"; return 1; }
	# with --wait: every add goes in
	"$BFI" filter create -o "$T/lw.bff" --expected-keys 100000 /dev/null || return 1
	(i=1; while [ $i -le 40 ]; do "$BFI" filter add --wait "$T/lw.bff" "$T/fa$i" || echo FAIL; i=$((i + 1)); done) >"$T/fails" &
	(i=1; while [ $i -le 40 ]; do "$BFI" filter add --wait "$T/lw.bff" "$T/fb$i" || echo FAIL; i=$((i + 1)); done) >>"$T/fails"
	wait
	[ ! -s "$T/fails" ] || return 1
	lost=$(cat "$T"/fa* "$T"/fb* | "$BFI" filter query --unknown "$T/lw.bff" | wc -l)
	[ "$lost" -eq 0 ] || { echo "  --wait: $lost of 80 keys missing"; return 1; }
	ls "$T" | grep -q 'bff\.tmp' && { echo "  temporary files left"; return 1; }
	return 0
}
check "two writers of one filter: no add that returned 0 loses its key; --wait takes all 80" filter_adds_ok

# --- L4: a filter reached through a link is updated where it points ---
filter_link_ok() {
	printf 'k1\n' >"$T/k1" && printf 'k2\n' >"$T/k2" &&
		"$BFI" filter create -o "$T/f1.bff" --expected-keys 100 "$T/k1" && ln -s f1.bff "$T/l2.bff" &&
		"$BFI" filter add "$T/l2.bff" "$T/k2" || return 1
	[ -L "$T/l2.bff" ] || { echo "  the link was replaced by a file"; return 1; }
	"$BFI" filter query "$T/f1.bff" k1 k2 | grep -c maybe | grep -qx 2 || { echo "  the target lacks k2"; return 1; }
	! "$BFI" filter create -o "$T/l2.bff" --expected-keys 100 "$T/k1" 2>"$T/err" && said "symbolic link"
}
check "filter add through a link updates its target; create -o a link says it is a link" filter_link_ok

# What a killed add left beside the filter is removed by the next; a
# user's file of a like name that is not a filter's beginning stays.
filter_temps_ok() {
	head -c 30 "$T/f1.bff" >"$T/f1.bff.tmpAbCdEf" && : >"$T/f1.bff.tmpEmpty1" &&
		echo "my notes" >"$T/f1.bff.tmpNotes1" || return 1
	"$BFI" filter add "$T/f1.bff" "$T/k1" || return 1
	[ ! -e "$T/f1.bff.tmpAbCdEf" ] && [ ! -e "$T/f1.bff.tmpEmpty1" ] && grep -qx "my notes" "$T/f1.bff.tmpNotes1"
}
check "filter add sweeps the temporary files killed adds left, and nothing else" filter_temps_ok

# --- M9: append starts a collection only in a new or empty directory ---
adopt_ok() {
	printf 'a\tx\n' >"$T/c1.tsv"
	mkdir -p "$T/userdir/seg-0000000000000009-0000" && echo important >"$T/userdir/notes.txt" &&
		echo x >"$T/userdir/MANIFEST.tmp-1" && echo mine >"$T/userdir/seg-0000000000000009-0000/index.bfi" || return 1
	! "$BFI" append "$T/userdir" --tsv "$T/c1.tsv" 2>"$T/err" && said "not a collection" || return 1
	[ "$(ls "$T/userdir" | tr '\n' ' ')" = "MANIFEST.tmp-1 notes.txt seg-0000000000000009-0000 " ] ||
		{ echo "  userdir changed:"; ls "$T/userdir"; return 1; }
	# an input that is the collection itself: its LOCK would become a set
	cp -r "$DATA" "$T/inp" && ! "$BFI" append "$T/inp" "$T/inp" 2>"$T/err" && said "is the collection" &&
		[ ! -e "$T/inp/LOCK" ] || return 1
	"$BFI" append -q "$T/coll" --tsv "$T/c1.tsv" && ! "$BFI" append "$T/coll" "$T/coll" 2>"$T/err" &&
		said "is the collection" || return 1
	# an empty directory, and one a killed first append left (its lock alone), are fine
	mkdir "$T/empty" "$T/left" && : >"$T/left/LOCK" &&
		"$BFI" append -q "$T/empty" --tsv "$T/c1.tsv" && "$BFI" append -q "$T/left" --tsv "$T/c1.tsv"
}
check "append refuses a user's directory and an input that is the collection; empty ones are fine" adopt_ok

# --- L8: a collection's LOCK is never written through a hard link ---
lock_link_ok() {
	echo "victim" >"$T/victim2" && mkdir "$T/hl" && ln "$T/victim2" "$T/hl/LOCK" || return 1
	! "$BFI" append "$T/hl" --tsv "$T/c1.tsv" 2>"$T/err" && said "hard links" && grep -qx victim "$T/victim2"
}
check "a LOCK that is a hard link to another file is refused, the file kept" lock_link_ok

# --- L6, L10: messages name the problem, and never drive the terminal ---
messages_ok() {
	printf 'a\tx\nb\ty\n' >"$T/ab.tsv" && "$BFI" append -q "$T/c2" --tsv "$T/ab.tsv" || return 1
	! "$BFI" remove "$T/c2" a a 2>"$T/err" && said "a is named twice" || return 1
	esc=$(printf 'x\033[31mred')
	! "$BFI" remove "$T/c2" "$esc" 2>"$T/err" && said 'x\\x1b\[31mred' || return 1
	! grep -q "$(printf '\033')" "$T/err" || { echo "  ESC reached stderr"; return 1; }
	printf 'cr\r\tx\n' >"$T/cr.tsv"
	! "$BFI" build -q -o "$T/cr.snap" --tsv "$T/cr.tsv" 2>"$T/err" && said "'cr\\\\x0d'" || return 1
	# a query's error shows a line of it, not the megabytes it may be
	awk 'BEGIN { for (i = 0; i < 70000; i++) printf "w%d ", i; print "" }' >"$T/many"
	"$BFI" build -q -o "$T/tx.snap" --input text "$DATA" || return 1
	! "$BFI" query --text --threshold 0.5 "$T/tx.snap" <"$T/many" 2>"$T/err" && said "more than 65,536 terms" &&
		[ "$(wc -c <"$T/err")" -lt 400 ] || { echo "  the message is $(wc -c <"$T/err") bytes"; return 1; }
}
check "remove a a: 'named twice'; control bytes escaped in messages; a long query not echoed" messages_ok

# --- L11: old residuals ---
residuals_ok() {
	! "$BFI" query --layout rambo "$T/snap" lmdb 2>"$T/err" && said "has no rambo layout (it holds flat)" || return 1
	for r in 0/99999999999 1/1 a/2 0/ /2 0/2x -1/2; do
		! "$BFI" build -q -o "$T/r.snap" --layout rambo --route "$r" "$DATA" 2>"$T/err" &&
			said "route takes I/S" || { echo "  --route $r"; return 1; }
	done
	"$BFI" build -q -o "$T/r.snap" --layout rambo --shards 2 --cells 4 --route 1/2 "$DATA"
}
check "query --layout names what the snapshot lacks; --route is range-checked" residuals_ok

echo "owned: $fails failed"
[ "$fails" -eq 0 ]
