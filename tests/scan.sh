#!/bin/sh
# scan.sh - bfi query --scan through the command line: keys, expressions,
# and FASTA reads at a threshold (k-mers, scores) answered in passes over
# the index, within a --memory that makes many passes, on every layout,
# byte-identical to the answers from the mapping; and what --scan refuses.
# Usage: sh tests/scan.sh ./bfi    (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-scan.XXXXXX")
trap 'rm -rf "$T"' EXIT
SUITE=scan
. tests/lib/check.sh # check NAME COMMAND...: the command must succeed
awk 'BEGIN { for (s = 0; s < 3000; s++) for (i = 0; i < 5 + s % 40; i++) printf "set%d\tkey-%d-%d\n", s, s % 97, i * (s % 13 + 1) }' >"$T/sets.tsv"
"$BFI" build -q -o "$T/snap" --tsv "$T/sets.tsv" || exit 1
# 40 random documents of 3 kbp, and 300 reads of 150 bp: most cut from them, some random
awk 'BEGIN { srand(7); split("ACGT", b, ""); for (d = 0; d < 40; d++) { s = ""; for (i = 0; i < 3000; i++) s = s b[int(rand() * 4) + 1]; printf ">doc%d\n%s\n", d, s > "'"$T"'/docs.fa"; seq[d] = s }
	for (r = 0; r < 300; r++) { if (r % 5) { d = int(rand() * 40); p = int(rand() * 2850); q = substr(seq[d], p + 1, 150) } else { q = ""; for (i = 0; i < 150; i++) q = q b[int(rand() * 4) + 1] } printf ">read%d\n%s\n", r, q > "'"$T"'/reads.fa" } }'
"$BFI" build -q -o "$T/dna" --input fasta --kmer 31 --per-record "$T/docs.fa" || exit 1
same() { # same IN ARGS...: bfi query ARGS <IN, mapped and scanned, byte-identical
	in=$1
	shift
	"$BFI" query "$@" <"$in" >"$T/mapped" && "$BFI" query --scan --memory "${MEM:-16K}" "$@" <"$in" >"$T/scanned" &&
		cmp "$T/mapped" "$T/scanned" && [ -s "$T/mapped" ]
}
# a read's 120 k-mers take more state than 16K holds: 64K, still many passes
reads() { MEM=64K same "$@"; }
cut -f2 "$T/sets.tsv" | sort -u | head -3000 >"$T/keys"
awk 'BEGIN { for (i = 0; i < 500; i++) print "absent-" i }' >>"$T/keys"
check "keys, present and absent, in passes of 16 KiB: the mapped answers" same "$T/keys" "$T/snap"
exprs() {
	awk '{ if (NR % 2) printf "%s AND key-%d-0\n", $0, NR % 97; else printf "(%s OR absent) key-1-0\n", $0 }' "$T/keys" >"$T/exprs"
	same "$T/exprs" -e --json "$T/snap"
}
check "expressions, as JSON: the mapped answers" exprs
check "FASTA reads at -t 0.8 with scores, k = 31, in passes of 64 KiB: the mapped answers" \
	reads /dev/null --json --kmer 31 --threshold 0.8 --fasta "$T/reads.fa" "$T/dna"
collection() {
	head -40000 "$T/sets.tsv" >"$T/a.tsv"
	tail -n +40001 "$T/sets.tsv" | sed 's/^set/more/' >"$T/b.tsv"
	"$BFI" append -q "$T/coll" --tsv "$T/a.tsv" && "$BFI" append -q "$T/coll" --tsv "$T/b.tsv" &&
		"$BFI" remove -q "$T/coll" set7 more2000 && same "$T/keys" --json "$T/coll"
}
check "a collection of two segments, sets removed: the mapped answers" collection
layouts() {
	"$BFI" build -q -o "$T/all" --layout flat,plain,tree,rambo --tsv "$T/sets.tsv" &&
		"$BFI" build -q -o "$T/dna-tree" --layout tree --input fasta --kmer 31 --per-record "$T/docs.fa" &&
		same "$T/keys" --layout plain "$T/all" && same "$T/exprs" -e --layout tree "$T/all" &&
		same "$T/keys" --json --layout rambo "$T/all" &&
		reads /dev/null --kmer 31 -t 0.8 --fasta "$T/reads.fa" "$T/dna-tree"
}
check "plain, tree and RAMBO layouts, keys, expressions and reads: the mapped answers" layouts
packs() {
	"$BFI" pack -q "$T/all" -o "$T/all.pack" --frame 64K && "$BFI" pack -q "$T/coll" -o "$T/coll.pack" &&
		"$BFI" query --layout tree "$T/all" <"$T/keys" >"$T/mapped" &&
		"$BFI" query --scan --memory 16K --layout tree "$T/all.pack" <"$T/keys" >"$T/scanned" &&
		cmp "$T/mapped" "$T/scanned" &&
		"$BFI" query --json "$T/coll" <"$T/keys" >"$T/mapped" &&
		"$BFI" query --scan --memory 16K --json "$T/coll.pack" <"$T/keys" >"$T/scanned" &&
		cmp "$T/mapped" "$T/scanned"
}
check "a pack of a snapshot and of a collection, scanned in place: the mapped answers" packs
ranges() { # one block of 300 sets of 2,000 keys: its rows pass 640K, a row a key of state fits;
	# RAMBO's 4.4 MB of rows pass 2M, R bitmaps a key fit; the tree's pass 600K, a row a level fits
	awk 'BEGIN { for (s = 0; s < 300; s++) for (i = 0; i < 2000; i++) printf "big%d\tk%d-%d\n", s, s, i }' >"$T/big.tsv" &&
		"$BFI" build -q -o "$T/big" --layout flat,rambo --tsv "$T/big.tsv" &&
		awk 'NR % 300 == 1 { print $2 } END { for (i = 0; i < 1000; i++) print "absent-" i }' "$T/big.tsv" >"$T/bigkeys" &&
		"$BFI" query --json "$T/big" <"$T/bigkeys" >"$T/mapped" &&
		"$BFI" query --scan --memory 640K --json "$T/big" <"$T/bigkeys" >"$T/scanned" 2>"$T/e" &&
		cmp "$T/mapped" "$T/scanned" && ! grep -q warning "$T/e" &&
		"$BFI" query --layout rambo --json "$T/big" <"$T/bigkeys" >"$T/mapped" &&
		"$BFI" query --scan --memory 2M --layout rambo --json "$T/big" <"$T/bigkeys" >"$T/scanned" 2>"$T/e" &&
		cmp "$T/mapped" "$T/scanned" && ! grep -q warning "$T/e" &&
		"$BFI" build -q -o "$T/bigtree" --layout tree --tsv "$T/big.tsv" &&
		"$BFI" query --layout tree --json "$T/bigtree" <"$T/bigkeys" >"$T/mapped" &&
		"$BFI" query --scan --memory 600K --layout tree --json "$T/bigtree" <"$T/bigkeys" >"$T/scanned" 2>"$T/e" &&
		cmp "$T/mapped" "$T/scanned" && ! grep -q warning "$T/e"
}
check "a flat block, RAMBO's rows and a tree's (774 KB) that pass --memory, read once range by range: the mapped answers, no warning" ranges
warned() { # 16K holds a few keys' state: many batches, each a pass, and a note says so
	"$BFI" query --scan --memory 16K "$T/snap" <"$T/keys" >/dev/null 2>"$T/e" &&
		grep -q "note: --memory 16K held the queries' state and answers in [0-9]* batches, each a pass: the index was read .* times over" "$T/e" &&
		"$BFI" query --scan "$T/snap" <"$T/keys" >/dev/null 2>"$T/e" && [ ! -s "$T/e" ]
}
check "a --memory that makes the scan read the index again (in batches) says so; one pass says nothing" warned
refused() {
	! "$BFI" query --scan --layout tree "$T/snap" x 2>"$T/e" && grep -q "layout" "$T/e" &&
		! "$BFI" query --scan --no-scan "$T/snap" x 2>"$T/e" && grep -q "contradict" "$T/e"
}
check "--scan refuses a layout the snapshot lacks, and --no-scan" refused
chosen() { # an index larger than --memory is scanned unasked, said once; --no-scan maps it
	"$BFI" query --memory 16K "$T/snap" <"$T/keys" >"$T/scanned" 2>"$T/e" &&
		[ "$(grep -c 'is larger than the 1 MiB this query may hold (--memory): answering in passes' "$T/e")" = 1 ] &&
		"$BFI" query "$T/snap" <"$T/keys" >"$T/mapped" && cmp "$T/mapped" "$T/scanned" &&
		"$BFI" query --memory 16K --no-scan "$T/snap" <"$T/keys" >"$T/scanned" 2>"$T/e" &&
		[ ! -s "$T/e" ] && cmp "$T/mapped" "$T/scanned" &&
		"$BFI" query --memory 1G "$T/snap" <"$T/keys" >"$T/scanned" 2>"$T/e" && [ ! -s "$T/e" ]
}
check "an index larger than --memory is scanned without --scan, said once; --no-scan and a --memory it fits map it" chosen
toolarge() { # a query whose keys alone pass what --memory leaves is refused before any read
	awk 'BEGIN { for (i = 0; i < 20000; i++) printf "k%d ", i; print "" }' >"$T/long" &&
		! "$BFI" query --scan --memory 64K -t 0.5 "$T/snap" <"$T/long" >"$T/out" 2>"$T/e" &&
		grep -q "this query needs about .* to be scanned .* give --memory [0-9]*[KM] or more" "$T/e" &&
		[ ! -s "$T/out" ] && need=$(sed 's/.*give --memory \([0-9]*[KM]\) or more.*/\1/' "$T/e") &&
		"$BFI" query --scan --memory "$need" -t 0.5 "$T/snap" <"$T/long" >"$T/out" &&
		"$BFI" query -t 0.5 "$T/snap" <"$T/long" | cmp - "$T/out"
}
check "a query too large for --memory is refused before any read, naming the --memory that answers it" toolarge
threads() { # a round's reads shared by two threads: the same answers, the spread in --stats
	"$BFI" build -q -o "$T/wide" --bits 16384 --tsv "$T/sets.tsv" &&
		"$BFI" query --no-scan "$T/wide" <"$T/keys" >"$T/mapped" &&
		"$BFI" query --scan --stats --threads 2 --memory 64M "$T/wide" <"$T/keys" >"$T/scanned" 2>"$T/e" &&
		cmp "$T/mapped" "$T/scanned" && grep -q "1.00 times the index" "$T/e" &&
		ratio=$(sed -n 's/.*work over the busiest thread: \([0-9.]*\).*/\1/p' "$T/e") &&
		awk -v r="$ratio" 'BEGIN { exit !(r >= 1.5) }' &&
		"$BFI" query --scan --stats --threads 1 --memory 64M "$T/wide" <"$T/keys" 2>"$T/e" | cmp - "$T/mapped" &&
		grep -q "work over the busiest thread: 1.00" "$T/e"
}
check "a scan on --threads 2 shares each round's reads (--stats: work over the busiest thread at least 1.5), the mapped answers" threads
prefiltered() { # 4 blocks of 1,024 sets, pre-filters on; keys of one set each, block after block
	awk 'BEGIN { for (s = 0; s < 4096; s++) for (i = 0; i < 600; i++) printf "b%d\tq%d-%d\n", s, s, i }' >"$T/blocks.tsv" &&
		"$BFI" build -q -o "$T/blocks" --block-sets 1024 --prefilter always --tsv "$T/blocks.tsv" &&
		awk 'BEGIN { for (i = 0; i < 5000; i++) printf "q%d-%d\n", (i * 1031) % 4096, (i * 7) % 600; for (i = 0; i < 1000; i++) print "absent-" i }' >"$T/bkeys" &&
		"$BFI" query --no-scan "$T/blocks" <"$T/bkeys" >"$T/mapped" &&
		"$BFI" query --scan --stats --memory 1M "$T/blocks" <"$T/bkeys" >"$T/scanned" 2>"$T/e" &&
		cmp "$T/mapped" "$T/scanned" &&
		took=$(sed -n 's/.*a key.s state took at most \([0-9]*\) bytes in a pass (a row in every block: \([0-9]*\)).* the first of \([0-9]*\) queries, the largest \([0-9]*\)/\1 \2 \3 \4/p' "$T/e") &&
		[ -n "$took" ] && echo "$took" | awk '{ exit !($1 < $2 * 3 / 4 && $4 > $3 * 5 / 4) }'
}
check "keys that each block's pre-filter mostly rules out take a row of state only where let through, and later batches are sized by it (--stats), the mapped answers" prefiltered
[ "$fails" -eq 0 ]
