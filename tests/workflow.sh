#!/bin/sh
# workflow.sh - tools/workflow on Snakemake (snakemake --cores 2): 24
# FASTA documents in a sample sheet (one set of two files, one gzipped)
# built as 4 shards, merged, verified and packed; 150-bp reads at
# -t 0.8 fanned out over the shards (scanned) and merged, byte for byte
# what one snapshot of all the sets answers: the joined index, and a
# direct build of every set at the same filter width; RAMBO shards routed
# by the two-level hash, stacked and folded; batches appended to a
# collection as the sheet grows, only the new ones; a --fof sheet of runs
# of several files with min_count 2, as one bfi build --fof --min-count 2
# (the merged index keeps each set's k-mers seen); plan.py's sizes and
# Lemma 4.1 rate against shards it parameterizes; the example sheet too.
# A shard whose input is missing fails and leaves no shard behind;
# the rerun, once the sheet is fixed, resumes and finishes.
# Usage: sh tests/workflow.sh ./bfi    (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
ROOT=$(pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-workflow.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
SUITE=workflow
. tests/lib/check.sh # check NAME COMMAND...: the command must succeed
if ! command -v snakemake >/dev/null; then
	echo "FAIL $SUITE: snakemake is not installed (./configure installs it as root)"
	exit 1
fi
mkdir "$T/docs"
awk -v d="$T/docs" 'BEGIN { srand(11); split("ACGT", b, "")
	for (n = 0; n < 24; n++) { s = ""; for (i = 0; i < 2000; i++) s = s b[int(rand() * 4) + 1]; seq[n] = s
		printf ">doc%d\n%s\n", n, s > (d "/doc" n ".fa") }
	for (r = 0; r < 200; r++) { n = int(rand() * 24); p = int(rand() * 1850)
		printf ">read%d\n%s\n", r, (r % 4 ? substr(seq[n], p + 1, 150) : substr(seq[(n + 1) % 24], p + 1, 75) substr(seq[n], p + 1, 75)) > (d "/../reads.fa") } }'
gzip "$T/docs/doc5.fa"
# doc7 is the set "pair": doc7.fa and doc8.fa together
{
	for n in $(seq 0 23); do
		case $n in
		5) printf 'doc5\tfasta\tdocs/doc5.fa.gz\n' ;;
		7) printf 'pair\tfasta\tdocs/doc7.fa,docs/doc8.fa\n' ;;
		8) ;;
		*) printf 'doc%d\tfasta\tdocs/doc%d.fa\n' "$n" "$n" ;;
		esac
	done
} >"$T/samples.tsv"
cat >"$T/config.yaml" <<EOC
samples: samples.tsv
out: run
bfi: $BFI
layout: flat
shards: 4
bits: 30000
kmer: 31
threads: 1
mem_mb: 64
queries: [reads.fa]
query_args: "--kmer 31 -t 0.8 --fasta -"
scan: always
EOC
snake() { (cd "$T" && snakemake -s "$ROOT/tools/workflow/Snakefile" --configfile config.yaml --cores 2 -q "$@"); }

# a missing input fails its shard's build, which leaves no shard; then the fixed sheet resumes
cp "$T/samples.tsv" "$T/good.tsv"
sed -i 's|docs/doc3.fa|docs/missing.fa|' "$T/samples.tsv"
failed() {
	! snake --keep-going >"$T/log1" 2>&1 && [ ! -e "$T/run/shards/shard0.snap" ] &&
		[ -d "$T/run/shards/shard1.snap" ] && [ -d "$T/run/shards/shard3.snap" ] &&
		! ls -a "$T/run/shards" | grep -q 'tmp'
}
check "a shard whose input is missing fails, and leaves no shard behind" failed
cp "$T/good.tsv" "$T/samples.tsv"
resumed() { # only shard 0 is built again
	snake >"$T/log2" 2>&1 && [ -s "$T/run/answers/reads.fa.tsv" ] && [ -s "$T/run/index.pack" ] &&
		grep -q ": ok" "$T/run/verify.txt" && grep -Eq '^shard +1 ' "$T/log2"
}
check "the fixed sheet resumes, building the failed shard alone: joined, verified, packed, reads answered" resumed
canon() { # threshold answers with each line's set and score pairs in name order: ordinals aside
	python3 -c 'import sys
for l in open(sys.argv[1], "rb"):
	f = l.rstrip(b"\n").split(b"\t")
	p = sorted(zip(f[1::2], f[2::2]))
	sys.stdout.buffer.write(b"\t".join([f[0]] + [x for q in p for x in q]) + b"\n")' "$1"
}
one_snapshot() { # the merged answers are the joined index's, and a direct build's of all the sets
	"$BFI" query --kmer 31 -t 0.8 --fasta "$T/reads.fa" "$T/run/index.snap" >"$T/joined" &&
		cmp "$T/joined" "$T/run/answers/reads.fa.tsv" &&
		mkdir "$T/all" && cp "$T/docs/"*.fa "$T/docs/doc5.fa.gz" "$T/all/" &&
		cat "$T/docs/doc7.fa" "$T/docs/doc8.fa" >"$T/all/pair.fa" && rm "$T/all/doc7.fa" "$T/all/doc8.fa" &&
		"$BFI" build -q --input fasta --kmer 31 --bits 30000 --hashes 7 -o "$T/direct" "$T/all" &&
		"$BFI" query --kmer 31 -t 0.8 --fasta "$T/reads.fa" "$T/direct" >"$T/direct.out" &&
		canon "$T/direct.out" >"$T/a" && canon "$T/joined" >"$T/b" && cmp "$T/a" "$T/b" &&
		[ "$(awk -F '\t' 'NF > 1' "$T/joined" | wc -l)" -ge 100 ]
}
check "merged answers: byte for byte the joined snapshot's; the same sets and scores as one direct build" one_snapshot
packed() { # the pack unpacks to the joined index, byte for byte
	"$BFI" unpack -q -o "$T/unpacked" "$T/run/index.pack" &&
		cmp "$T/unpacked/index.bfi" "$T/run/index.snap/index.bfi" &&
		cmp "$T/unpacked/catalog.mdb" "$T/run/index.snap/catalog.mdb"
}
check "the pack is the joined index" packed
nothing_to_do() { # up to date: a rerun runs no job
	snake -n >"$T/log3" 2>&1 && grep -q "Nothing to be done" "$T/log3"
}
check "a rerun with nothing changed runs nothing" nothing_to_do
rambo() { # RAMBO: sets routed by the two-level hash to 2 shards, stacked, the index folded once
	sed -e 's/^layout: flat/layout: rambo/' -e 's/^shards: 4/shards: 2/' -e 's/^out: run/out: rrun/' \
		"$T/config.yaml" >"$T/rambo.yaml" && printf 'cells: 4\nreps: 2\nfolds: 1\n' >>"$T/rambo.yaml" &&
		snake --configfile rambo.yaml >"$T/log5" 2>&1 &&
		"$BFI" query --kmer 31 -t 0.8 --fasta "$T/reads.fa" "$T/rrun/stacked.snap" >"$T/stacked" &&
		cmp "$T/stacked" "$T/rrun/answers/reads.fa.tsv" &&
		"$BFI" inspect "$T/rrun/stacked.snap" | grep -q "B = 8 cells" &&
		"$BFI" inspect "$T/rrun/index.snap" | grep -q "B = 4 cells"
}
check "rambo: routed shards stacked answer as the merged shards; the index folded to half the cells" rambo
incremental() { # batches of 5 rows appended to a collection; rows added append only new ones
	head -15 "$T/samples.tsv" >"$T/s15.tsv" && head -21 "$T/samples.tsv" >"$T/s21.tsv" &&
		sed -e 's/^samples: samples.tsv/samples: s15.tsv/' -e 's/^out: run/out: irun/' "$T/config.yaml" >"$T/inc.yaml" &&
		printf 'batch_sets: 5\n' >>"$T/inc.yaml" && snake --configfile inc.yaml >"$T/log6" 2>&1 &&
		grep -Eq '^append +3 ' "$T/log6" &&
		sed -i 's/^samples: s15.tsv/samples: s21.tsv/' "$T/inc.yaml" && snake --configfile inc.yaml >"$T/log7" 2>&1 &&
		grep -Eq '^append +2 ' "$T/log7" && [ "$(ls -d "$T/irun/index.coll/seg-"* | wc -l)" -eq 5 ] &&
		sed -i 's/^samples: s21.tsv/samples: samples.tsv/' "$T/inc.yaml" && snake --configfile inc.yaml >"$T/log8" 2>&1 &&
		grep -Eq '^append +1 ' "$T/log8" &&
		"$BFI" inspect "$T/irun/index.coll" | grep -q "23 live sets of 24 ordinals (1 removed)" &&
		"$BFI" query --kmer 31 -t 0.8 --fasta "$T/reads.fa" "$T/irun/index.coll" >"$T/coll.out" &&
		cmp "$T/coll.out" "$T/irun/answers/reads.fa.tsv" &&
		canon "$T/coll.out" >"$T/c" && cmp "$T/a" "$T/c" && grep -q ": ok" "$T/irun/verify.txt"
}
check "incremental: rows added append segments, a grown last batch again (--replace); as one direct build" incremental
raw_runs() { # a --fof sheet of runs of several files, min_count 2: as bfi build --fof --min-count 2
	# twiceN: docN.fa in two files, each k-mer seen twice, kept; onceN: two docs once each, dropped
	: >"$T/runs.fof"
	for n in 0 1 2 3 4 6; do # doc5 is gzipped
		if [ $((n % 2)) = 0 ]; then
			printf 'twice%d: docs/doc%d.fa; docs/doc%d.fa\n' "$n" "$n" "$n" >>"$T/runs.fof"
		else
			printf 'once%d: docs/doc%d.fa; docs/doc%d.fa\n' "$n" "$n" $((n + 10)) >>"$T/runs.fof"
		fi
	done
	sed -e 's/^samples: samples.tsv/samples: runs.fof/' -e 's/^out: run/out: mrun/' -e 's/^shards: 4/shards: 2/' \
		"$T/config.yaml" >"$T/raw.yaml" && printf 'min_count: 2\nkind: fasta\n' >>"$T/raw.yaml" &&
		snake --configfile raw.yaml >"$T/log9" 2>&1 || { cat "$T/log9"; return 1; }
	(cd "$T" && "$BFI" build -q --input fasta --kmer 31 --bits 30000 --hashes 7 --min-count 2 \
		--fof runs.fof -o "$T/rawdirect") &&
		"$BFI" query --kmer 31 -t 0.8 --fasta "$T/reads.fa" "$T/rawdirect" >"$T/rawdirect.out" &&
		canon "$T/rawdirect.out" >"$T/a" && canon "$T/mrun/answers/reads.fa.tsv" >"$T/b" && cmp "$T/a" "$T/b" &&
		"$BFI" inspect --sets "$T/mrun/index.snap" >"$T/rawsets" &&
		# a set seen twice keeps its 1,970 k-mers; one seen once keeps none of its 3,940
		awk -F'\t' '$2 ~ /^twice/ && !($3 == 1970 && $7 == 1970) { exit 1 }' "$T/rawsets" &&
		awk -F'\t' '$2 ~ /^once/ && !($3 == 0 && $7 == 3940) { exit 1 }' "$T/rawsets" &&
		[ "$(awk -F '\t' '$2 ~ /^twice/' "$T/rawsets" | wc -l)" = 4 ] &&
		grep -q 'twice0' "$T/mrun/answers/reads.fa.tsv"
}
check "raw runs: a --fof sheet of several files a set, min_count 2: the k-mers seen once dropped, as one bfi build --fof --min-count 2" raw_runs
plan() { # plan.py's arithmetic against bfi: 64 sets of 3,000 keys, 2 shards of 8 cells, R = 5
	python3 "$ROOT/tools/workflow/plan.py" >"$T/plan.md" && grep -q "index, stacked" "$T/plan.md" &&
		eval "$(python3 "$ROOT/tools/workflow/plan.py" --files 64 --file-mb 1 --genome 3000 \
			--input kmers --nodes 1 --jobs-per-node 2 --threads 1 --cells 16 --shell)" &&
		awk 'BEGIN { for (s = 0; s < 64; s++) for (i = 0; i < 3000; i++) printf "p%d\tk%d-%d\n", s, s, i }' >"$T/plan.tsv" &&
		for i in 0 1; do
			"$BFI" build -q --layout rambo --route $i/2 --cells "$b" --reps "$R" --bits "$M" \
				--hashes "$K" --tsv "$T/plan.tsv" -o "$T/plan$i" || return 1
		done &&
		"$BFI" stack -q -o "$T/planstack" "$T/plan0" "$T/plan1" &&
		awk 'BEGIN { for (i = 0; i < 5000; i++) print "none-" i }' >"$T/plan.absent" &&
		"$BFI" query "$T/planstack" <"$T/plan.absent" >"$T/plan.out" &&
		python3 - "$T/planstack/index.bfi" "$STACK_BYTES" "$T/plan.out" "$PE" "$R" <<'EOF2'
import os, sys
size, want = os.path.getsize(sys.argv[1]), int(sys.argv[2])
hits = sum(len(l.rstrip("\n").split("\t")) - 1 for l in open(sys.argv[3])) / 5000
lemma = 64 * float(sys.argv[4]) ** int(sys.argv[5])
print("plan.py: stack %d bytes for %d of rows; an absent key in %.3f sets, Lemma 4.1 %.3f"
      % (size, want, hits, lemma))
sys.exit(0 if want <= size <= want * 1.05 and lemma / 2 <= hits <= lemma * 2 else 1)
EOF2
}
check "plan.py: the stack it sizes is bfi's to 5%, its Lemma 4.1 rate the measured one to 2x" plan
example() { # the shipped example, from its own config
	mkdir "$T/ex" && (cd "$T/ex" && snakemake -s "$ROOT/tools/workflow/Snakefile" --cores 2 -q \
		--config bfi="$BFI" >"$T/log4" 2>&1) &&
		"$BFI" query "$T/ex/bfi-out/index.snap" <tools/workflow/example/words.txt >"$T/ex.one" &&
		cmp "$T/ex.one" "$T/ex/bfi-out/answers/words.txt.tsv" && grep -q "^compression	" "$T/ex.one"
}
check "the example sheet: its merged answers are its joined index's" example
[ "$fails" -eq 0 ]
