#!/bin/sh
# algebra.sh - bfi fold and bfi stack against direct builds: a stack of 4
# shards answers exactly as one build with --shards 4; a folded snapshot
# misses no true set, and its false-positive rate on absent keys sits
# beside Lemma 4.1 at B/2 (V = 0: F = p^R, p the cells' measured rate).
# Usage: sh tests/algebra.sh ./bfi   (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-algebra.XXXXXX")
trap 'rm -rf "$T"' EXIT
# 600 sets of 40 keys; key k<i> is in sets i mod 600 and (7 i) mod 600.
awk 'BEGIN { for (i = 0; i < 12000; i++) { printf "s%d\tk%d\n", i % 600, i; printf "s%d\tk%d\n", (7 * i) % 600, i } }' >"$T/sets.tsv"
awk 'BEGIN { for (i = 0; i < 12000; i++) print "k" i }' >"$T/present.txt"
awk 'BEGIN { for (i = 0; i < 20000; i++) print "absent" i }' >"$T/absent.txt"
P="--layout rambo --reps 3 --bits 4000 --hashes 5"

# normalise: each answer line with its names sorted, so ordinals do not matter
norm() { "$BFI" query "$1" <"$2" | awk -F'\t' '{ n = split($0, a, "\t"); s = ""; m = 0; delete b;
	for (i = 2; i <= n; i++) b[++m] = a[i]; for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
	for (i = 1; i <= m; i++) s = s "\t" b[i]; print a[1] s }'; }

stack_ok() { # stack_ok S b: S shards of b cells stacked, against one build of S b cells
	rm -rf "$T"/shard* "$T/stacked" "$T/direct"
	shards=""
	i=0
	while [ "$i" -lt "$1" ]; do
		# shellcheck disable=SC2086
		"$BFI" build -q -o "$T/shard$i" $P --route "$i/$1" --cells "$2" --tsv "$T/sets.tsv" || return 1
		shards="$shards $T/shard$i"
		i=$((i + 1))
	done
	# shellcheck disable=SC2086
	"$BFI" stack -q -o "$T/stacked" $shards || return 1
	# shellcheck disable=SC2086
	"$BFI" build -q -o "$T/direct" $P --cells $(($1 * $2)) --shards "$1" --tsv "$T/sets.tsv" || return 1
	"$BFI" verify "$T/stacked" >/dev/null || return 1
	cat "$T/present.txt" "$T/absent.txt" >"$T/all.txt"
	norm "$T/stacked" "$T/all.txt" >"$T/a" && norm "$T/direct" "$T/all.txt" >"$T/b" && cmp -s "$T/a" "$T/b"
}
# cells that straddle a 64-bit word of the stack's rows (22, 44 .. 66), and shards' rows of two words
if stack_ok 3 22 && stack_ok 2 70; then
	echo "PASS algebra: stacks of 3 x 22 and 2 x 70 cells (rows across words) answer as one build"
else
	echo "FAIL algebra: stacks of 3 x 22 and 2 x 70 cells (rows across words) answer as one build"
fi
# last: the checks below use its shards
if stack_ok 4 16; then echo "PASS algebra: a stack of 4 shards answers exactly as one build"; else
	echo "FAIL algebra: a stack of 4 shards answers exactly as one build"; fi

stack_refuses() {
	"$BFI" stack -q -o "$T/wrong" "$T/shard1" "$T/shard0" "$T/shard2" "$T/shard3" 2>"$T/err"
	[ $? -eq 2 ] && grep -q 'belongs in shard' "$T/err" && [ ! -e "$T/wrong" ]
}
if stack_refuses; then echo "PASS algebra: stack refuses shards out of order"; else
	echo "FAIL algebra: stack refuses shards out of order"; fi

fold_ok() {
	# shellcheck disable=SC2086
	"$BFI" build -q -o "$T/wide" $P --cells 64 --tsv "$T/sets.tsv" || return 1
	"$BFI" fold -q -o "$T/folded" "$T/wide" || return 1
	"$BFI" verify "$T/folded" >/dev/null || return 1
	"$BFI" inspect --json "$T/folded" | grep -q '"cells": 32, "reps": 3' || return 1
	# no false negatives: every key's two sets are in its answer
	"$BFI" query "$T/folded" <"$T/present.txt" | awk -F'\t' '
		{ i = substr($1, 2) + 0; a = "s" (i % 600); b = "s" ((7 * i) % 600); fa = fb = 0
		  for (j = 2; j <= NF; j++) { if ($j == a) fa = 1; if ($j == b) fb = 1 }
		  if (!fa || !fb) miss++ }
		END { exit miss > 0 }' || return 1
	p=$("$BFI" inspect --json "$T/folded" | sed 's/.*"cell_fpr": \([0-9.e+-]*\).*/\1/')
	"$BFI" query --count "$T/folded" <"$T/absent.txt" | awk -F'\t' -v p="$p" '
		{ fp += $2 } END { m = fp / (NR * 600); l = p ^ 3
		  printf "folded to B = 32: measured FPR %.3g on absent keys, Lemma 4.1 (V = 0) %.3g, ratio %.2f\n", m, l, m / l
		  exit !(m >= 0.5 * l && m <= 1.5 * l) }'
}
if fold_ok; then echo "PASS algebra: fold misses nothing and matches Lemma 4.1 at B/2"; else
	echo "FAIL algebra: fold misses nothing and matches Lemma 4.1 at B/2"; fi

# a fold answers exactly as a build of half the cells: cells that move by part of a byte
# (44 to 22) and across words (130 to 65)
fold_exact() { # fold_exact B: B cells folded once, against a build of B/2
	rm -rf "$T/fx" "$T/fxf" "$T/fxd"
	# shellcheck disable=SC2086
	"$BFI" build -q -o "$T/fx" $P --cells "$1" --tsv "$T/sets.tsv" &&
		"$BFI" fold -q -o "$T/fxf" "$T/fx" &&
		# shellcheck disable=SC2086
		"$BFI" build -q -o "$T/fxd" $P --cells $(($1 / 2)) --tsv "$T/sets.tsv" &&
		norm "$T/fxf" "$T/all.txt" >"$T/a" && norm "$T/fxd" "$T/all.txt" >"$T/b" && cmp -s "$T/a" "$T/b"
}
if fold_exact 44 && fold_exact 130; then
	echo "PASS algebra: folds of 44 and 130 cells answer exactly as builds of 22 and 65"
else
	echo "FAIL algebra: folds of 44 and 130 cells answer exactly as builds of 22 and 65"
fi

# fold halves the rows' bytes at every B, small ones too (format 3.1: rows
# of 64 cells or fewer are 1, 2, 4 or 8 bytes): the rambo section less its
# cell tables, from B = 64 down to 8 (a row's least, one byte), with every
# repetition 4,000 rows, each repetition's rows padded to 64 bytes
fold_halves() {
	for t in 1 2 3; do
		"$BFI" fold -q --times $t -o "$T/fold$t" "$T/wide" || return 1
		"$BFI" verify "$T/fold$t" >/dev/null || return 1
	done
	for s in wide fold1 fold2 fold3; do "$BFI" inspect --json "$T/$s"; done | python3 -c '
import json, sys
rows = []
for line in sys.stdin:
    d = json.loads(line)
    r = d["rambo"]
    B, R, N = r["cells"], r["reps"], d["sets"]
    up = lambda n: (n + 63) // 64 * 64
    size = [x["size"] for x in d["sections"] if x["kind"] == "rambo"][0]
    rows.append((B, R, size - 64 - 64 * R - R * (up(4 * (B + 1)) + 2 * up(4 * N))))
print("rambo rows by B:", ", ".join("%d: %d bytes" % (x[0], x[2]) for x in rows))
sys.exit(not all(abs(b[2] * 2 - a[2]) <= 128 * a[1] for a, b in zip(rows, rows[1:])))'
}
if fold_halves; then echo "PASS algebra: each fold halves the rows' bytes, from B = 64 down to 8"; else
	echo "FAIL algebra: each fold halves the rows' bytes, from B = 64 down to 8"; fi
# stack_streamed: 4 shards of 16 MB of rows, 4 times --memory 16M: the stack made row range by
# row range, the same bytes as at 1G (one range), its peak within --memory + 64 MiB; a fold too
stack_streamed() {
	command -v python3 >/dev/null || { echo "  no python3 to measure the peak"; return 1; }
	shards=""
	for i in 0 1 2 3; do
		"$BFI" build -q -o "$T/big$i" --layout rambo --reps 4 --bits 540000 --hashes 5 --route "$i/4" \
			--cells 64 --tsv "$T/sets.tsv" || return 1
		shards="$shards $T/big$i"
	done
	[ "$(du -sbc "$T"/big?/index.bfi | tail -1 | cut -f1)" -ge $((64 << 20)) ] || return 1
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
	# the process's own baseline (a sanitizer's runtime included): a stack of the small shards
	peak() { python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)' "$@"; }
	# shellcheck disable=SC2086
	base=$(peak "$BFI" stack -q -o "$T/tiny" "$T"/shard0 "$T"/shard1 "$T"/shard2 "$T"/shard3) &&
		got=$(peak "$BFI" stack -q --memory 16M -o "$T/bigstack" $shards) &&
		"$BFI" stack -q --memory 1G -o "$T/bigstack1g" $shards || return 1
	cmp "$T/bigstack/index.bfi" "$T/bigstack1g/index.bfi" && "$BFI" verify "$T/bigstack" >/dev/null || return 1
	excess=0
	[ "$base" -gt $((16 << 20)) ] && excess=$((base - (16 << 20)))
	echo "  stack of 4 x 16 MB at --memory 16M: peak $got bytes (baseline $base)"
	[ "$got" -le $(((16 << 20) + (64 << 20) + excess)) ] || return 1
	"$BFI" fold -q --memory 16M -o "$T/bigfold" "$T/bigstack" &&
		"$BFI" fold -q --memory 1G -o "$T/bigfold1g" "$T/bigstack" &&
		cmp "$T/bigfold/index.bfi" "$T/bigfold1g/index.bfi"
}
if stack_streamed; then echo "PASS algebra: a stack of shards 4 times --memory, made row range by row range within it + 64 MiB, the same bytes as in one; a fold too"; else
	echo "FAIL algebra: a stack of shards 4 times --memory, made row range by row range within it + 64 MiB, the same bytes as in one; a fold too"; fi
