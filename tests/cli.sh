#!/bin/sh
# cli.sh - the bfi command as scripts use it: help, exit codes, output
# forms, and answers checked against grep over the demo data (exact truth).
# Usage: sh tests/cli.sh ./bfi    (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
DATA=$(pwd)/tests/data/demo
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
SUITE=cli
. tests/lib/check.sh # check NAME COMMAND...: the command must succeed
status_is() { # status_is WANT COMMAND...
	want=$1
	shift
	"$@" >"$T/out" 2>"$T/err"
	got=$?
	[ "$got" -eq "$want" ] || { echo "  exit status $got, want $want: $*"; return 1; }
}

for c in "" build query inspect verify bench synth fold stack filter; do
	check "bfi $c --help exits 0 and shows usage" sh -c "'$BFI' $c --help | grep -q '^Usage: bfi'"
done
check "no command is a usage error (2)" status_is 2 "$BFI"
check "unknown command is a usage error (2)" status_is 2 "$BFI" frobnicate
check "unknown option is a usage error (2)" status_is 2 "$BFI" query --bogus x
check "build needs -o" status_is 2 "$BFI" build "$DATA"
# One voice: what a command says on standard error starts "bfi COMMAND:",
# getopt's complaints too; a usage error is that line and "Try 'bfi
# COMMAND --help'.", never the help itself; and every --help ends with the
# command's exit status.
voice() {
	for c in $(bash -c '. tools/bfi.bash-completion && _bfi_commands "$1"' sh "$BFI"); do
		sub=
		[ "$c" = filter ] && sub=query
		for args in "--bogus" "$T/no/such/snap $T/no/such/input" "-Z"; do
			# shellcheck disable=SC2086
			"$BFI" $c $sub $args </dev/null >/dev/null 2>"$T/err"
			first=$(grep -v '^$' "$T/err" | head -1)
			case $first in
			"bfi $c: "* | "bfi $c $sub: "*) ;;
			*) echo "bfi $c $sub $args: '$first' does not start 'bfi $c:'"; return 1 ;;
			esac
			if grep -v '^$' "$T/err" | sed 1d | grep -v "^Try 'bfi" | grep -vq "^bfi $c"; then
				echo "bfi $c $sub $args: more than its own lines and a Try line:"
				cat "$T/err"
				return 1
			fi
			if [ "$args" = --bogus ] && ! grep -q "^Try 'bfi $c.* --help'" "$T/err"; then
				echo "bfi $c $sub --bogus: no Try line"
				cat "$T/err"
				return 1
			fi
		done
		"$BFI" $c --help | grep -q '^Exit status: ' || { echo "bfi $c --help lists no exit status"; return 1; }
	done
}
check "every command's messages start 'bfi COMMAND:', and its --help gives its exit status" voice
check "bad --fpr refused" status_is 2 "$BFI" build -o "$T/x" --fpr 2 "$DATA"
check "--block-sets 0 refused" status_is 2 "$BFI" build -o "$T/x" --block-sets 0 "$DATA"
few_sets() { # --block-sets 2: no block holds more than 2 sets
	"$BFI" build -q -o "$T/x2" --block-sets 2 "$DATA" &&
		"$BFI" inspect --json "$T/x2" | python3 -c '
import json, sys
b = json.load(sys.stdin)["blocks"]
sys.exit(not (len(b) > 1 and all(x["sets"] <= 2 for x in b)))'
}
check "--block-sets 2: blocks of at most 2 sets" few_sets

check "build from the demo directory" "$BFI" build -q -o "$T/snap" "$DATA"
check "snapshot is a directory with index and catalog" \
	test -f "$T/snap/index.bfi" -a -f "$T/snap/catalog.mdb"

# Every word of the demo data: bfi's answer must contain every file that holds it.
truth_ok() {
	cat "$DATA"/* | sort -u | head -400 >"$T/words"
	"$BFI" query "$T/snap" <"$T/words" >"$T/answers" || return 1
	[ "$(wc -l <"$T/answers")" -eq "$(wc -l <"$T/words")" ] || return 1
	while IFS= read -r w; do
		line=$(grep -m1 "^$w	" "$T/answers") || return 1
		for f in $(grep -lx -- "$w" "$DATA"/*); do
			case "	$line	" in *"	${f##*/}	"*) ;; *) echo "  $w: missing ${f##*/}"; return 1 ;; esac
		done
	done <"$T/words"
}
check "query answers hold every true set (400 words vs grep)" truth_ok
check "--small-pages gives the same answers" sh -c "
	'$BFI' query --small-pages '$T/snap' <'$T/words' >'$T/small' && cmp '$T/small' '$T/answers'"

check "text output: key then TAB-separated names" \
	sh -c "'$BFI' query '$T/snap' lmdb | grep -qx 'lmdb	liblmdb0	lmdb-utils'"
check "--json output, in input order, one object per query" sh -c "
	printf 'lmdb\nnosuchword\n' | '$BFI' query --json '$T/snap' >'$T/j' &&
	sed -n 1p '$T/j' | grep -qx '{\"query\": \"lmdb\", \"matches\": \[\"liblmdb0\", \"lmdb-utils\"\]}' &&
	sed -n 2p '$T/j' | grep -qx '{\"query\": \"nosuchword\", \"matches\": \[\]}'"
json_escape_ok() {
	printf 'a"b\\c\tz\001\n' >"$T/q"
	cat >"$T/want" <<'X'
{"query": "a\"b\\c\tz\u0001", "matches": []}
X
	"$BFI" query --json "$T/snap" <"$T/q" >"$T/got" && cmp "$T/got" "$T/want"
}
check "--json escapes quotes, backslashes and control bytes" json_escape_ok
check "--count" sh -c "'$BFI' query --count '$T/snap' lmdb | grep -qx 'lmdb	2'"
check "--ordinals needs no catalog" sh -c "
	mv '$T/snap/catalog.mdb' '$T/cat' && '$BFI' query --ordinals '$T/snap' lmdb | grep -q '^lmdb	[0-9]';
	rc=\$?; mv '$T/cat' '$T/snap/catalog.mdb'; exit \$rc"

check "--expr: AND, OR, parentheses" sh -c "
	'$BFI' query --expr '$T/snap' 'compression AND fast' '(terminal OR shell) AND multiplexer' >'$T/e' &&
	grep -qx 'compression AND fast	zstd	xz-utils' '$T/e' &&
	grep -qx '(terminal OR shell) AND multiplexer	screen	tmux' '$T/e'"
check "--expr --batch: answers before a bad query, then exit 2" sh -c "
	printf 'lmdb\\nhttp\\na AND\\nzstd\\n' | '$BFI' query --batch --expr '$T/snap' >'$T/b' 2>'$T/err';
	test \$? -eq 2 && test \$(wc -l <'$T/b') -eq 2 && grep -q 'byte 5' '$T/err'"
check "--expr: a syntax error names its byte and exits 2" sh -c "
	'$BFI' query --expr '$T/snap' 'a AND' 2>'$T/err'; test \$? -eq 2 && grep -q 'byte 5' '$T/err'"
check "--threshold: ranked with scores" sh -c "
	'$BFI' query -t 0.5 '$T/snap' 'fast lossless compression algorithm' |
	grep -q '^fast lossless compression algorithm	zstd	4	xz-utils	3	'"
check "--threshold --json carries terms and scores" sh -c "
	'$BFI' query --json -t 1 '$T/snap' 'fast lossless' | grep -qx '{\"query\": \"fast lossless\", \"terms\": 2, \"matches\": \[\"zstd\"\], \"scores\": \[2\]}'"
kmer_ok() {
	# AACGTTG has the 5-mers AACGT, ACGTT (canonical AACGT) and CGTTG (CAACG);
	# GGGGG is canonical CCCCC; N breaks k-mers.
	mkdir -p "$T/g" && printf 'AACGT\nCAACG\n' >"$T/g/one" && printf 'CCCCC\n' >"$T/g/two" &&
	"$BFI" build -q -o "$T/gs" "$T/g" &&
	"$BFI" query -k 5 "$T/gs" AACGTTG | grep -qx 'AACGTTG	one	2' &&
	"$BFI" query -k 5 "$T/gs" caacgtt | grep -qx 'caacgtt	one	2' &&
	"$BFI" query -k 5 -t 1 "$T/gs" AACGTTGNNGGGGG | grep -qx 'AACGTTGNNGGGGG' &&
	"$BFI" query -k 5 -t 0.6 "$T/gs" AACGTTGNNGGGGG | grep -qx 'AACGTTGNNGGGGG	one	2' &&
	"$BFI" query -k 5 -t 0.3 "$T/gs" AACGTTGNNGGGGG | grep -qx 'AACGTTGNNGGGGG	one	2	two	1'
}
check "--kmer: canonical k-mers, N breaks them" kmer_ok
# a sequence of 70,000 bases holds more k-mers than a query may, but few
# distinct ones: repeats are dropped before the limit, as for a short one
kmer_long_ok() {
	long=$(yes AACGTTGGGGGA | head -n 6000 | tr -d '\n') &&
	"$BFI" query -k 5 -t 0.1 "$T/gs" "$long" | cut -f2- >"$T/klong" &&
	"$BFI" query -k 5 -t 0.1 "$T/gs" AACGTTGGGGGAAACGTTGGGGGA | cut -f2- >"$T/kshort" &&
	grep -qx "one	2" "$T/kshort" && cmp "$T/klong" "$T/kshort"
}
check "--kmer: a long sequence, its repeats dropped" kmer_long_ok
# keys go through bfi_query_keys, a call a batch, whose answers share one result
batch_same() {
	for opt in --count --json --ordinals; do
		"$BFI" query $opt "$T/snap" <"$T/words" >"$T/one" &&
			"$BFI" query --batch --batch-size 7 $opt "$T/snap" <"$T/words" >"$T/many" &&
			cmp "$T/one" "$T/many" || return 1
	done
	"$BFI" query "$T/snap" <"$T/words" >"$T/one" &&
		"$BFI" query --batch --batch-size 7 "$T/snap" <"$T/words" >"$T/many" &&
		cmp "$T/one" "$T/many" && [ "$(grep -c '	' "$T/many")" -gt 0 ]
}
check "--batch gives the same output as one at a time" batch_same
# stdin is read a block at a time: a line longer than a block (64 KiB; an
# argument may not pass 128 KiB), CRLF endings, an empty line and a last
# line without a newline answer as the same queries given as arguments,
# one at a time and in batches
stdin_lines_ok() {
	long=$(head -c 120000 /dev/zero | tr '\0' 'k') &&
	"$BFI" query --count "$T/snap" "$long" lmdb "" zstd >"$T/args" &&
	[ "$(wc -l <"$T/args")" -eq 4 ] && grep -qx 'lmdb	2' "$T/args" &&
	printf '%s\r\nlmdb\r\n\nzstd' "$long" >"$T/lines" &&
	"$BFI" query --count "$T/snap" <"$T/lines" >"$T/one" && cmp "$T/args" "$T/one" &&
	"$BFI" query --batch --batch-size 3 --count "$T/snap" <"$T/lines" >"$T/many" &&
	cmp "$T/args" "$T/many"
}
check "stdin: long lines, CRLF, a last line without a newline" stdin_lines_ok
check "stdin that cannot be read: exit 2, naming standard input" sh -c "
	'$BFI' query '$T/snap' <'$T' 2>'$T/err'; test \$? -eq 2 && grep -q '^bfi query: standard input: ' '$T/err'"

rambo_ok() {
	"$BFI" build -q -o "$T/rambo" --layout flat,rambo --cells 16 --reps 3 "$DATA" &&
	"$BFI" inspect "$T/rambo" | grep -q '^rambo  *B = 16 cells, R = 3 repetitions' &&
	"$BFI" inspect "$T/rambo" | grep -q 'Lemma 4.1' &&
	"$BFI" query --layout rambo "$T/rambo" lmdb | grep -q '^lmdb	.*liblmdb0.*lmdb-utils' &&
	"$BFI" verify "$T/rambo" >/dev/null &&
	"$BFI" build -q -o "$T/rambo-only" --layout rambo "$DATA" &&
	"$BFI" query "$T/rambo-only" lmdb | grep -q 'liblmdb0'
}
check "rambo: build, inspect, query, verify" rambo_ok
tree_ok() {
	"$BFI" build -q -o "$T/tree" --layout tree --fanout 4 "$DATA" &&
	"$BFI" inspect "$T/tree" | grep -q '^tree  *[0-9]* levels, fanout 4, union pre-filter' &&
	"$BFI" query "$T/tree" lmdb | grep '^lmdb	.*liblmdb0' | grep -q 'lmdb-utils' &&
	"$BFI" bench --repeat 1 "$T/tree" "$T/words" | grep -q 'bf-cost' &&
	"$BFI" verify "$T/tree" >/dev/null
}
check "tree: build, inspect, query, bench bf-cost, verify" tree_ok
incremental_ok() {
	"$BFI" build -q -o "$T/inc" --layout tree --bloofi-build incremental --fanout 3 --all-levels \
		"$DATA" &&
	"$BFI" inspect "$T/inc" | grep -q '^tree  *[0-9]* levels, built by insertion (order 3: 3 to 6 children)' &&
	"$BFI" inspect --json "$T/inc" | grep -q '"groups": "explicit"' &&
	"$BFI" inspect "$T/inc" | grep -q '^format  *3\.0' &&
	"$BFI" query "$T/inc" lmdb | grep '^lmdb	.*liblmdb0' | grep -q 'lmdb-utils' &&
	"$BFI" verify "$T/inc" >/dev/null &&
	"$BFI" inspect "$T/tree" | grep -q '^format  *3\.0'
}
check "tree: --bloofi-build incremental builds, answers and verifies" incremental_ok
fasta_ok() {
	mkdir -p "$T/fa" &&
	printf '>one first\nACGTACGTTGCAAC\nGGATTACA\n' >"$T/fa/one.fa" &&
	printf '@two\nTTGACCAGGATTACA\n+\nIIIIIIIIIIIIIII\n' | gzip -c >"$T/fa/two.fq.gz" &&
	"$BFI" build -q -o "$T/fasnap" --input fasta --kmer 7 "$T/fa" &&
	"$BFI" query --kmer 7 "$T/fasnap" GGATTACA >"$T/faq" &&
	grep -q '	one	2' "$T/faq" && grep -q '	two	2' "$T/faq" &&
	"$BFI" query --kmer 7 "$T/fasnap" ACGTACGT | grep -q '^ACGTACGT	one	1$' &&
	"$BFI" build -q -o "$T/fasnap2" --input fasta --kmer 7 --per-record "$T/fa/one.fa" "$T/fa/two.fq.gz" &&
	"$BFI" inspect --sets "$T/fasnap2" | cut -f2 | sort | tr '\n' ' ' | grep -q '^one two $'
}
check "build --input fasta: FASTA and gzip FASTQ k-mers, per file and per record" fasta_ok
fasta_query_ok() {
	printf '>q1 a read\nGGATTA\nCA\n>q2\nACGTACGT\n>q3\nNNNN\n' >"$T/q.fa" &&
	"$BFI" query --kmer 7 --fasta "$T/q.fa" "$T/fasnap" >"$T/fq.out" 2>"$T/fq.err" &&
	grep -q '^bfi query: note: 1 query is shorter than k = 7' "$T/fq.err" &&
	"$BFI" query --kmer 7 --fasta "$T/q.fa" --threads 3 "$T/fasnap" 2>&1 >/dev/null | grep -q 'note: 1 query' &&
	grep -q '	one	2' "$T/fq.out" && grep -q '^q1	' "$T/fq.out" &&
	grep -q '^q2	one	1$' "$T/fq.out" && grep -q '^q3$' "$T/fq.out" &&
	gzip -c "$T/q.fa" | "$BFI" query --kmer 7 --json --fasta - "$T/fasnap" | grep -q '"query": "q3", "terms": 0' &&
	! "$BFI" query --kmer 7 --fasta "$T/words" "$T/fasnap" 2>"$T/e" && grep -q 'not FASTA or FASTQ' "$T/e"
}
check "query --kmer --fasta: one query per record, named by its id; a record shorter than k is said once" fasta_query_ok
# --fof: a set of several files (compressed or not) is those files read as one
fof_ok() {
	mkdir -p "$T/fof/a" "$T/fof/b" "$T/fofcat" || return 1
	printf '>r1\nACGTACGTTAGCATCGATCGATCGGATCG\n' | gzip -c >"$T/fof/a/1.fa.gz" &&
		printf '@r2\nGGGGCCCCAAAATTTTGCGCGCATATA\n+\nIIIIIIIIIIIIIIIIIIIIIIIIIII\n' | xz -c >"$T/fof/a/2.fq.xz" &&
		printf '>r3\nTTGACCAGGATTACAGGATTACCAGGTT\n' >"$T/fof/b/1.fa" &&
		printf '# two samples\nsa: a/1.fa.gz ; a/2.fq.xz\n\nsb : b/1.fa\n' >"$T/fof/list.txt" || return 1
	# the same sets, each sample's files joined into one
	{ gzip -dc "$T/fof/a/1.fa.gz"; printf '>r2\nGGGGCCCCAAAATTTTGCGCGCATATA\n'; } >"$T/fofcat/sa.fa" &&
		cp "$T/fof/b/1.fa" "$T/fofcat/sb.fa" || return 1
	"$BFI" build -q -o "$T/fofs" --input fasta --kmer 9 --fof "$T/fof/list.txt" &&
		"$BFI" build -q -o "$T/fofc" --input fasta --kmer 9 "$T/fofcat" || return 1
	"$BFI" inspect --sets "$T/fofs" | cut -f2- >"$T/fof.got" &&
		"$BFI" inspect --sets "$T/fofc" | cut -f2- | cmp -s - "$T/fof.got" ||
		{ cat "$T/fof.got"; return 1; }
	printf 'TAGCATCGATCG\nCAAAATTTTGCG\nGGATTACAGGA\n' >"$T/fof.q"
	"$BFI" query "$T/fofs" <"$T/fof.q" >"$T/fof.a" && "$BFI" query "$T/fofc" <"$T/fof.q" | cmp -s - "$T/fof.a" &&
		[ "$(cut -f2 "$T/fof.a" | tr '\n' ' ')" = "sa sa sb " ] || { cat "$T/fof.a"; return 1; }
	# what is wrong with the file is said, by line; a missing file by its path
	printf 'no colon here\n' >"$T/fof/bad.txt"
	! "$BFI" build -q -o "$T/x" --input fasta --kmer 9 --fof "$T/fof/bad.txt" 2>"$T/e" &&
		grep -q 'bad.txt:1: no' "$T/e" || { cat "$T/e"; return 1; }
	printf 'sc: a/none.fa\n' >"$T/fof/missing.txt"
	! "$BFI" build -q -o "$T/x" --input fasta --kmer 9 --fof "$T/fof/missing.txt" 2>"$T/e" &&
		grep -q 'a/none.fa: No such file' "$T/e" || { cat "$T/e"; return 1; }
	! "$BFI" build -q -o "$T/x" --fof "$T/fof/list.txt" "$T/fof/b/1.fa" 2>/dev/null
}
check "build --fof: a set of several files (gzip, xz, plain) is those files as one; bad lines said" fof_ok
# --min-count: a read seen three times keeps its k-mers, a read with an error seen once loses its own
min_count_ok() {
	mkdir -p "$T/mc/raw" "$T/mc/clean" || return 1
	r=ACGTTGCATGCAAGTCTAGCTAGGATCCAGTACGGTACCATGGAT
	e=ACGTTGCATGCAAGTCTAGCTAGGTTCCAGTACGGTACCATGGAT # one base changed
	printf '@a\n%s\n+\n%s\n' "$r" "$(echo "$r" | tr ACGT IIII)" >"$T/mc/one.fq"
	{ cat "$T/mc/one.fq" "$T/mc/one.fq" "$T/mc/one.fq"
	  printf '@e\n%s\n+\n%s\n' "$e" "$(echo "$e" | tr ACGT IIII)"; } | gzip -c >"$T/mc/raw/s.fq.gz" &&
		cp "$T/mc/one.fq" "$T/mc/clean/s.fq" || return 1
	"$BFI" build -q -o "$T/mc/p" --input fasta --kmer 15 "$T/mc/raw" &&
		[ "$("$BFI" inspect --sets "$T/mc/p" | awk -F'\t' '{ print NF }')" = 6 ] &&
		"$BFI" build -q -o "$T/mc/m" --input fasta --kmer 15 --min-count 2 "$T/mc/raw" &&
		"$BFI" build -q -o "$T/mc/c" --input fasta --kmer 15 "$T/mc/clean" || return 1
	keys() { "$BFI" inspect --sets "$1" | cut -f3; }
	[ "$(keys "$T/mc/m")" = "$(keys "$T/mc/c")" ] && [ "$(keys "$T/mc/p")" -gt "$(keys "$T/mc/c")" ] ||
		{ echo "min-count $(keys "$T/mc/m"), clean $(keys "$T/mc/c"), plain $(keys "$T/mc/p")"; return 1; }
	# the error's k-mers: in the plain build, not in the counted one (a threshold of every term)
	"$BFI" query "$T/mc/p" GCTAGGTTCCAGTAC | grep -q '	s	' &&
		! "$BFI" query "$T/mc/m" GCTAGGTTCCAGTAC | grep -q '	s	' &&
		"$BFI" query "$T/mc/m" GCTAGGATCCAGTAC | grep -q '	s	' &&
		! "$BFI" build -q -o "$T/x" --min-count 0 "$T/mc/raw" 2>/dev/null
}
check "build --min-count 2: k-mers seen once (a read's error) dropped, those seen thrice kept" min_count_ok

# --layout-option: a layout or a parameter it does not take is a usage error that names what it takes
layout_option_refused() {
	"$BFI" build -q -o "$T/lo" --layout-option nope.x=1 "$DATA" 2>"$T/lo.err"
	[ $? -eq 2 ] && grep -q 'no layout is named "nope"' "$T/lo.err" || return 1
	"$BFI" build -q -o "$T/lo" --layout tree --layout-option tree.x=1 "$DATA" 2>"$T/lo.err"
	[ $? -eq 2 ] && grep -q 'the tree layout takes none' "$T/lo.err" || return 1
	"$BFI" build -q -o "$T/lo" --layout-option nodot "$DATA" 2>"$T/lo.err"
	[ $? -eq 2 ] && grep -q 'is not LAYOUT.NAME=VALUE' "$T/lo.err" && [ ! -e "$T/lo" ]
}
check "build --layout-option: an unknown layout or parameter refused, saying what it takes" layout_option_refused
# --min-count against an exact oracle: key files whose lines repeat 1 to 4
# times, counted by sort | uniq -c; each set's kept count is exact, every
# kept key is found (no false negative), the dropped ones rarely; the same
# bytes on two threads, and with a --memory so small that both the counts
# and the kept keys go through scratch files
min_count_oracle() {
	mkdir -p "$T/mo/in" || return 1
	awk 'BEGIN { srand(7); for (s = 0; s < 5; s++) { f = sprintf("'"$T"'/mo/in/s%d", s)
		for (i = 0; i < 40000; i++) { n = 1 + int(rand() * 4)
			for (j = 0; j < n; j++) printf "%.9f\tkey%d-%d\n", rand(), s % 3, i >> f } } }' ||
		return 1
	for s in 0 1 2 3 4; do # each file's lines in a random order
		sort -n "$T/mo/in/s$s" | cut -f2 >"$T/mo/lines" && mv "$T/mo/lines" "$T/mo/in/s$s" &&
			gzip -c "$T/mo/in/s$s" >"$T/mo/in/s$s.gz" &&
			sort "$T/mo/in/s$s" | uniq -c | awk '$1 >= 3 { print $2 }' >"$T/mo/kept$s" &&
			sort "$T/mo/in/s$s" | uniq -c | awk '$1 < 3 { print $2 }' >"$T/mo/drop$s" &&
			rm "$T/mo/in/s$s" || return 1
	done
	"$BFI" build --stats -o "$T/mo/a" --min-count 3 --threads 1 "$T/mo/in" 2>"$T/mo/stats" &&
		"$BFI" build -q -o "$T/mo/b" --min-count 3 --threads 2 "$T/mo/in" &&
		"$BFI" build -o "$T/mo/c" --min-count 3 --memory 4M "$T/mo/in" 2>"$T/mo/err" ||
		return 1
	cmp "$T/mo/a/index.bfi" "$T/mo/b/index.bfi" && cmp "$T/mo/a/index.bfi" "$T/mo/c/index.bfi" || return 1
	# a scratch directory that cannot be written: the build stops, naming it, and writes nothing
	! TMPDIR="$T/mo/nosuch" "$BFI" build -q -o "$T/mo/d" --min-count 3 --memory 4M "$T/mo/in" \
		2>"$T/mo/err2" && grep -q "counting its keys (--min-count) in $T/mo/nosuch: " "$T/mo/err2" &&
		[ ! -e "$T/mo/d" ] || { echo "  an unwritable scratch:"; cat "$T/mo/err2"; return 1; }
	# both the counts (in sorted runs, merged) and the kept keys went through scratch files
	grep -q 'min-count: .*scratch file' "$T/mo/err" && grep -q 'could not hold the keys' "$T/mo/err" ||
		{ echo "  the small build did not spill"; cat "$T/mo/err"; return 1; }
	"$BFI" inspect --sets "$T/mo/a" | cut -f2,3,7,8 >"$T/mo/sets" && "$BFI" verify "$T/mo/a" >/dev/null ||
		return 1
	all_seen=0 all_kept=0
	for s in 0 1 2 3 4; do
		want=$(wc -l <"$T/mo/kept$s")
		drop=$(wc -l <"$T/mo/drop$s")
		# --stats: each set's distinct keys seen, kept and dropped, as sort | uniq -c counts them
		grep -q "^bfi build: s$s  *$((want + drop))  *$want  *$drop\$" "$T/mo/stats" ||
			{ echo "  s$s: want $((want + drop)) seen, $want kept, $drop dropped in --stats:"; cat "$T/mo/stats"; return 1; }
		# and inspect --sets, from the catalog: kept, seen, dropped
		grep -q "^s$s	$want	$((want + drop))	$drop\$" "$T/mo/sets" ||
			{ echo "  s$s: inspect --sets:"; cat "$T/mo/sets"; return 1; }
		all_seen=$((all_seen + want + drop)) all_kept=$((all_kept + want))
		got=$(awk -v n="s$s" '$1 == n { print $2 }' "$T/mo/sets")
		[ "$got" = "$want" ] || { echo "  s$s: $got keys kept, want $want"; return 1; }
		# every kept key: the set among its answers
		miss=$("$BFI" query "$T/mo/a" <"$T/mo/kept$s" | awk -v n="s$s" '
			{ hit = 0; for (i = 2; i <= NF; i++) if ($i == n) hit = 1; if (!hit) m++ }
			END { print m + 0 }')
		[ "$miss" = 0 ] || { echo "  s$s: $miss kept keys not found"; return 1; }
		# a dropped key is found only as a false positive of the set's rate (1%)
		fp=$("$BFI" query "$T/mo/a" <"$T/mo/drop$s" | awk -v n="s$s" '
			{ for (i = 2; i <= NF; i++) if ($i == n) m++ } END { print m + 0 }')
		total=$(wc -l <"$T/mo/drop$s")
		[ $((fp * 100)) -le $((total * 3)) ] ||
			{ echo "  s$s: $fp of $total dropped keys found"; return 1; }
	done
	# a seen record of 0, below the keys kept (the digest check skipped): refused, with no line half written
	cp -r "$T/mo/a" "$T/mo/bad" && chmod u+w "$T/mo/bad/catalog.mdb" &&
		python3 -c 'import sys
p, seen = sys.argv[1], int(sys.argv[2])
d = open(p, "rb").read()
old = seen.to_bytes(8, "little")
assert d.count(old) >= 1, d.count(old)
open(p, "wb").write(d.replace(old, bytes(8), 1))' "$T/mo/bad/catalog.mdb" "$(awk '$1 == "s0" { print $3 }' "$T/mo/sets")" &&
		! "$BFI" inspect --trusted --sets "$T/mo/bad" >"$T/mo/out" 2>"$T/mo/e" &&
		grep -q 'catalog is malformed' "$T/mo/e" && [ "$(wc -l <"$T/mo/out")" -lt 5 ] &&
		awk -F'\t' 'NF != 8 { exit 1 }' "$T/mo/out" ||
		{ echo "  a damaged seen record:"; cat "$T/mo/e"; return 1; }
	# the summary line's totals, the same when the counts went through scratch files
	for f in stats err; do
		grep -q "; --min-count 3 kept $all_kept of the $all_seen distinct keys the sets' files gave (dropped $((all_seen - all_kept)), " "$T/mo/$f" ||
			{ echo "  $f: want $all_kept of $all_seen kept:"; cat "$T/mo/$f"; return 1; }
	done
}
check "build --min-count 3: each set's kept keys exact against sort | uniq -c, none lost; the distinct keys seen, kept and dropped in --stats, the summary and inspect --sets (a damaged record refused); the same bytes on two threads and spilled" min_count_oracle
# --format tsv and matrix: a header, every query (unmatched too), ratios, ties by name;
# a matrix cell below the threshold is "-" (not computed), at -t 0 its ratio
tables() {
	printf 'b\tk\nb\tm\nc\tk\na\tk\na\tm\nd\tz\n' >"$T/tab.tsv" &&
		"$BFI" build -q -o "$T/tab" --keep-order --tsv "$T/tab.tsv" || return 1
	printf 'k m\nnone at all\n' | "$BFI" query -t 0.5 --format tsv "$T/tab" >"$T/tab.out" &&
		printf '#query\tset\tscore\tratio\nk m\ta\t2\t1.0000\nk m\tb\t2\t1.0000\nk m\tc\t1\t0.5000\nnone at all\t\t0\t0.0000\n' |
		cmp -s - "$T/tab.out" || { cat "$T/tab.out"; return 1; }
	printf 'k m\nnone at all\n' | "$BFI" query -t 0.5 --format matrix "$T/tab" >"$T/tab.m" &&
		printf '#query\tb\tc\ta\td\nk m\t1.0000\t0.5000\t1.0000\t-\nnone at all\t-\t-\t-\t-\n' |
		cmp -s - "$T/tab.m" || { cat "$T/tab.m"; return 1; }
	# at -t 0 every cell is its ratio, none held included
	printf 'k m\nnone at all\n' | "$BFI" query -t 0 --format matrix "$T/tab" >"$T/tab.m0" &&
		printf '#query\tb\tc\ta\td\nk m\t1.0000\t0.5000\t1.0000\t0.0000\nnone at all\t0.0000\t0.0000\t0.0000\t0.0000\n' |
		cmp -s - "$T/tab.m0" || { cat "$T/tab.m0"; return 1; }
	printf 'k\nz\nq\n' | "$BFI" query --keys --batch --format matrix "$T/tab" >"$T/tab.k" &&
		printf '#query\tb\tc\ta\td\nk\t1\t1\t1\t0\nz\t0\t0\t0\t1\nq\t0\t0\t0\t0\n' |
		cmp -s - "$T/tab.k" || { cat "$T/tab.k"; return 1; }
	! "$BFI" query --format tsv --json "$T/tab" k 2>/dev/null
}
check "query --format tsv and matrix: a header, every query a row (unmatched too), ratios, ties by name" tables
check "query --format: a line per matching set from the template" sh -c "
	'$BFI' query --format 'https://packages.debian.org/{name}\\t[{query}] {{{ordinal}}}\\n' '$T/snap' lmdb >'$T/f' &&
	grep -q '^https://packages.debian.org/liblmdb0	\\[lmdb\\] {[0-9]*}$' '$T/f' &&
	grep -q '^https://packages.debian.org/lmdb-utils	' '$T/f' && test \$(wc -l <'$T/f') = 2 &&
	'$BFI' query -t 0.5 --format '{name}={score}\\n' '$T/snap' 'fast lossless compression' | grep -q '^zstd=3$' &&
	! '$BFI' query --format '{nom}' '$T/snap' x 2>'$T/e' && grep -q 'unknown field' '$T/e' &&
	! '$BFI' query --format '{name}' --json '$T/snap' x 2>'$T/e' && grep -q 'does not combine' '$T/e'"
check "build --input fasta without --kmer, or on a text file, fails with the reason" sh -c "
	! '$BFI' build -q -o '$T/x' --input fasta '$T/fa' 2>'$T/e' && grep -q 'needs --kmer' '$T/e' &&
	! '$BFI' build -q -o '$T/x' --input fasta --kmer 7 '$T/words' 2>'$T/e' &&
	grep -q 'not FASTA or FASTQ' '$T/e' && ! test -e '$T/x'"
text_ok() {
	mkdir -p "$T/docs" &&
	printf 'The Quick brown fox, 42 times!\nAnd THE lazy dog.' >"$T/docs/d1" &&
	printf 'A fox: quick-witted; word' | gzip -c >"$T/docs/d2.gz" &&
	printf 'the\nand A\n' >"$T/stops" &&
	"$BFI" build -q -o "$T/textsnap" --input text --stop-words "$T/stops" "$T/docs" &&
	"$BFI" query --text "$T/textsnap" 'QUICK, fox!' | grep -q '^QUICK, fox!	d2	d1$\|^QUICK, fox!	d1	d2$' &&
	"$BFI" query --text "$T/textsnap" 'the lazy DOG' | grep -q '^the lazy DOG	d1$' &&
	"$BFI" query --text --json "$T/textsnap" 'the and' | grep -q '"terms": 0, "matches": \[\]' &&
	"$BFI" query --text -t 0.5 "$T/textsnap" 'witted cat' | grep -q '^witted cat	d2	1$' &&
	"$BFI" query "$T/textsnap" the | grep -q '^the$'
}
check "build --input text and query --text: one tokenizer, stop words recorded" text_ok
check "build --input text: a bad --max-term, or --stop-words without text input, is refused" sh -c "
	! '$BFI' build -q -o '$T/x' --input text --max-term 0 '$T/docs' 2>'$T/e' && grep -q 'max-term' '$T/e' &&
	! '$BFI' build -q -o '$T/x' --stop-words '$T/stops' '$T/docs' 2>'$T/e' && grep -q 'need --input text' '$T/e'"
filter_ok() {
	mkdir -p "$T/sites" &&
	printf 'apple\npear\n' | "$BFI" filter create -o "$T/sites/north.bff" --expected-keys 1000 &&
	printf 'plum\n' | "$BFI" filter create -o "$T/sites/south.bff" --expected-keys 1000 - &&
	printf 'pear\n' | "$BFI" filter add "$T/sites/south.bff" &&
	"$BFI" filter info "$T/sites/south.bff" | grep -q '^keys added   2 ' &&
	"$BFI" filter info --json "$T/sites/north.bff" | grep -q '"hashes": 7' &&
	"$BFI" filter query "$T/sites/north.bff" apple kiwi | tr '\n' ' ' | grep -q '^apple	maybe kiwi	no $' &&
	printf 'An apple, a kiwi.\n' | "$BFI" filter query --words --unknown "$T/sites/north.bff" >"$T/unk" &&
	grep -q '^kiwi$' "$T/unk" && ! grep -q '^apple$' "$T/unk" &&
	"$BFI" build -q -o "$T/fed" --from-filters --layout flat,tree "$T/sites" &&
	"$BFI" query "$T/fed" pear | grep -q '^pear	north	south$\|^pear	south	north$' &&
	"$BFI" query --layout tree "$T/fed" plum | grep -q '^plum	south$' &&
	"$BFI" verify "$T/fed" >/dev/null
}
check "filter create/add/query/info, and build --from-filters" filter_ok
check "bfi filter's subcommands refuse a wrong count of operands or a bad option value, exit 2" sh -c "
	! '$BFI' filter add '$T/sites/north.bff' k1 k2 >'$T/o' 2>'$T/e' && grep -q 'need FILE and at most one KEYS' '$T/e' && [ ! -s '$T/o' ] &&
	! '$BFI' filter info 2>'$T/e' && grep -q 'need one FILE' '$T/e' &&
	! '$BFI' filter create -o '$T/x.bff' --expected-keys 10 --fpr 1.5 2>'$T/e' && grep -q 'fpr must be in' '$T/e' &&
	! '$BFI' filter create -o '$T/x.bff' --bits 0 --hashes 3 2>'$T/e' && grep -q 'bits must be 1' '$T/e' &&
	[ ! -e '$T/x.bff' ]"
check "build --from-filters refuses filters of another width, naming the file" sh -c "
	printf 'x\n' | '$BFI' filter create -o '$T/sites/odd.bff' --bits 999 --hashes 7 &&
	! '$BFI' build -q -o '$T/x' --from-filters '$T/sites' 2>'$T/e' && grep -q 'odd.bff' '$T/e' &&
	rm '$T/sites/odd.bff' && printf 'junk' >'$T/sites/junk.bff' &&
	! '$BFI' build -q -o '$T/x' --from-filters '$T/sites' 2>'$T/e' && grep -q 'junk.bff' '$T/e' &&
	rm '$T/sites/junk.bff' && ! '$BFI' filter info '$T/words' 2>'$T/e' && grep -q 'magic\|short' '$T/e'"
paths_ok() {
	mkdir -p "$T/xml" &&
	printf '<device><printer><color/></printer><camera><digital/></camera></device>' >"$T/xml/office.xml" &&
	printf '<device><camera><color/></camera></device>' >"$T/xml/home.xml" &&
	"$BFI" build -q -o "$T/xsnap" --input xml "$T/xml" &&
	"$BFI" query --path "$T/xsnap" '/device/printer' | grep -q '^/device/printer	office.xml$' &&
	"$BFI" query --path "$T/xsnap" 'camera/color' | grep -q '^camera/color	home.xml$' &&
	"$BFI" query --path "$T/xsnap" '/device/*/color' | grep -q '	home' &&
	"$BFI" query --path --json "$T/xsnap" '/printer' | grep -q '"matches": \[\]' &&
	printf '{"device": {"printer": [{"color": 1}]}}' >"$T/doc.json" &&
	"$BFI" build -q -o "$T/jsnap" --input json --paths depth --path-max 4 "$T/doc.json" &&
	"$BFI" query --path "$T/jsnap" 'printer/color' | grep -q '	doc.json$' &&
	"$BFI" inspect --json "$T/jsnap" >/dev/null
}
check "build --input xml|json and query --path" paths_ok
check "--input xml on a broken document names it; --path on a key snapshot is refused" sh -c "
	printf '<a><b></a>' >'$T/broken.xml' &&
	! '$BFI' build -q -o '$T/x' --input xml '$T/broken.xml' 2>'$T/e' && grep -q 'broken.xml:1: not well-formed' '$T/e' &&
	! '$BFI' query --path '$T/snap' a/b 2>'$T/e' &&
	! '$BFI' query --path '$T/xsnap' 'a//b' 2>'$T/e' && grep -q 'not a path' '$T/e'"
check "tree: a bad --bloofi-build or --fanout is refused, with the reason" sh -c "
	! '$BFI' build -q -o '$T/x' --layout tree --bloofi-build sideways '$DATA' 2>'$T/e' &&
	grep -q 'offline or incremental' '$T/e' &&
	! '$BFI' build -q -o '$T/x' --layout tree --fanout 3 '$DATA' 2>'$T/e' &&
	grep -q 'power of two' '$T/e'"
check "inspect shows files, parameters and fill" sh -c "
	'$BFI' inspect '$T/snap' >'$T/i' && grep -q 'index.bfi' '$T/i' && grep -q 'catalog.mdb' '$T/i' &&
	grep -q '^sets  *54' '$T/i' && grep -q '^fill ratio' '$T/i' && grep -q '^expected fpr' '$T/i'"
check "inspect --json lists files with sizes" sh -c "
	'$BFI' inspect --json '$T/snap' | grep -q '\"files\": \[{\"name\": \"index.bfi\", \"bytes\": [0-9]*}, {\"name\": \"catalog.mdb\", \"bytes\": [0-9]*}\]'"

check "verify: good snapshot exits 0" sh -c "'$BFI' verify '$T/snap' | grep -q ': ok$'"
# Flip one byte in the middle of the rows and expect its region to be named.
flip_ok() {
	cp -r "$T/snap" "$T/bad" && chmod u+w "$T/bad/index.bfi" || return 1
	off=50000
	printf '\377' | dd of="$T/bad/index.bfi" bs=1 seek=$off conv=notrunc 2>/dev/null
	"$BFI" verify "$T/bad" >"$T/v" 2>&1
	[ $? -eq 1 ] || return 1
	cat "$T/v"
	start=$(sed -n 's/.*byte offset \([0-9]*\) (length \([0-9]*\)).*/\1/p' "$T/v")
	len=$(sed -n 's/.*byte offset \([0-9]*\) (length \([0-9]*\)).*/\2/p' "$T/v")
	[ -n "$start" ] && [ "$start" -le $off ] && [ $off -lt $((start + len)) ]
}
check "verify: flipped byte exits 1 and names its region" flip_ok
check "verify: missing snapshot exits 2" status_is 2 "$BFI" verify "$T/nonexistent"
check "query: damaged header is refused (2)" sh -c "
	printf 'X' | dd of='$T/bad/index.bfi' bs=1 seek=0 conv=notrunc 2>/dev/null;
	'$BFI' query '$T/bad' lmdb; test \$? -eq 2"

# Pre-filters of one line per key by default; --classic-prefilters writes
# the kind that probes k lines. Both give the same answers.
prefilters_ok() {
	"$BFI" build -q -o "$T/line" --prefilter always "$DATA" &&
		"$BFI" build -q -o "$T/classic" --prefilter always --classic-prefilters "$DATA" || return 1
	"$BFI" inspect "$T/line" | grep -q '^format       3\.0 .*' &&
		"$BFI" inspect "$T/line" | grep -q 'pre-filters of one line per key' &&
		"$BFI" inspect "$T/classic" | grep -q '^format       3\.0 ' &&
		! "$BFI" inspect "$T/classic" | grep -q 'one line per key' || return 1
	"$BFI" query "$T/line" <"$T/words" >"$T/line.out" &&
		"$BFI" query "$T/classic" <"$T/words" >"$T/classic.out" &&
		cmp "$T/line.out" "$T/classic.out"
}
check "build: line pre-filters by default, --classic-prefilters on request" prefilters_ok

# bench --results: rows after prose get a header of their own, rows after
# rows do not.
results_ok() {
	printf '# notes\nsome prose\n' >"$T/results.md"
	for label in one two; do
		"$BFI" bench --repeat 1 --results "$T/results.md" --label $label "$T/snap" "$T/words" \
			>/dev/null || return 1
	done
	cat "$T/results.md"
	[ "$(grep -c '^| date |' "$T/results.md")" -eq 1 ] &&
		[ -z "$(sed -n 3p "$T/results.md")" ] &&
		grep -q '^| [0-9-]* | one | flat |' "$T/results.md" &&
		[ "$(tail -n 1 "$T/results.md" | cut -d'|' -f3)" = " two " ]
}
check "bench --results: a table of its own after prose" results_ok

# bench --batch: the batch beside the memory bounds for its bytes, from a
# measured random-line cost.
bench_bounds_ok() {
	"$BFI" bench --repeat 1 --batch 4 "$T/snap" "$T/words" >"$T/bench.out" || return 1
	cat "$T/bench.out"
	ns=$(sed -n 's/.*random 64-byte lines \([0-9.]*\) ns each.*/\1/p' "$T/bench.out")
	awk -v ns="$ns" 'BEGIN { exit !(ns > 0.1 && ns < 100000) }' &&
		grep -q '^batch .* one at a time: [0-9.]*x' "$T/bench.out" &&
		grep -q '^keys .* (bfi_query_keys): .* [0-9.]*x one at a time' "$T/bench.out" &&
		grep -Eq 'memory bounds for [0-9]+ bytes a query: [0-9]+ q/s read in sequence, [0-9]+ q/s as [0-9.]+ random lines' "$T/bench.out"
}
check "bench --batch: the batch beside its memory bounds" bench_bounds_ok

# only bfi serve speaks HTTP: it loads libmicrohttpd (and gnutls with it)
# when it starts, so every other command starts without them
check "bfi links no HTTP or TLS library: bfi serve loads libmicrohttpd itself" sh -c "
	ldd '$BFI' >'$T/ldd' && ! grep -qE 'libmicrohttpd|libgnutls' '$T/ldd'"

# a library loaded when needed that this machine lacks (the fault shim
# makes its dlopen fail): the command that needs it says which, exit 2
dl_missing_ok() {
	shim=$(pwd)/build/tests/faults/shim.so
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0"
	BFI_DLOPEN_FAIL=microhttpd LD_PRELOAD="$shim" "$BFI" serve --listen 127.0.0.1:0 \
		"s=$T/snap" </dev/null 2>"$T/err"
	[ $? -eq 2 ] && grep -q 'bfi serve needs libmicrohttpd (Debian: libmicrohttpd12)' "$T/err" ||
		{ cat "$T/err"; return 1; }
	BFI_DLOPEN_FAIL=libarchive LD_PRELOAD="$shim" "$BFI" pack -q -o "$T/nolib.pack" "$T/snap" \
		2>"$T/err"
	[ $? -eq 2 ] && grep -q 'packs need libarchive (Debian: libarchive13)' "$T/err" &&
		[ ! -e "$T/nolib.pack" ] || { cat "$T/err"; return 1; }
}
check "a library loaded when needed and missing: bfi serve and bfi pack name it, exit 2" dl_missing_ok

# bench --threshold: reads as threshold queries of their k-mers on each
# layout, with the lines they touch beside the latency bound for them.
bench_reads_ok() {
	python3 tests/bench/synth_docs.py records "$T/bdocs.fa" "$T/breads.fa" 300 400 40 150 3 &&
		"$BFI" build -q -o "$T/breads" --layout flat,tree --per-record --input fasta --kmer 31 \
			"$T/bdocs.fa" &&
		"$BFI" bench --repeat 1 -t 0.8 --kmer 31 "$T/breads" "$T/breads.fa" >"$T/bench.out" || return 1
	cat "$T/bench.out"
	grep -q '^queries .*: 40 reads, their 31-mers at threshold 0.8' "$T/bench.out" &&
		[ "$(grep -Ec '^(flat|tree) +40 queries' "$T/bench.out")" -eq 2 ] &&
		[ "$(grep -Ec '[0-9.]+ lines/query: latency bound \(as random lines\) [0-9.]+ us' "$T/bench.out")" -eq 2 ] &&
		# every read was cut from a document: each finds at least it
		! grep -E 'bytes/query \(0\.' "$T/bench.out" &&
		! "$BFI" bench -t 0.8 "$T/breads" "$T/breads.fa" 2>"$T/err" && grep -q 'go together' "$T/err" &&
		! "$BFI" bench -t 0.8 --kmer 31 --batch 4 "$T/breads" "$T/breads.fa" 2>/dev/null &&
		! "$BFI" bench -t 0 --kmer 31 "$T/breads" "$T/breads.fa" 2>/dev/null
}
check "bench --threshold: reads, lines touched, the latency bound" bench_reads_ok

check "build --tsv from stdin" sh -c "
	printf 'a\tx\nb\tx\nb\ty\n' | '$BFI' build -q -o '$T/tsv' --tsv - &&
	'$BFI' query '$T/tsv' x y | tr '\n' ' ' | grep -q '^x	a	b y	b '"
check "build refuses to overwrite a non-snapshot" sh -c "
	echo keep >'$T/file'; '$BFI' build -q -o '$T/file' '$DATA'; test \$? -eq 2 && grep -qx keep '$T/file'"
check "build replaces an existing snapshot" "$BFI" build -q -o "$T/snap" "$DATA"
check "build reports malformed input with its line" sh -c "
	printf 'a\tx\nnotab\n' | '$BFI' build -q -o '$T/bad2' --tsv - 2>&1 | grep -q '(stdin):2'"
# The golden snapshot: every layout of the checked-in demo input, byte for
# byte. A change of the format or of the writer's choices (widths, blocks,
# order) changes this digest: update it on purpose, with spec/format.md's
# changelog, never to make the test pass.
GOLDEN=940a0f813731ad70ba1575bb31e90ba5ad17cc71c47dc6e64140c88fe65f37e1
check "golden: the demo input's index.bfi, every layout, has the pinned digest" sh -c "
	'$BFI' build -q -o '$T/golden' --layout flat,plain,rambo,tree '$DATA' &&
	sha256sum '$T/golden/index.bfi' | grep -q '^$GOLDEN '"
# A directory of key files is read on several threads: the same bytes (index
# and catalog) at --threads 1, 2 and 7, gzip files among them; a damaged
# one is named with the same message however many threads read.
threads_dir_ok() {
	mkdir -p "$T/kd" &&
		awk -v d="$T/kd" 'BEGIN { for (s = 0; s < 40; s++) { f = sprintf("%s/set%02d.txt", d, s)
			for (i = 0; i < 2000 + 97 * s; i++) printf "k%d\n", (i * 7 + s * 13) % 9000 > f; close(f) } }' &&
		gzip "$T/kd/set03.txt" "$T/kd/set17.txt" || return 1
	for t in 1 2 7; do
		"$BFI" build -q -o "$T/kd$t" --threads "$t" "$T/kd" || return 1
	done
	cmp "$T/kd1/index.bfi" "$T/kd2/index.bfi" && cmp "$T/kd1/index.bfi" "$T/kd7/index.bfi" &&
		cmp "$T/kd1/catalog.mdb" "$T/kd7/catalog.mdb" || return 1
	"$BFI" query "$T/kd7" k6 | grep -q 'set03' || return 1
	printf 'not gzip after all' | gzip -c | head -c 20 >"$T/kd/set21.txt.gz"
	"$BFI" build -q -o "$T/kdbad1" --threads 1 "$T/kd" 2>"$T/kderr1"
	a=$?
	"$BFI" build -q -o "$T/kdbad2" --threads 2 "$T/kd" 2>"$T/kderr2"
	b=$?
	[ "$a" -ne 0 ] && [ "$b" -ne 0 ] && grep -q 'set21.txt.gz' "$T/kderr1" && cmp "$T/kderr1" "$T/kderr2"
}
check "build --threads: key files give the same bytes, and the same error, at 1, 2 and 7 threads" threads_dir_ok
# FASTA files are read on threads too, and again to fill: the same bytes at
# 1 and 2 threads, and at --memory 16M, where the 300 kbp file passes a
# thread's share of keys and is spooled instead.
threads_fasta_ok() {
	mkdir -p "$T/fd" &&
		awk -v d="$T/fd" 'BEGIN { srand(11); split("A C G T", b, " ")
			for (s = 0; s < 30; s++) { f = sprintf("%s/g%02d.fa", d, s); n = s == 7 ? 300000 : 500 + 200 * s
				printf ">g%d\n", s > f; line = ""
				for (i = 0; i < n; i++) { line = line b[int(rand() * 4) + 1]; if (length(line) == 70) { print line > f; line = "" } }
				if (line != "") print line > f; close(f) } }' || return 1
	for run in "1 1G" "2 1G" "1 16M"; do
		set -- $run
		"$BFI" build -q -o "$T/fd-$1-$2" --threads "$1" --memory "$2" --input fasta --kmer 31 "$T/fd" || return 1
	done
	cmp "$T/fd-1-1G/index.bfi" "$T/fd-2-1G/index.bfi" && cmp "$T/fd-1-1G/index.bfi" "$T/fd-1-16M/index.bfi" || return 1
	k=$(sed -n 1000p "$T/fd/g07.fa" | cut -c1-31)
	"$BFI" query "$T/fd-1-16M" "$k" | grep -q 'g07'
}
check "build --threads: FASTA files give the same bytes at 1 and 2 threads and when spooled" threads_fasta_ok
# Text documents too: the same bytes at 1 and 2 threads, with stop words.
threads_text_ok() {
	mkdir -p "$T/td" &&
		awk -v d="$T/td" 'BEGIN { srand(5)
			for (s = 0; s < 60; s++) { f = sprintf("%s/doc%02d.txt", d, s)
				for (i = 0; i < 300 + 40 * s; i++) printf "word%d%s", int(rand() * 3000), (i % 12 == 11) ? "\n" : " " > f
				close(f) } }' && printf 'word1 word2 word3\n' >"$T/td-stops" || return 1
	for t in 1 2; do
		"$BFI" build -q -o "$T/td$t" --threads "$t" --input text --stop-words "$T/td-stops" "$T/td" || return 1
	done
	cmp "$T/td1/index.bfi" "$T/td2/index.bfi" && cmp "$T/td1/catalog.mdb" "$T/td2/catalog.mdb" || return 1
	mkdir -p "$T/jd" &&
		awk -v d="$T/jd" 'BEGIN { for (s = 0; s < 40; s++) { f = sprintf("%s/doc%02d.json", d, s)
			printf "{\"a%d\": {\"b\": [{\"c%d\": 1}, {\"d\": {\"e%d\": {}}}]}}\n", s % 7, s % 5, s > f; close(f) } }' || return 1
	for t in 1 2; do
		"$BFI" build -q -o "$T/jd$t" --threads "$t" --input json "$T/jd" || return 1
	done
	cmp "$T/jd1/index.bfi" "$T/jd2/index.bfi" && cmp "$T/jd1/catalog.mdb" "$T/jd2/catalog.mdb"
}
check "build --threads: text and JSON documents give the same bytes at 1 and 2 threads" threads_text_ok

# On a terminal, progress shows a phase's rate once it has run a quarter of
# a second: here the input pauses a second between its first and second
# million keys, so the report at the second million has one. In a pipe,
# nothing.
progress_ok() {
	awk 'BEGIN { for (i = 0; i < 1100000; i++) printf "s%d\tk%d\n", i % 50, i }' >"$T/p1.tsv" &&
		awk 'BEGIN { for (i = 0; i < 1100000; i++) printf "s%d\tm%d\n", i % 50, i }' >"$T/p2.tsv" ||
		return 1
	script -qec "sh -c '(cat \"$T/p1.tsv\"; sleep 1; cat \"$T/p2.tsv\") |
		\"$BFI\" build -o \"$T/pdsnap\" --tsv -'" /dev/null </dev/null >"$T/ptty" || return 1
	tr '\r' '\n' <"$T/ptty" | grep -Eq 'reading: 2097152 keys, [0-9.]+[kMG]?/s' &&
		cat "$T/p1.tsv" "$T/p2.tsv" | "$BFI" build -o "$T/pdsnap" --tsv - 2>"$T/pipe" &&
		! grep -q '/s' "$T/pipe"
}
check "build: progress on a terminal shows a rate, and nothing in a pipe" progress_ok

# --limit N: the first N sets of the full answer, and in JSON how many more
limit_ok() {
	w=$(cat "$DATA"/* | sort | uniq -c | sort -rn | awk '$1 >= 3 { print $2; exit }')
	"$BFI" query --json "$T/snap" "$w" >"$T/full" && "$BFI" query --json --limit 2 "$T/snap" "$w" >"$T/lim" || return 1
	python3 -c 'import json, sys
f = json.load(open(sys.argv[1])); l = json.load(open(sys.argv[2]))
sys.exit(not (len(f["matches"]) >= 3 and l["matches"] == f["matches"][:2] and l["more"] == len(f["matches"]) - 2))' "$T/full" "$T/lim" || return 1
	[ "$("$BFI" query --limit 2 "$T/snap" "$w" | awk -F'\t' '{ print NF }')" -eq 3 ] &&
		! "$BFI" query --json --limit 100 "$T/snap" "$w" | grep -q more
}
check "query --limit N: the first N sets, and \"more\" in JSON" limit_ok

exit 0
