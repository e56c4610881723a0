#!/bin/sh
# same_bytes.sh - a writer change that should not change what it writes,
# checked: OLD and NEW build the same inputs (the Bloofi workload's sets,
# every layout alone and together, the default's choice, the insertion
# build, a small --memory, FASTA genomes as many files and as one file on
# 2 threads, with --min-count) and merge them (the tree and RAMBO kept),
# and each index (and each build's catalog) must be the same bytes.
# Prints "same NAME" or "DIFF NAME" a case; exits 1 on any DIFF.
# Usage: sh tests/bench/same_bytes.sh OLD NEW [WORKDIR] [GENOME-WORKDIR]
set -u
OLD=$1; NEW=$2; W=${3:-${TMPDIR:-/tmp}/bfi-same-bytes}; rm -rf "$W"; mkdir -p "$W"
GW=${4:-${TMPDIR:-/tmp}/bfi-bench-genome}
[ -d "$GW/data/fasta" ] || "${SHARED:-../shared}/data/make_genome_sets.sh" "$GW/data" 31 >/dev/null
G=$GW/data/fasta
$NEW synth -o $W/syn -n 3000 --queries 100 >/dev/null
fail=0
mkdir -p $W/syn2; head -30000 $W/syn/sets.tsv | sed "s/^s/t/" > $W/syn2/sets.tsv
run() { name=$1; shift
  for v in old new; do b=$OLD; [ $v = new ] && b=$NEW
    "$b" build -q -o $W/$name-$v "$@" >/dev/null 2>$W/$name-$v.err || echo "$name $v failed: $(cat $W/$name-$v.err)"
  done
  if cmp -s $W/$name-old/index.bfi $W/$name-new/index.bfi && cmp -s $W/$name-old/catalog.mdb $W/$name-new/catalog.mdb; then echo "same $name"; else echo "DIFF $name"; fail=1; fi
}
run flat --layout flat --tsv $W/syn/sets.tsv
run tree --layout tree --tsv $W/syn/sets.tsv
run rambo --layout rambo --tsv $W/syn/sets.tsv
run plain --layout plain --tsv $W/syn/sets.tsv
run all --layout flat,plain,rambo,tree --tsv $W/syn/sets.tsv
run auto --tsv $W/syn/sets.tsv
run inc --layout tree --bloofi-build incremental --fanout 3 --tsv $W/syn/sets.tsv
run small --layout flat,rambo,tree --memory 8M --tsv $W/syn/sets.tsv
run all2 --layout flat,plain,rambo,tree --tsv $W/syn2/sets.tsv
run tree2 --layout tree --tsv $W/syn2/sets.tsv
run fasta --input fasta --kmer 31 $G
run fastatree --layout tree --input fasta --kmer 31 $G
for v in old new; do b=$OLD; [ $v = new ] && b=$NEW
  "$b" merge -q -o $W/merge-$v $W/all-$v $W/all2-$v >/dev/null 2>$W/merge-$v.err || echo "merge $v: $(cat $W/merge-$v.err)"
  "$b" merge -q -o $W/merge2-$v $W/tree-$v $W/tree2-$v >/dev/null 2>$W/merge-$v.err || echo "merge2 $v: $(cat $W/merge-$v.err)"
done
for n in merge merge2; do cmp -s $W/$n-old/index.bfi $W/$n-new/index.bfi && echo "same $n" || { echo "DIFF $n"; fail=1; }; done
mkdir -p $W/big; cat $G/* > $W/big/one.fa
for v in old new; do b=$OLD; [ $v = new ] && b=$NEW
  "$b" build -q --threads 2 --input fasta --kmer 31 -o $W/big-$v $W/big >/dev/null
  "$b" build -q --threads 2 --min-count 2 --input fasta --kmer 31 -o $W/bigm-$v $W/big >/dev/null
done
for n in big bigm; do cmp -s $W/$n-old/index.bfi $W/$n-new/index.bfi && echo "same $n" || { echo "DIFF $n"; fail=1; }; done
for v in old new; do b=$OLD; [ $v = new ] && b=$NEW
  "$b" build -q --layout flat,rambo --cells 16 --reps 3 --bits 8192 -o $W/q1-$v --tsv $W/syn/sets.tsv
  "$b" build -q --layout flat,rambo --cells 16 --reps 3 --bits 8192 -o $W/q2-$v --tsv $W/syn2/sets.tsv
  "$b" merge -q -o $W/qm-$v $W/q1-$v $W/q2-$v
done
cmp -s $W/qm-old/index.bfi $W/qm-new/index.bfi && echo "same rambo-merge" || { echo "DIFF rambo-merge"; fail=1; }
exit $fail
