#!/bin/sh
# make_seeds.sh - write the fuzz corpora's seeds: small valid snapshots of
# every layout (and their catalogs), and one valid input per parser.
# The seeds are checked in; run this again when the format changes.
# Usage: sh tests/fuzz/make_seeds.sh    (after ./configure && ninja)
set -eu
cd "$(dirname "$0")/../.."
C=tests/fuzz/corpus
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-seeds.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir -p "$C/open" "$C/query" "$C/resealed" "$C/catalog" "$C/parsers"
awk 'BEGIN { for (s = 0; s < 24; s++) for (i = 0; i < 6 + s % 5; i++)
	printf "set%d\t%s\n", s, (i % 3 ? sprintf("k%d", s * 7 + i) : sprintf("shared%d", i)) }' >"$T/sets.tsv"
printf 'apple\tk1\nlmdb\tk2\n' >>"$T/sets.tsv"
seed() { # seed NAME BUILD-OPTIONS...
	name=$1
	shift
	./bfi build -q -o "$T/$name" "$@" --tsv "$T/sets.tsv"
	cp "$T/$name/index.bfi" "$C/open/$name.bfi"
	cp "$T/$name/index.bfi" "$C/query/$name.bfi"
	cp "$T/$name/index.bfi" "$C/resealed/$name.bfi"
	cp "$T/$name/catalog.mdb" "$C/catalog/$name.mdb"
}
seed flat
seed flat-prefilter --prefilter always
seed flat-prefilter-classic --prefilter always --classic-prefilters
seed flat-plain --layout flat,plain
seed rambo --layout rambo --cells 4 --reps 2
seed tree --layout tree --fanout 4 --all-levels
seed tree-prefilter --layout tree --fanout 8 --prefilter always
seed tree-incremental --layout tree --bloofi-build incremental --all-levels
seed all --layout flat,plain,rambo,tree --fanout 2
# more than four flat blocks with line pre-filters: a key is tested against
# every block's pre-filter line at once (reader/flat.c, key_blocks_loop)
awk 'BEGIN { for (s = 0; s < 2600; s++) printf "m%d\tk%d\nm%d\tshared%d\n", s, s % 50, s, s % 3 }
	END { printf "apple\tk1\nlmdb\tk2\n" }' </dev/null >"$T/many.tsv"
./bfi build -q -o "$T/many" --block-sets 512 --prefilter always --tsv "$T/many.tsv"
cp "$T/many/index.bfi" "$C/open/flat-many-blocks.bfi"
cp "$T/many/index.bfi" "$C/query/flat-many-blocks.bfi"
cp "$T/many/index.bfi" "$C/resealed/flat-many-blocks.bfi"
# the catalog fuzzer binds catalogs to its own three-set index: this one is its own
printf 'alpha\tk\nalpha\talpha\nbeta\tk\nbeta\tbeta\ngamma\tk\ngamma\tgamma\n' |
	./bfi build -q -o "$T/three" --tsv -
cp "$T/three/catalog.mdb" "$C/catalog/three-sets.mdb"
mkdir -p "$T/filters"
printf 'apple\nk1\n' | ./bfi filter create -o "$T/filters/a.bff" --bits 512 --hashes 4
printf 'lmdb\nk2\n' | ./bfi filter create -o "$T/filters/b.bff" --bits 512 --hashes 4
./bfi build -q -o "$T/fromfilters" --from-filters --layout rambo,tree "$T/filters"
cp "$T/fromfilters/index.bfi" "$C/open/rambo-shared-probes.bfi"
cp "$T/fromfilters/index.bfi" "$C/query/rambo-shared-probes.bfi"
cp "$T/fromfilters/index.bfi" "$C/resealed/rambo-shared-probes.bfi"
# parsers: the first byte picks the parser (tests/fuzz/fuzz_parsers.c)
p() { printf '%b' "$1" >"$C/parsers/$2"; cat >>"$C/parsers/$2"; }
printf 'a\tx\nb\ty\r\nb\t\n\n' | p '\000' tsv
printf 'Hello, World! 2026 e-mail caf\303\251\n' | p '\001' text
printf '>r1 one\nACGTNacgtGGATTACA\n;c\nTT\n' | p '\002' fasta
printf '@q\nACGTACGTAC\n+\nIIIIIIIIII\n' | p '\002' fastq
printf '>r\nACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT\n' | gzip -c | p '\002' fasta-gz
printf '{"a": {"b": [{"c": 1}, {"d": {"e": null}}]}, "f": [1, 2]}' | p '\003' json
printf '<a><b x="1"><c/></b><d>text<e/></d></a>' | p '\004' xml
cat "$T/filters/a.bff" | p '\005' filter
printf '(apple AND "k 1") OR lmdb' | p '\006' expr
printf 'ACGTACGTNNGGATTACAGATTACAGATTACAGATTACAGATTACA' | p '\007' kmers
printf 'The quick brown fox\n' | p '\010' textdoc
# what the hostile review found: a quality longer than its sequence, and
# gzip members one after another, or followed by bytes that are not one
printf '@q\nACGTACGT\n+\nIIIIIIIIIIII\n' | p '\002' fastq-long-quality
{ printf '>a\nACGTACGTAC\n' | gzip -c; printf '>b\nGGATTACAGG\n' | gzip -c; } | p '\002' fasta-gz-two-members
{ printf '>r\nACGTACGTACGT\n' | gzip -c; printf 'trailing garbage\n'; } | p '\002' fasta-gz-trailing
# packs (fuzz_pack): a snapshot in frames of 4 KiB, and a collection of two segments
mkdir -p "$C/pack"
./bfi pack -q --frame 4K -o "$C/pack/snapshot.pack" "$T/flat"
head -40 "$T/sets.tsv" >"$T/a.tsv"
tail -40 "$T/sets.tsv" | sed 's/^set/other/' >"$T/b.tsv"
./bfi append -q "$T/coll" --tsv "$T/a.tsv" && ./bfi append -q "$T/coll" --tsv "$T/b.tsv"
./bfi pack -q --frame 4K -o "$C/pack/collection.pack" "$T/coll"
ls "$C"/* | wc -l
