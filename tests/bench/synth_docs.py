#!/usr/bin/env python3
"""Random DNA documents and reads for the threshold benchmarks (prune.sh).

usage: synth_docs.py docs OUT_DIR N LENGTH SEED
    N documents of LENGTH random bases, OUT_DIR/docNNNNNN.fa, one record each.
usage: synth_docs.py reads DOC_DIR N LENGTH SEED
    N reads of LENGTH bases, each copied from a random position of a random
    document of DOC_DIR (its *.fa files, one or more records), as FASTA on
    stdout, named r<i>_<document>. Only stretches of ACGT are drawn.
usage: synth_docs.py random N LENGTH SEED
    N random reads of LENGTH bases, FASTA on stdout: absent from any index.
"""
import os, random, sys

BASES = bytes(b"ACGT"[i & 3] for i in range(256))


def docs(out, n, length, seed):
    rnd = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    for j in range(n):
        seq = rnd.randbytes(length).translate(BASES)
        with open(os.path.join(out, "doc%06d.fa" % j), "wb") as f:
            f.write(b">doc%06d\n" % j + seq + b"\n")


def reads(doc_dir, n, length, seed):
    rnd = random.Random(seed)
    names = sorted(f for f in os.listdir(doc_dir) if f.endswith(".fa"))
    out = sys.stdout
    i = 0
    while i < n:
        name = rnd.choice(names)
        with open(os.path.join(doc_dir, name)) as f:
            seq = "".join(l.strip().upper() for l in f if not l.startswith(">"))
        if len(seq) < length:
            continue
        at = rnd.randrange(0, len(seq) - length + 1)
        r = seq[at:at + length]
        if r.strip("ACGT"):
            continue
        out.write(">r%d_%s\n%s\n" % (i, name[:-3], r))
        i += 1


def random_reads(n, length, seed):
    rnd = random.Random(seed)
    for i in range(n):
        sys.stdout.write(">n%d\n%s\n" % (i, rnd.randbytes(length).translate(BASES).decode()))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "docs":
        docs(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    elif mode == "reads":
        reads(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    elif mode == "random":
        random_reads(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(__doc__)
