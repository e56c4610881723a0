#!/bin/sh
# tour.sh [DIR] - the inputs of the README's tour and quick start, written
# into DIR (default: the current directory) from the demo data beside this
# script, wherever it is run from. Deterministic:
#   sets.tsv          the demo's 54 sets as set<TAB>word lines
#   more.tsv          two more sets, extra1 and extra2
#   fixed.tsv         a new version of the set zstd
#   keys.txt          100 words to ask, one a line
#   stop.txt          stop words for text documents
#   mail/             three text documents
#   catalogs/         two XML documents
#   genomes/          three random 3,000-base genomes, gzip'd FASTA
#   reads.txt         40 reads of them, one sequence a line (a few errors)
#   reads.fq.gz       the same reads as gzip'd FASTQ
#   site1-keys.txt, more-keys.txt   a federated site's keys, in two parts
#   trec_topics.txt   multi-word AND queries
set -eu
D=$(cd "$(dirname "$0")" && pwd)/demo
[ -d "$D" ] || { echo "tour.sh: no demo data beside this script ($D)" >&2; exit 2; }
mkdir -p "${1:-.}"
cd "${1:-.}"
for f in "$D"/*; do awk -v s="${f##*/}" '{ print s "\t" $0 }' "$f"; done >sets.tsv
printf 'extra1\tlmdb\nextra1\tfast\nextra2\tcompression\nextra2\tpager\n' >more.tsv
printf 'zstd\tfast\nzstd\tlossless\nzstd\tcompression\nzstd\tdictionary\n' >fixed.tsv
cut -f2 sets.tsv | sort -u | awk 'NR % 30 == 1' | head -100 >keys.txt
printf 'the\nand\nof\na\nto\n' >stop.txt
mkdir -p mail catalogs genomes
printf 'Subject: archives\n\nFast lossless compression of the nightly archive.\n' >mail/1.txt
printf 'Subject: terminals\n\nA terminal multiplexer keeps the shell alive.\n' >mail/2.txt
printf 'Subject: compression\n\nIs xz compression slower than zstd compression?\n' >mail/3.txt
printf '<device><printer><color/><duplex/></printer></device>\n' >catalogs/office.xml
printf '<device><scanner><color/></scanner></device>\n' >catalogs/lab.xml
awk 'BEGIN {
	srand(7)
	for (g = 1; g <= 3; g++) {
		s = ""
		for (i = 0; i < 3000; i++) s = s substr("ACGT", int(rand() * 4) + 1, 1)
		print ">g" g > ("genomes/g" g ".fa")
		print s > ("genomes/g" g ".fa")
		seq[g] = s
	}
	for (r = 1; r <= 40; r++) {
		g = 1 + r % 3
		read = substr(seq[g], 1 + int(rand() * 2850), 150)
		if (r % 4 == 0) read = substr(read, 1, 70) "T" substr(read, 72) # an error
		print read > "reads.txt"
		q = ""
		for (i = 0; i < 150; i++) q = q "I"
		printf "@r%d\n%s\n+\n%s\n", r, read, q > "reads.fq"
	}
}'
gzip -f genomes/*.fa reads.fq
cut -f2 sets.tsv | awk 'NR % 2' >site1-keys.txt
cut -f2 sets.tsv | awk 'NR % 2 == 0' >more-keys.txt
printf 'compression AND (fast OR lossless)\nterminal AND multiplexer\nhttp OR ftp\n' >trec_topics.txt
echo "the tour's inputs are in $(pwd)"
