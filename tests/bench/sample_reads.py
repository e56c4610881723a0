#!/usr/bin/env python3
"""Sample error-free reads from the indexed genomes of the genome workload.

usage: sample_reads.py FASTA_DIR KMER_DIR N LENGTH SEED > reads.tsv
Writes N lines `set<TAB>read`: set is the genome's set name (its k-mer file's
name in KMER_DIR), read is LENGTH bases copied from a random position of one
of its records, with no letter other than ACGT. Genomes are drawn uniformly.
"""
import gzip, os, random, sys

fasta_dir, kmer_dir, n, length, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rnd = random.Random(seed)
names = sorted(f[:-4] for f in os.listdir(kmer_dir) if f.endswith(".txt"))
genomes = {}
for name in names:
    recs, cur = [], []
    with gzip.open(os.path.join(fasta_dir, name + ".fa.gz"), "rt") as f:
        for line in f:
            if line.startswith(">"):
                if cur:
                    recs.append("".join(cur).upper())
                cur = []
            else:
                cur.append(line.strip())
    if cur:
        recs.append("".join(cur).upper())
    genomes[name] = [r for r in recs if len(r) >= length]
out = 0
while out < n:
    name = rnd.choice(names)
    recs = genomes[name]
    if not recs:
        continue
    r = rnd.choice(recs)
    at = rnd.randrange(len(r) - length + 1)
    read = r[at:at + length]
    if set(read) <= set("ACGT"):
        print(f"{name}.txt\t{read}")
        out += 1
