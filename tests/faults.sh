#!/bin/sh
# faults.sh - a build that fails at any write, fsync or rename must say so
# and leave the previous snapshot at its path whole; a build killed at any
# moment must too, and what it left behind must not stop the next build.
#  1. Injection: tests/faults/shim.so (LD_PRELOAD) fails the Nth write,
#     pwrite, ftruncate, fsync, fdatasync, rename or renameat2 of a build,
#     for every N the build makes (ENOSPC, or EIO for syncs and renames).
#  2. SIGKILL: 100 builds killed after a random delay.
# After each: the old snapshot verifies and answers as before, and a later
# build at the same path succeeds.
# Usage: sh tests/faults.sh ./bfi    (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
SHIM=$(pwd)/build/tests/faults/shim.so
DATA=$(pwd)/tests/data/demo
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-faults.XXXXXX")
trap 'rm -rf "$T"' EXIT
# a preloaded shim must not upset AddressSanitizer's link-order check
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0"
SUITE=faults
. tests/lib/check.sh # check NAME COMMAND...: the command must succeed
# the old snapshot, what it answers, and new input that would change it
"$BFI" build -q -o "$T/snap" "$DATA" || exit 1
"$BFI" query "$T/snap" <"$DATA/zstd" >"$T/want"
awk '{ print "new-set\t" $0 }' "$DATA/zstd" >"$T/new.tsv"
printf 'extra\tnew-key-%d\n' 1 2 3 >>"$T/new.tsv"
intact() {
	"$BFI" verify "$T/snap" >/dev/null &&
		"$BFI" query "$T/snap" <"$DATA/zstd" | cmp -s - "$T/want"
}

injected() {
	BFI_FAULT_COUNT="$T/count" LD_PRELOAD="$SHIM" "$BFI" build -q -o "$T/snap" --tsv "$T/new.tsv" || return 1
	n=$(cat "$T/count")
	[ "$n" -gt 10 ] || { echo "only $n calls counted"; return 1; }
	"$BFI" build -q -o "$T/snap" "$DATA" || return 1 # back to the old content
	"$BFI" query "$T/snap" <"$DATA/zstd" >"$T/want"
	i=1
	bad=0
	while [ "$i" -le "$n" ]; do
		if BFI_FAULT_AT=$i LD_PRELOAD="$SHIM" "$BFI" build -q -o "$T/snap" --tsv "$T/new.tsv" \
			2>"$T/e$i"; then
			# the failed call did not matter (say, a write retried): then the new
			# snapshot must be whole, and we go back to the old one
			if ! "$BFI" verify "$T/snap" >/dev/null; then
				echo "call $i: the build succeeded but left a broken snapshot"
				bad=$((bad + 1))
			fi
			"$BFI" build -q -o "$T/snap" "$DATA" && "$BFI" query "$T/snap" <"$DATA/zstd" >"$T/want"
		else
			[ -s "$T/e$i" ] || { echo "call $i: failed without a message"; bad=$((bad + 1)); }
			intact || { echo "call $i: the old snapshot is not intact"; bad=$((bad + 1)); }
		fi
		i=$((i + 1))
	done
	echo "$n calls, each failed once: $bad problems"
	[ "$bad" -eq 0 ]
}
check "a failure at every write, fsync and rename: an error, the old snapshot intact" injected

# a bigger build, to be killed part-way
awk 'BEGIN { for (s = 0; s < 300; s++) for (i = 0; i < 400; i++) printf "s%d\tkey-%d-%d\n", s, s, i }' >"$T/big.tsv"
killed() {
	"$BFI" build -q -o "$T/snap" "$DATA" && "$BFI" query "$T/snap" <"$DATA/zstd" >"$T/want" || return 1
	t=0
	bad=0
	while [ "$t" -lt 100 ]; do
		"$BFI" build -q -o "$T/snap" --tsv "$T/big.tsv" &
		pid=$!
		# a delay of 0 to 0.5 s, spread over the trials
		sleep "0.$(((t * 37) % 50 / 10))$(((t * 37) % 10))"
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		if "$BFI" query "$T/snap" k 2>/dev/null | grep -q '^k	s'; then
			# the kill came after the swap: the new snapshot is whole; go back
			"$BFI" verify "$T/snap" >/dev/null || { echo "trial $t: new snapshot broken"; bad=$((bad + 1)); }
			"$BFI" build -q -o "$T/snap" "$DATA" || bad=$((bad + 1))
		else
			intact || { echo "trial $t: the old snapshot is not intact"; bad=$((bad + 1)); }
		fi
		t=$((t + 1))
	done
	# the next build clears what the killed ones left beside the path
	"$BFI" build -q -o "$T/snap" "$DATA" || bad=$((bad + 1))
	left=$(ls -d "$T"/snap.tmp-* 2>/dev/null | wc -l)
	echo "100 builds killed: $bad problems, $left temporary directories left after the next build"
	[ "$bad" -eq 0 ] && [ "$left" -eq 0 ]
}
check "100 builds killed at random moments: the old snapshot intact, leftovers cleared" killed
[ "$fails" -eq 0 ]
