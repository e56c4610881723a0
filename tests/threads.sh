#!/bin/sh
# threads.sh - the same bytes at every thread count: builds from genomes,
# documents and key files, from directories and from their files named one
# by one, at any --memory; queries of every form at 1 to 8 threads, a bad
# query in the middle stopping them all where one thread stops; a program
# that waits for each answer through a pipe; --stats; and the warnings of
# a budget that forces the slower paths.
# Usage: sh tests/threads.sh ./bfi    (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-threads.XXXXXX")
trap 'rm -rf "$T"' EXIT
SUITE=threads
. tests/lib/check.sh

python3 tests/lib/workloads.py "$T" || exit 1
# more reads than a chunk (1,024), and text queries and keys as many
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do cat "$T/reads.fa"; done >"$T/reads12.fa"
for i in 1 2 3 4 5 6 7 8 9 10; do cat "$T/texts.txt"; done >"$T/texts10.txt"
cut -f2 "$T/keysA.tsv" | head -5000 >"$T/keys5k.txt"

same() { # same FILE...: every file the first one's bytes
	a=$1
	shift
	for b in "$@"; do cmp -s "$a" "$b" || { echo "  $b differs from $a"; return 1; }; done
}

builds_ok() {
	for t in 1 2 3 8 16; do
		"$BFI" build -q --threads $t -o "$T/g$t" --input fasta --kmer 21 "$T/genomes" &&
			"$BFI" build -q --threads $t -o "$T/gg$t" --input fasta --kmer 21 "$T"/genomes/* &&
			"$BFI" build -q --threads $t -o "$T/x$t" --input text "$T"/docs/* &&
			"$BFI" build -q --threads $t -o "$T/k$t" --layout flat,tree,rambo --tsv "$T/keysA.tsv" ||
			return 1
	done
	for m in 4M 16M; do
		"$BFI" build -q --threads 8 --memory $m -o "$T/gm$m" --input fasta --kmer 21 "$T"/genomes/* \
			2>/dev/null || return 1
	done
	same "$T/g1/index.bfi" "$T"/g[0-9]*/index.bfi "$T"/gg*/index.bfi "$T"/gm*/index.bfi &&
		same "$T/g1/catalog.mdb" "$T"/g[0-9]*/catalog.mdb "$T"/gg*/catalog.mdb &&
		same "$T/x1/index.bfi" "$T"/x*/index.bfi && same "$T/k1/index.bfi" "$T"/k*/index.bfi
}
check "builds at 1 to 16 threads, from a directory or its files one by one, at 4M and 16M: the same bytes" builds_ok

queries_ok() {
	i=0
	for q in "--fasta $T/reads12.fa -t 0.8 $T/g1" "--json --fasta $T/reads12.fa -t 0.5 $T/g1" \
		"-t 0.5 $T/x1 <$T/texts10.txt" "--json $T/x1 <$T/texts10.txt" \
		"--keys $T/k1 <$T/keys5k.txt" "--batch --keys --count $T/k1 <$T/keys5k.txt" \
		"-e --layout tree $T/k1 <$T/exprs.txt" "--batch -e --ordinals $T/k1 <$T/exprs.txt"; do
		i=$((i + 1))
		for t in 1 2 3 8; do
			eval "\"$BFI\" query --threads $t $q" >"$T/q$i.$t" || { echo "  --threads $t $q"; return 1; }
		done
		[ -s "$T/q$i.1" ] && same "$T/q$i.1" "$T/q$i.2" "$T/q$i.3" "$T/q$i.8" ||
			{ echo "  $q"; return 1; }
	done
}
check "queries of every form at 1, 2, 3 and 8 threads: the same bytes, in input order" queries_ok

# Threshold queries pruned (the default) and counting every term on every
# set (BFI_PRUNE=off), at 1 and 2 threads: the same bytes.
prune_ok() {
	"$BFI" build -q -o "$T/gt" --layout tree,plain --fanout 4 --all-levels --input fasta --kmer 21 \
		"$T/genomes" || return 1
	for q in "--fasta $T/reads12.fa -t 0.8 $T/g1" "--json --fasta $T/reads12.fa -t 0.5 $T/g1" \
		"--fasta $T/reads12.fa -t 0.9 --layout tree $T/gt" "--fasta $T/reads12.fa -t 0.7 --layout plain $T/gt" \
		"-t 0.5 $T/x1 <$T/texts10.txt"; do
		for t in 1 2; do
			eval "\"$BFI\" query --threads $t $q" >"$T/p.on.$t" &&
				eval "BFI_PRUNE=off \"$BFI\" query --threads $t $q" >"$T/p.off.$t" ||
				{ echo "  --threads $t $q"; return 1; }
			[ -s "$T/p.on.$t" ] && same "$T/p.on.$t" "$T/p.off.$t" || { echo "  $q"; return 1; }
		done
	done
}
check "threshold queries pruned and with BFI_PRUNE=off, at 1 and 2 threads: the same bytes" prune_ok

# A query that does not parse, past several chunks: the same answers before
# it, the same message, exit 2, nothing after it.
bad_ok() {
	awk '{ print; print $0 " OR x" }' "$T/keys5k.txt" >"$T/ex.txt" && echo 'a AND (' >>"$T/ex.txt" &&
		cat "$T/ex.txt" >>"$T/ex.txt.2" && cat "$T/ex.txt" "$T/ex.txt.2" >"$T/ex2.txt" || return 1
	for t in 1 4; do
		"$BFI" query --threads $t -e "$T/k1" <"$T/ex2.txt" >"$T/b$t.out" 2>"$T/b$t.err"
		[ $? -eq 2 ] || { echo "  --threads $t: not exit 2"; return 1; }
	done
	[ "$(wc -l <"$T/b1.out")" -eq 10000 ] && same "$T/b1.out" "$T/b4.out" && same "$T/b1.err" "$T/b4.err" &&
		grep -q 'syntax error at byte 7 of: a AND (' "$T/b4.err"
}
check "a bad query after 10,000 good ones stops 4 threads where one stops: same answers, same message" bad_ok

# A program that writes a query and waits for its answer gets it at once.
pipe_ok() {
	python3 - "$BFI" "$T/k1" "$T/keys5k.txt" <<'EOF'
import subprocess, sys
bfi, snap, keys = sys.argv[1:4]
ks = [l.strip() for l in open(keys)][:20]
one = subprocess.run([bfi, "query", "--threads", "1", snap], input="\n".join(ks) + "\n",
                     capture_output=True, text=True, check=True).stdout.splitlines()
p = subprocess.Popen([bfi, "query", "--threads", "4", snap], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
for k, want in zip(ks, one):
    p.stdin.write(k + "\n")
    p.stdin.flush()
    got = p.stdout.readline().rstrip("\n")  # blocks if the answer were held back
    if got != want:
        sys.exit(f"  {k}: {got!r}, one thread {want!r}")
p.stdin.close()
p.wait(timeout=30)
EOF
}
check "through a pipe, each query's answer comes before the next query is sent" pipe_ok

stats_ok() {
	"$BFI" build -q --stats --threads 8 -o "$T/st" --input fasta --kmer 21 "$T/genomes" 2>"$T/err" &&
		grep -q '^bfi build: phase ' "$T/err" && grep -q '^bfi build: reading ' "$T/err" &&
		grep -q '^bfi build: filling ' "$T/err" && grep -q '^bfi build: all ' "$T/err" &&
		same "$T/g1/index.bfi" "$T/st/index.bfi" || { cat "$T/err"; return 1; }
	# the work of 20 genomes shared by 8 threads: reading and filling allow more than 2x
	awk '$2 == "reading" || $2 == "filling" { sub(/x$/, "", $6); if ($6 + 0 < 2) bad = 1 }
		END { exit bad }' "$T/err" || { cat "$T/err"; return 1; }
}
check "build --stats: each phase's wall, CPU and busiest thread; 8 threads share the reading and filling" stats_ok

budget_ok() { # rows of 144 MiB and keys past a 6 MiB budget: the same bytes, and the slower paths said
	"$BFI" build -q --memory 6M --bits 4000000 --layout flat -o "$T/w6" --tsv "$T/keysA.tsv" \
		2>"$T/err6" &&
		"$BFI" build -q --memory 1G --bits 4000000 --layout flat -o "$T/w1g" --tsv "$T/keysA.tsv" \
			2>"$T/err1g" &&
		same "$T/w1g/index.bfi" "$T/w6/index.bfi" &&
		grep -q '^bfi build: warning: --memory 6 MiB cannot hold the rows of 1 block (the largest 144 MiB)' "$T/err6" &&
		grep -q '^bfi build: warning: --memory 6 MiB could not hold the keys' "$T/err6" &&
		! grep -q warning "$T/err1g" || { cat "$T/err6" "$T/err1g"; return 1; }
}
check "a budget that holds neither the keys nor the rows: the same bytes, and a warning for each slower path" budget_ok

tsv_ok() { # --tsv in chunks on threads: the same bytes as one, every key found, lines numbered
	# 600,000 lines (about 9 MB): runs of one set, then sets interleaved; CRLF and empty
	# lines; a key longer than a chunk; a last line without its line end
	awk 'BEGIN { for (i = 0; i < 300000; i++) printf "s%d\tk%d\n", int(i / 3000), i
		for (i = 0; i < 300000; i++) printf "s%d\tm%d%s\n", i % 97, i, i % 1000 ? "" : "\r\n"
		printf "long\t"; for (i = 0; i < 300000; i++) printf "abcdefgh"; printf "\nlast\tend" }' \
		>"$T/big.tsv" || return 1
	for t in 1 2 3 8; do
		"$BFI" build -q --threads $t -o "$T/tsv$t" --tsv "$T/big.tsv" || return 1
	done
	"$BFI" build -q --threads 8 -o "$T/tsvin" --tsv - <"$T/big.tsv" &&
		"$BFI" build -q --threads 8 --memory 4M -o "$T/tsv4m" --tsv "$T/big.tsv" 2>/dev/null &&
		same "$T/tsv1/index.bfi" "$T"/tsv[0-9]*/index.bfi "$T/tsvin/index.bfi" "$T/tsv4m/index.bfi" &&
		same "$T/tsv1/catalog.mdb" "$T"/tsv[0-9]*/catalog.mdb || return 1
	# each set's distinct keys as the catalog counts them, against awk's count
	awk -F'\t' 'NF == 2 { sub(/\r$/, "", $2); if (!seen[$1 SUBSEP $2]++) n[$1]++ }
		END { for (s in n) print s "\t" n[s] }' "$T/big.tsv" | sort >"$T/want.n"
	"$BFI" inspect --sets "$T/tsv8" | awk -F'\t' '{ print $2 "\t" $3 }' | sort >"$T/got.n"
	same "$T/want.n" "$T/got.n" || return 1
	# every key of a sample is found in its set
	awk -F'\t' 'NF == 2 && NR % 997 == 1 && length($2) < 100 { sub(/\r$/, "", $2); print $2 "\t" $1 }' \
		"$T/big.tsv" >"$T/sample"
	cut -f1 "$T/sample" | "$BFI" query --keys "$T/tsv8" >"$T/sample.got" &&
		paste "$T/sample" "$T/sample.got" | awk -F'\t' '{ hit = 0
			for (i = 4; i <= NF; i++) if ($i == $2) hit = 1
			if ($1 != $3 || !hit) { print "  missed: " $0; bad = 1 } } END { exit bad }' || return 1
	# errors name the line, however far into the input
	{ head -n 450000 "$T/big.tsv"; echo notab; } >"$T/bad.tsv"
	"$BFI" build -q --threads 3 -o "$T/bad1" --tsv "$T/bad.tsv" 2>"$T/err" &&
		{ echo "  a line without TAB was taken"; return 1; }
	grep -q "bad.tsv:450001: no TAB" "$T/err" || { cat "$T/err"; return 1; }
	{ head -n 450000 "$T/big.tsv"; printf '%0600d\tkey\n' 0; } >"$T/bad2.tsv"
	"$BFI" build -q --threads 3 -o "$T/bad2" --tsv "$T/bad2.tsv" 2>"$T/err" &&
		{ echo "  a name of 600 bytes was taken"; return 1; }
	grep -q "bad2.tsv:450001: " "$T/err" || { cat "$T/err"; return 1; }
}
check "--tsv read in chunks on 1 to 8 threads, from a file or stdin, at 4M: the same bytes, every key counted and found, errors at their line" tsv_ok

grouped_ok() { # sets of widths far apart: a grouped run, the same bytes at any threads and budget
	awk 'BEGIN { for (s = 0; s < 12; s++) { n = 2000 * 4 ^ int(s / 3)
		for (i = 0; i < n; i++) printf "g%d\tk%d\n", s, i * (s + 1) } }' >"$T/g.tsv" || return 1
	for t in 1 8; do
		"$BFI" build -q --threads $t -o "$T/gr$t" --tsv "$T/g.tsv" || return 1
	done
	# at 4M the run is filled in memory or, when a block's filters do not fit beside the
	# run's rows, in stripes; either way the same bytes
	"$BFI" build -q --threads 4 --memory 4M -o "$T/grm" --tsv "$T/g.tsv" 2>"$T/grm.err" &&
		"$BFI" inspect "$T/gr1" | grep -q 'grouped: its rows share lines' &&
		same "$T/gr1/index.bfi" "$T/gr8/index.bfi" "$T/grm/index.bfi" &&
		same "$T/gr1/catalog.mdb" "$T/gr8/catalog.mdb" "$T/grm/catalog.mdb" &&
		"$BFI" verify "$T/grm" >/dev/null
}
check "a grouped run at 1 and 8 threads and at 4M, in memory or in stripes: the same bytes" grouped_ok

fastq_ok() { # raw reads, gzipped: sized by the k-mers a sample of one holds, read on 2 threads
	mkdir -p "$T/fq" && awk -v d="$T/fq" 'BEGIN { srand(5); split("ACGT", b, ""); split("F:,", q, "")
		for (f = 0; f < 4; f++) { g = ""; for (i = 0; i < 20000; i++) g = g b[int(rand() * 4) + 1]
			out = d "/s" f ".fq"
			for (r = 0; r < 8000; r++) { p = int(rand() * 19850); ql = ""
				for (i = 0; i < 150; i++) ql = ql (rand() < 0.9 ? "F" : q[int(rand() * 3) + 1])
				printf "@r%d\n%s\n+\n%s\n", r, substr(g, p + 1, 150), ql > out }
			close(out) } }' && gzip "$T/fq/"*.fq &&
		"$BFI" build -q --threads 1 --input fasta --kmer 31 -o "$T/fq1" "$T/fq" &&
		"$BFI" build -q --threads 2 --memory 220M --input fasta --kmer 31 -o "$T/fq2" "$T/fq" 2>"$T/fqerr" &&
		cmp "$T/fq1/index.bfi" "$T/fq2/index.bfi" && ! grep -q "reading them on 1 thread" "$T/fqerr"
}
# 4x a gzip file's bytes, the bound alone, puts each at 42 MB of keys, past a thread's 27 MB
check "gzipped FASTQ at --memory 220M: the k-mers its sample holds size the reading, on 2 threads, the same bytes" fastq_ok

echo "threads: $fails failed"
[ "$fails" -eq 0 ]
