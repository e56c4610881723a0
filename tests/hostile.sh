#!/bin/sh
# hostile.sh - what an adversarial review of the bfi command found, each a
# case that failed before the fix: files changed under readers, staging
# directories that were not bfi's, hostile bytes in JSON, FIFOs, full
# disks, contradictory options and misleading messages.
# Usage: sh tests/hostile.sh ./bfi    (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
DATA=$(pwd)/tests/data/demo
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-hostile.XXXXXX")
cleanup() {
	[ -n "${MOUNTED:-}" ] && umount "$T/small" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
SUITE=hostile
. tests/lib/check.sh
status_is() { # status_is WANT COMMAND...: the exit status, stdout in $T/out, stderr in $T/err
	want=$1
	shift
	"$@" >"$T/out" 2>"$T/err"
	got=$?
	[ "$got" -eq "$want" ] || { echo "  exit status $got, want $want: $*"; cat "$T/err"; return 1; }
}
said() { grep -q -- "$1" "$T/err" || { echo "  stderr lacks '$1':"; cat "$T/err"; return 1; }; }

"$BFI" build -q -o "$T/snap" "$DATA" || exit 1
cat "$DATA"/* | sort -u >"$T/words"

# --- 1. the stale-staging sweep removes only what bfi staged ---
sweep_ok() {
	mkdir "$T/wsnap.tmp-20240101-backup" && echo mine >"$T/wsnap.tmp-20240101-backup/index.bfi" &&
	"$BFI" build -q -o "$T/victim" "$DATA" &&
	ln -s "$T/victim" "$T/out.snap.tmp-4000000-x" &&
	"$BFI" build -q -o "$T/wsnap" "$DATA" && "$BFI" build -q -o "$T/out.snap" "$DATA" &&
	grep -qx mine "$T/wsnap.tmp-20240101-backup/index.bfi" &&
	test -f "$T/victim/index.bfi" -a -f "$T/victim/catalog.mdb" &&
	"$BFI" verify "$T/victim" >/dev/null
}
check "a user's PATH.tmp-* backup and a symlinked victim survive builds at PATH" sweep_ok

# A build killed as it began leaves mkdtemp's 0700 directory empty, or with
# part of its marker; one killed as it ended, an empty directory of its
# final mode: the next build removes all three. A directory with anything
# else in it stays, whatever its mode, and so does an empty one whose name
# mkdtemp did not make.
start_ok() {
	mkdir -m 0700 "$T/ssnap.tmp-aaaaaa" "$T/ssnap.tmp-bbbbbb" "$T/ssnap.tmp-dddddd" &&
		: >"$T/ssnap.tmp-bbbbbb/.bfi-staging" && chmod 0700 "$T/ssnap.tmp-bbbbbb" &&
		mkdir -m 0755 "$T/ssnap.tmp-cccccc" "$T/ssnap.tmp-eeeeee" "$T/ssnap.tmp-mine" &&
		: >"$T/ssnap.tmp-dddddd/notes" && : >"$T/ssnap.tmp-eeeeee/notes" &&
		"$BFI" build -q -o "$T/ssnap" "$DATA" || return 1
	[ ! -e "$T/ssnap.tmp-aaaaaa" ] && [ ! -e "$T/ssnap.tmp-bbbbbb" ] && [ ! -e "$T/ssnap.tmp-cccccc" ] &&
		[ -f "$T/ssnap.tmp-dddddd/notes" ] && [ -f "$T/ssnap.tmp-eeeeee/notes" ] &&
		[ -d "$T/ssnap.tmp-mine" ]
}
check "the empty or half-marked directories of builds killed as they began or ended are swept" start_ok

# A build stopped while it stages holds its lock; a build at the same path
# from another pid namespace, where its pid means nothing, leaves it alone.
live_build_ok() {
	awk 'BEGIN { for (s = 0; s < 300; s++) for (i = 0; i < 700; i++) printf "s%d\tk%d-%d\n", s, s, i }' \
		>"$T/big.tsv"
	"$BFI" build -q -o "$T/live" "$DATA" || return 1
	"$BFI" build -q -o "$T/live" --tsv "$T/big.tsv" 2>"$T/a.err" &
	a=$!
	n=0
	while ! ls -d "$T"/live.tmp-* >/dev/null 2>&1; do
		n=$((n + 1))
		[ "$n" -lt 2000000 ] || { echo "  the first build never staged"; return 1; }
	done
	kill -STOP "$a"
	if unshare --pid --fork true 2>/dev/null; then
		how="another pid namespace"
		unshare --pid --fork "$BFI" build -q -o "$T/live" "$DATA" || { kill -CONT "$a"; return 1; }
	else
		how="this pid namespace (unshare is not allowed here)"
		"$BFI" build -q -o "$T/live" "$DATA" || { kill -CONT "$a"; return 1; }
	fi
	kill -CONT "$a"
	wait "$a" || { echo "  the stopped build failed after a build from $how:"; cat "$T/a.err"; return 1; }
	echo "  second build from $how"
	"$BFI" query "$T/live" k3-5 | grep -q '^k3-5	s3' && "$BFI" verify "$T/live" >/dev/null
}
check "a live build's staging directory survives a build from another pid namespace" live_build_ok

# --- 2. snapshot files changed under a reader ---
check "published files are read-only (0444)" sh -c "
	test \$(stat -c %a '$T/snap/index.bfi') = 444 && test \$(stat -c %a '$T/snap/catalog.mdb') = 444"

# a long run truncated part-way: a clear error, and every answer written is whole and right
truncated_ok() {
	awk 'BEGIN { for (i = 0; i < 600000; i++) print "w" i % 5000 }' >"$T/many"
	cat "$DATA"/* | sort -u | head -300 >>"$T/many"
	"$BFI" build -q -o "$T/tr" "$DATA" && "$BFI" query "$T/tr" <"$T/many" >"$T/ref" || return 1
	caught=0
	for delay in 0.05 0.15 0.3 0.5; do
		rm -rf "$T/tr" && "$BFI" build -q -o "$T/tr" "$DATA" || return 1
		"$BFI" query "$T/tr" <"$T/many" >"$T/got" 2>"$T/err" &
		q=$!
		sleep "$delay"
		chmod u+w "$T/tr/index.bfi" # read-only as published: the operator insists
		truncate -s 0 "$T/tr/index.bfi"
		wait "$q"
		st=$?
		if [ "$st" -eq 0 ] && cmp -s "$T/got" "$T/ref"; then
			continue # it finished first: nothing to see at this delay
		fi
		[ "$st" -eq 2 ] || { echo "  exit $st after truncation"; cat "$T/err"; return 1; }
		if grep -q 'file is truncated' "$T/err" && [ ! -s "$T/got" ]; then
			continue # truncated before it opened the snapshot: refused at open
		fi
		grep -q 'index.bfi changed or shrank under this reader\|changed in place' "$T/err" ||
			{ echo "  message:"; cat "$T/err"; return 1; }
		n=$(wc -l <"$T/got")
		head -n "$n" "$T/ref" | cmp -s - "$T/got" || { echo "  a written answer is cut or wrong"; return 1; }
		echo "  truncated after ${delay}s: $n answers written whole, then: $(head -c 120 "$T/err")"
		caught=$((caught + 1))
	done
	[ "$caught" -gt 0 ] || echo "  every run finished before its truncation"
	[ "$caught" -gt 0 ]
}
check "index.bfi truncated under a running query: exit 2, a message, whole answers" truncated_ok

# The operator's classic mistake: cp another snapshot's index over a live one,
# under a reader waiting on a pipe. The next query is an error, not an answer.
cp_over_ok() {
	"$BFI" build -q -o "$T/cp" "$DATA" && "$BFI" build -q -o "$T/new" --fpr 0.001 "$DATA" || return 1
	mkfifo "$T/in"
	"$BFI" query "$T/cp" <"$T/in" >"$T/cp.out" 2>"$T/cp.err" &
	q=$!
	exec 3>"$T/in"
	echo lmdb >&3
	n=0
	until [ -s "$T/cp.out" ]; do
		sleep 0.05
		n=$((n + 1))
		[ "$n" -lt 200 ] || { echo "  no answer while stdin stays open (not flushed per line)"; return 1; }
	done
	chmod u+w "$T/cp/index.bfi" # read-only as published: the operator insists
	cp "$T/new/index.bfi" "$T/cp/index.bfi"
	echo zstd >&3
	exec 3>&-
	wait "$q"
	st=$?
	[ "$st" -eq 2 ] && grep -qx 'lmdb	liblmdb0	lmdb-utils' "$T/cp.out" &&
		[ "$(wc -l <"$T/cp.out")" -eq 1 ] && grep -q 'changed in place' "$T/cp.err" ||
		{ echo "  exit $st; out:"; cat "$T/cp.out"; cat "$T/cp.err"; return 1; }
}
check "cp over a live index: the waiting reader's next query is an error" cp_over_ok
check "verify catches an index overwritten in place with the same size" sh -c "
	'$BFI' build -q -o '$T/ow' '$DATA' && chmod 644 '$T/ow/index.bfi' &&
	printf 'X' | dd of='$T/ow/index.bfi' bs=1 seek=9000 conv=notrunc 2>/dev/null;
	'$BFI' verify '$T/ow' >'$T/v'; test \$? -eq 1 && grep -q CORRUPT '$T/v'"

# --- 3. FIFOs in place of a snapshot's files ---
fifo_ok() {
	for f in index.bfi catalog.mdb; do
		rm -rf "$T/ff" && "$BFI" build -q -o "$T/ff" "$DATA" && rm -f "$T/ff/$f" && mkfifo "$T/ff/$f" || return 1
		for cmd in "query $T/ff lmdb" "inspect $T/ff" "verify $T/ff"; do
			# shellcheck disable=SC2086
			timeout 20 "$BFI" $cmd >"$T/out" 2>"$T/err"
			st=$?
			[ "$st" -eq 1 ] || [ "$st" -eq 2 ] || { echo "  $f FIFO, $cmd: exit $st"; return 1; }
			grep -q 'not a regular file' "$T/err" "$T/out" || { echo "  $f FIFO, $cmd:"; cat "$T/err"; return 1; }
		done
	done
}
check "a FIFO as index.bfi or catalog.mdb: query, inspect, verify refuse at once" fifo_ok
check "a directory as index.bfi is 'not a regular file', not 'Invalid argument'" sh -c "
	rm -rf '$T/dd' && '$BFI' build -q -o '$T/dd' '$DATA' && rm '$T/dd/index.bfi' && mkdir '$T/dd/index.bfi' &&
	! '$BFI' query '$T/dd' x 2>'$T/err' && grep -q 'not a regular file' '$T/err'"

# --- 4. doubles range-checked ---
check "build --expected-keys 2^62 is refused, not a 64-bit filter" sh -c "
	! '$BFI' build -q -o '$T/ek' --expected-keys 4611686018427387904 '$DATA' 2>'$T/err' &&
	! test -e '$T/ek' && grep -q 'expected-keys' '$T/err'"
check "filter create --expected-keys 2^62 is refused" sh -c "
	! '$BFI' filter create -o '$T/ek.bff' --expected-keys 4611686018427387904 '$DATA/zstd' 2>'$T/err' &&
	! test -e '$T/ek.bff' && grep -q '2^40' '$T/err'"
check "build --expected-keys 2^40: its filters would pass 2^40 bits, refused before reading" \
	status_is 2 "$BFI" build -q -o "$T/ek" --expected-keys 1099511627776 "$DATA"

# --- 5. JSON of bytes that are not UTF-8 ---
json_ok() {
	mkdir -p "$T/bad" &&
	printf 'zzkey\n' >"$T/bad/$(printf 'bad\377name')" &&
	printf 'zzkey\n' >"$T/bad/$(printf 'over\300\257long')" &&
	printf 'zzkey\n' >"$T/bad/$(printf 'sur\355\240\200rogate')" &&
	printf 'zzkey\n' >"$T/bad/$(printf 'caf\303\251-\342\202\254')" &&
	"$BFI" build -q -o "$T/badsnap" "$T/bad" &&
	printf 'zzkey\nq\377\001"\\\n' | "$BFI" query --json "$T/badsnap" >"$T/j" &&
	"$BFI" inspect --json "$T/badsnap" >"$T/ij" &&
	python3 - "$T/j" "$T/ij" "$T/bad" <<'PY'
import json, os, sys
lines = open(sys.argv[1], 'rb').read().decode('ascii', 'strict' if False else 'surrogateescape').splitlines()
got = [json.loads(l) for l in lines]
names = sorted(n.encode('utf-8', 'surrogateescape') for n in got[0]['matches'])
want = sorted(os.listdir(os.fsencode(sys.argv[3])))
assert names == want, (names, want)
assert got[1]['query'].encode('utf-8', 'surrogateescape') == b'q\xff\x01"\\', got[1]['query']
json.loads(open(sys.argv[2], 'rb').read())
PY
}
check "--json escapes bytes that are not UTF-8 as \\udcXX: json.loads reads them, names come back" json_ok
check "filter info --json of a path with a quote and bad bytes is JSON" sh -c "
	printf 'a\\n' | '$BFI' filter create -o \"\$(printf '$T/f\"\\377.bff')\" --bits 64 --hashes 2 &&
	'$BFI' filter info --json \"\$(printf '$T/f\"\\377.bff')\" | python3 -c 'import json,sys; json.loads(sys.stdin.buffer.read())'"

# --- 6. filter create -o over what is not a filter ---
check "filter create -o over a file that is not a filter: refused, the file kept" sh -c "
	echo precious >'$T/notes.txt' &&
	! '$BFI' filter create -o '$T/notes.txt' --expected-keys 10 '$DATA/zstd' 2>'$T/err' &&
	grep -qx precious '$T/notes.txt' && grep -q 'not a filter' '$T/err'"
check "filter create -o its own keys file: refused" sh -c "
	cp '$DATA/zstd' '$T/keys' && ! '$BFI' filter create -o '$T/keys' --expected-keys 10 '$T/keys' 2>'$T/err' &&
	cmp '$T/keys' '$DATA/zstd'"
check "filter create -o an existing filter replaces it" sh -c "
	'$BFI' filter create -o '$T/ok.bff' --expected-keys 10 '$DATA/zstd' &&
	'$BFI' filter create -o '$T/ok.bff' --expected-keys 20 '$DATA/nano' &&
	'$BFI' filter info '$T/ok.bff' | grep -q 'keys added'"

# --- 8. the key rules are recorded and used ---
keyrules_ok() {
	printf '>g1\nACGTTGCAAGGCTTAACGTTAGC\n' >"$T/g1.fa" && printf '>g2\nTTTTGGGGCCCCAAAATTTTGG\n' >"$T/g2.fa" &&
	"$BFI" build -q -o "$T/gen" --input fasta --kmer 7 "$T/g1.fa" "$T/g2.fa" &&
	"$BFI" inspect "$T/gen" | grep -q '^keys  *canonical 7-mers' &&
	"$BFI" inspect --json "$T/gen" | grep -q '"keys": {"input": "fasta", "kmer": 7}' &&
	printf '>read\nGCAAGGCTTAACG\n' >"$T/r.fa" &&
	"$BFI" query --fasta "$T/r.fa" "$T/gen" | grep -q '^read	g1	7$' &&
	"$BFI" query "$T/gen" GCAAGGCTTAACG | grep -q '	g1	7$' &&
	! "$BFI" query --kmer 5 "$T/gen" GCAAGGCTTAACG 2>"$T/err" && grep -q 'its keys are 7-mers, so 5-mers would match nothing' "$T/err" &&
	! "$BFI" query --text "$T/gen" acgt 2>"$T/err" && grep -q 'fasta input, so text queries would match nothing' "$T/err" &&
	"$BFI" query --keys "$T/gen" GCAAGGCTTAACG | grep -qx 'GCAAGGCTTAACG'
}
check "k-mer length and input kind recorded: query needs no --kmer and refuses a wrong one" keyrules_ok
check "a text snapshot splits queries as its documents were, by default" sh -c "
	'$BFI' build -q -o '$T/txt' --input text '$DATA' &&
	'$BFI' query '$T/txt' 'Lightning-Memory MAPPED' | grep -q 'liblmdb0' &&
	'$BFI' inspect '$T/txt' | grep -q '^keys  *text terms'"

# --- 9. standard output that cannot be written ---
full_ok() {
	"$BFI" filter create -o "$T/full.bff" --expected-keys 10 "$DATA/zstd" || return 1
	for cmd in "inspect $T/snap" "verify $T/snap" "filter info $T/full.bff" "query $T/snap lmdb" \
		"filter query $T/full.bff zstd" "bench --repeat 1 $T/snap $T/words" "--help" "query --help"; do
		# shellcheck disable=SC2086
		"$BFI" $cmd >/dev/full 2>"$T/err"
		st=$?
		[ "$st" -eq 2 ] && grep -q 'standard output: No space left on device' "$T/err" ||
			{ echo "  bfi $cmd into /dev/full: exit $st"; cat "$T/err"; return 1; }
	done
}
check "every command into /dev/full: exit 2, 'standard output: No space left on device'" full_ok

# --- 11. two first builds racing to one new path ---
race_ok() {
	i=0
	while [ "$i" -lt 10 ]; do
		"$BFI" build -q -o "$T/race$i" "$DATA" 2>"$T/r1" &
		a=$!
		"$BFI" build -q -o "$T/race$i" "$DATA" 2>"$T/r2" || { cat "$T/r2"; return 1; }
		wait "$a" || { cat "$T/r1"; return 1; }
		"$BFI" verify "$T/race$i" >/dev/null || return 1
		i=$((i + 1))
	done
	[ -z "$(ls -d "$T"/race*.tmp-* 2>/dev/null)" ]
}
check "two first builds to one new path both succeed, 10 times" race_ok
# The same race made certain: the first build finds the path free, then
# waits in rename (the fault shim) while the second publishes there.
race_window_ok() {
	shim=$(pwd)/build/tests/faults/shim.so
	[ -f "$shim" ] || { echo "  no $shim"; return 1; }
	# under ASan the shim is preloaded before its runtime: tell ASan that is fine
	ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0" \
		BFI_RENAME_DELAY_MS=3000 LD_PRELOAD="$shim" "$BFI" build -q -o "$T/win" "$DATA" 2>"$T/w1" &
	a=$!
	n=0
	until ls "$T"/win.tmp-*/catalog.mdb >/dev/null 2>&1; do
		n=$((n + 1))
		kill -0 "$a" 2>/dev/null && [ "$n" -lt 100000 ] || { echo "  the first build never staged:"; cat "$T/w1"; return 1; }
	done
	sleep 0.5 # its lstat has found nothing; it sleeps before rename
	"$BFI" build -q -o "$T/win" "$DATA" 2>"$T/w2" || { cat "$T/w2"; return 1; }
	wait "$a" || { echo "  the first build failed:"; cat "$T/w1"; return 1; }
	"$BFI" verify "$T/win" >/dev/null && [ -z "$(ls -d "$T"/win.tmp-* 2>/dev/null)" ]
}
check "a build that finds its new path taken at rename goes the exchange way" race_window_ok

# A build that has made its marker but not yet locked it (the shim's
# delayed flock) looks, to another build's sweep, like one killed as it
# began: its empty marker and 0700 directory are removed. It must see that
# once it holds the lock, and stage in a new directory.
unlocked_mark_ok() {
	shim=$(pwd)/build/tests/faults/shim.so
	ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0" \
		BFI_FLOCK_DELAY_MS=1500 LD_PRELOAD="$shim" "$BFI" build -q -o "$T/mark" "$DATA" 2>"$T/m1" &
	a=$!
	n=0
	until ls "$T"/mark.tmp-*/.bfi-staging >/dev/null 2>&1; do
		n=$((n + 1))
		kill -0 "$a" 2>/dev/null && [ "$n" -lt 100000 ] || { echo "  the first build never marked:"; cat "$T/m1"; return 1; }
	done
	first=$(ls -d "$T"/mark.tmp-*)
	"$BFI" build -q -o "$T/mark" "$DATA" 2>"$T/m2" || { cat "$T/m2"; return 1; }
	[ ! -e "$first" ] || { echo "  the unlocked marker's directory was not swept: the window was not hit"; return 1; }
	wait "$a" || { echo "  the build whose directory was swept failed:"; cat "$T/m1"; return 1; }
	"$BFI" verify "$T/mark" >/dev/null && [ -z "$(ls -d "$T"/mark.tmp-* 2>/dev/null)" ]
}
check "a build whose unlocked marker is swept stages again, and publishes" unlocked_mark_ok

# --- 12. a snapshot holding the user's files ---
# A file that appears in the snapshot while a build replaces it: after the
# check, before the exchange (the shim's delayed rename). It is kept, with
# the old snapshot, and the build says where.
appears_ok() {
	"$BFI" build -q -o "$T/keep" "$DATA" || return 1
	ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0" \
		BFI_RENAME_DELAY_MS=2000 LD_PRELOAD="$(pwd)/build/tests/faults/shim.so" \
		"$BFI" build -q -o "$T/keep" --fpr 0.001 "$DATA" 2>"$T/k1" &
	a=$!
	n=0
	until ls "$T"/keep.tmp-*/catalog.mdb >/dev/null 2>&1; do
		n=$((n + 1))
		kill -0 "$a" 2>/dev/null && [ "$n" -lt 100000 ] || { echo "  the build never staged"; return 1; }
	done
	sleep 0.5 # past its check; it sleeps before the exchange
	echo notes >"$T/keep/NOTES"
	wait "$a" || { cat "$T/k1"; return 1; }
	grep -q "warning: the old snapshot held 'NOTES'" "$T/k1" || { cat "$T/k1"; return 1; }
	kept=$(sed -n "s/.*in \(.*keep\.tmp-[^ ]*\)$/\1/p" "$T/k1")
	[ -n "$kept" ] && grep -qx notes "$kept/NOTES" && "$BFI" verify "$T/keep" >/dev/null
}
check "a file added to a snapshot while it is replaced is kept, and said" appears_ok
check "a snapshot holding a file bfi did not write is refused before the build" sh -c "
	'$BFI' build -q -o '$T/mine' '$DATA' && echo notes >'$T/mine/NOTES' &&
	! '$BFI' build -q -o '$T/mine' '$DATA' 2>'$T/err' && grep -q \"holds 'NOTES'\" '$T/err' &&
	grep -qx notes '$T/mine/NOTES' && '$BFI' verify '$T/mine' >/dev/null"

# --- 13. messages that say what is wrong ---
check "65 nested parentheses: 'nested more than 64 deep', not 'syntax error'" sh -c "
	! '$BFI' query --expr '$T/snap' \"\$(printf '(%.0s' \$(seq 65))lmdb\$(printf ')%.0s' \$(seq 65))\" 2>'$T/err' &&
	grep -q 'nested more than 64 deep' '$T/err' && test \$(wc -l <'$T/err') -eq 1"
check "a short file that is not a filter: 'not a bfi filter file'" sh -c "
	echo hi >'$T/short' && ! '$BFI' filter info '$T/short' 2>'$T/err' && grep -q 'not a bfi filter file' '$T/err'"
check "--tsv of a directory: 'Is a directory'" sh -c "
	! '$BFI' build -q -o '$T/x' --tsv '$DATA' 2>'$T/err' && grep -q 'Is a directory' '$T/err'"
check "stdin closed: no snapshot file read as queries" sh -c "
	'$BFI' query '$T/snap' <&- >'$T/out' 2>'$T/err'; test \$? -eq 2 && grep -q 'standard input is closed' '$T/err'"
check "--cells not a multiple of --shards: said before reading input" sh -c "
	! '$BFI' build -q -o '$T/x' --layout rambo --cells 10 --shards 4 /nonexistent 2>'$T/err' &&
	grep -q 'not a multiple of --shards' '$T/err'"
check "stack -o naming its own input: refused" sh -c "
	'$BFI' build -q -o '$T/sh0' --layout rambo --cells 4 --route 0/1 '$DATA' &&
	! '$BFI' stack -o '$T/sh0' '$T/sh0' 2>'$T/err' && grep -q 'names the input' '$T/err'"
check "build -o a symlink to a snapshot: says it is a symbolic link" sh -c "
	ln -s '$T/snap' '$T/link' && ! '$BFI' build -q -o '$T/link' '$DATA' 2>'$T/err' &&
	grep -q 'symbolic link' '$T/err'"
check "build -o '' fails at once, before reading input" sh -c "
	! '$BFI' build -q -o '' /nonexistent 2>'$T/err' && grep -q 'cannot name a snapshot' '$T/err'"

# --- 14. clamps are said ---
check "--fpr 1e-300 warns that k is capped at 32" sh -c "
	'$BFI' build -q -o '$T/c1' --fpr 1e-300 '$DATA' 2>'$T/err' && grep -q 'warning: .*at most 32' '$T/err'"
check "--memory 1 warns that it becomes 4 MiB" sh -c "
	'$BFI' build -q -o '$T/c2' --memory 1 '$DATA' 2>'$T/err' && grep -q 'warning: .*4 MiB' '$T/err'"
check "build --help documents skipped dotfiles and the 511-byte name limit" sh -c "
	'$BFI' build --help | grep -q 'starting with' && '$BFI' build --help | grep -q '511 bytes'"

# --- 15. options and outputs that made no sense ---
check "synth -o a snapshot is refused, the snapshot kept" sh -c "
	! '$BFI' synth -o '$T/snap' -n 2 2>'$T/err' && grep -q 'synth does not write' '$T/err' &&
	'$BFI' verify '$T/snap' >/dev/null && ! test -e '$T/snap/sets.tsv'"
enospc_ok() {
	mkdir "$T/small" && mount -t tmpfs -o size=64k tmpfs "$T/small" 2>/dev/null || {
		echo "  (cannot mount a small tmpfs here: checked only that synth leaves no file on /dev/full's kind of failure)"
		return 0
	}
	MOUNTED=1
	! "$BFI" synth -o "$T/small/x" -n 1000 2>"$T/err" && grep -q 'No space left' "$T/err" &&
		[ -z "$(ls -A "$T/small")" ]
}
check "synth on a full disk: an error, and no partial file left" enospc_ok
check "bench --layout for a layout the snapshot lacks: exit 2" sh -c "
	! '$BFI' bench --layout tree '$T/snap' '$T/words' 2>'$T/err' && grep -q 'holds no tree layout' '$T/err'"
check "bench --expr with a syntax error: exit 2, not the corrupt-snapshot 1" sh -c "
	printf 'a AND\\n' >'$T/bad.q'; '$BFI' bench --expr '$T/snap' '$T/bad.q' 2>'$T/err'; test \$? -eq 2"
check "--cluster with --keep-order is refused" status_is 2 "$BFI" build -q -o "$T/x" --cluster --keep-order "$DATA"
check "--route without the rambo layout is refused" status_is 2 "$BFI" build -q -o "$T/x" --route 0/2 "$DATA"
check "--cells 1 is refused" status_is 2 "$BFI" build -q -o "$T/x" --layout rambo --cells 1 "$DATA"

# --- 16. leniency ---
check "a FASTQ quality longer than its sequence is refused" sh -c "
	printf '@r\\nACGTACGT\\n+\\nIIIIIIIIII\\n' >'$T/long.fq' &&
	! '$BFI' build -q -o '$T/x' --input fasta --kmer 5 '$T/long.fq' 2>'$T/err' && grep -q 'longer than its sequence' '$T/err'"
check "gzip with trailing garbage is refused" sh -c "
	mkdir -p '$T/gz' && gzip -c '$DATA/zstd' >'$T/gz/doc.gz' && echo garbage >>'$T/gz/doc.gz' &&
	! '$BFI' build -q -o '$T/x' --input text '$T/gz' 2>'$T/err' && grep -q 'after the end of the gzip data' '$T/err'"
check "a gzip file of two members is read whole, as gzip -d reads it" sh -c "
	mkdir -p '$T/gz2' && { head -20 '$DATA/zstd' | gzip -c; tail -n +21 '$DATA/zstd' | gzip -c; } >'$T/gz2/zstd.gz' &&
	'$BFI' build -q -o '$T/gz2s' '$T/gz2' && '$BFI' query '$T/gz2s' \"\$(tail -1 '$DATA/zstd')\" | grep -q '	zstd' &&
	'$BFI' query '$T/gz2s' \"\$(head -1 '$DATA/zstd')\" | grep -q '	zstd'"
check "a directory of .gz key files is read as gzip, sets named less .gz" sh -c "
	mkdir -p '$T/gzk' && gzip -c '$DATA/zstd' >'$T/gzk/zstd.gz' && cp '$DATA/nano' '$T/gzk/nano' &&
	'$BFI' build -q -o '$T/gzs' '$T/gzk' && '$BFI' query '$T/gzs' zstd | grep -q '	zstd' &&
	'$BFI' query '$T/gzs' \"\$(head -1 '$DATA/zstd')\" | grep -q '	zstd'"
# xz, bzip2 and zstd as gzip: whole, every stream, named less their suffix; cut or trailed, refused
compressed_ok() {
	mkdir -p "$T/cz" && "$BFI" build -q -o "$T/czplain" "$DATA" || return 1
	for c in "xz xz" "bzip2 bz2" "zstd zst"; do
		set -- $c
		rm -rf "$T/cz/$2" "$T/cz/$2s" && mkdir -p "$T/cz/$2" || return 1
		for f in "$DATA"/*; do
			# two streams a file: the first 20 lines, then the rest
			{ head -20 "$f" | $1 -q -c; tail -n +21 "$f" | $1 -q -c; } >"$T/cz/$2/$(basename "$f").$2" || return 1
		done
		"$BFI" build -q -o "$T/cz/$2s" "$T/cz/$2" || { echo "  $1: build failed"; return 1; }
		"$BFI" inspect --sets "$T/czplain" | cut -f2- >"$T/cz/want" &&
			"$BFI" inspect --sets "$T/cz/$2s" | cut -f2- | cmp -s - "$T/cz/want" ||
			{ echo "  $1: the sets differ from the plain files'"; return 1; }
		# cut short, and with bytes after the end: refused, saying which
		f=$(ls "$T/cz/$2" | head -1)
		mkdir -p "$T/cz/$2cut" "$T/cz/$2trail" &&
			head -c "$(($(wc -c <"$T/cz/$2/$f") - 9))" "$T/cz/$2/$f" >"$T/cz/$2cut/$f" &&
			{ cat "$T/cz/$2/$f"; echo garbage; } >"$T/cz/$2trail/$f" || return 1
		! "$BFI" build -q -o "$T/x" "$T/cz/$2cut" 2>"$T/err" && grep -q "$f" "$T/err" ||
			{ echo "  $1 cut short: not refused"; cat "$T/err"; return 1; }
		! "$BFI" build -q -o "$T/x" "$T/cz/$2trail" 2>"$T/err" && grep -q "$f" "$T/err" ||
			{ echo "  $1 with trailing bytes: not refused"; cat "$T/err"; return 1; }
	done
}
check "xz, bzip2 and zstd key files read whole (two streams each), named less their suffix; cut or trailed, refused" compressed_ok
# FASTA genomes and FASTQ queries compressed: the same sets and answers as plain
compressed_fasta_ok() {
	rm -rf "$T/czf" && mkdir -p "$T/czf/plain" "$T/czf/packed" || return 1
	printf '>a\nACGTACGTTAGCATCGATCGATCGGATCGATTAGCCATG\n' >"$T/czf/plain/ga.fa" &&
		printf '>b\nTTTTGGGGCCCCAAAATTTTGCGCGCATATATCGGCAT\n' >"$T/czf/plain/gb.fa" &&
		xz -c "$T/czf/plain/ga.fa" >"$T/czf/packed/ga.fa.xz" &&
		zstd -q -c "$T/czf/plain/gb.fa" >"$T/czf/packed/gb.fa.zst" &&
		printf '@r1\nTAGCATCGATCGATCGG\n+\nIIIIIIIIIIIIIIIII\n@r2\nGGGCCCCAAAATTTTGC\n+\nIIIIIIIIIIIIIIIII\n' >"$T/czf/r.fq" &&
		bzip2 -c "$T/czf/r.fq" >"$T/czf/r.fq.bz2" || return 1
	"$BFI" build -q -o "$T/czf/p" --input fasta --kmer 9 "$T/czf/plain" &&
		"$BFI" build -q -o "$T/czf/c" --input fasta --kmer 9 "$T/czf/packed" || return 1
	"$BFI" query --fasta "$T/czf/r.fq" "$T/czf/p" >"$T/czf/want" &&
		"$BFI" query --fasta "$T/czf/r.fq.bz2" "$T/czf/c" | cmp -s - "$T/czf/want" &&
		grep -q 'r1	ga' "$T/czf/want" && grep -q 'r2	gb' "$T/czf/want"
}
check "FASTA genomes as .fa.xz and .fa.zst, and FASTQ queries as .fq.bz2: the sets and answers of the plain files" compressed_fasta_ok
tty_ok() {
	mkdir -p "$T/esc" && printf 'zzq\n' >"$T/esc/$(printf 'evil\033]0;pwned\007name')" &&
	"$BFI" build -q -o "$T/escs" "$T/esc" &&
	script -qec "'$BFI' query '$T/escs' zzq" /dev/null >"$T/tty" &&
	grep -q 'evil\\x1b]0;pwned\\x07name' "$T/tty" && ! grep -q "$(printf '\033')" "$T/tty" &&
	"$BFI" query "$T/escs" zzq | grep -q "$(printf 'evil\033]0')"
}
check "set names' control bytes are escaped on a terminal, kept in a pipe" tty_ok
check "an unknown BFI_KERNEL is refused" sh -c "
	BFI_KERNEL=avx512 '$BFI' query '$T/snap' lmdb 2>'$T/err'; test \$? -eq 2 && grep -q 'BFI_KERNEL' '$T/err'"
[ "$fails" -eq 0 ]
