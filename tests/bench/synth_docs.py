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
usage: synth_docs.py records OUT_FA READS_FA N LENGTH READS READ_LENGTH SEED
    N documents of LENGTH random bases as the records of one FASTA file
    (doc0000000, ...: bfi build --per-record makes each a set), and READS
    reads of READ_LENGTH bases copied from random records into READS_FA,
    named r<i>_<record>, in a random order.
usage: synth_docs.py strains OUT_FA CORE_FA OWN_FA GROUPS PER CORE OWN READS READ_LENGTH SEED
    GROUPS groups of PER sets, as records of one FASTA file (g<group>s<set>):
    each set is its group's core of CORE random bases, a few of them
    changed (one in 200), then OWN random bases of its own. READS reads cut
    from random groups' cores (which their whole group holds) into CORE_FA,
    named c<i>_<group>, and READS cut from random sets' own parts into
    OWN_FA, named o<i>_<set>.
usage: synth_docs.py mobile IN_FA OUT_FA READS_FA SHARE LENGTH READS READ_LENGTH SEED
    The records of IN_FA (one sequence line each) into OUT_FA, a random
    SHARE of them (0..1) with one mobile element of LENGTH random bases
    appended (a plasmid many strains carry, in every group), and READS
    reads cut from the element into READS_FA, named m<i>.
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


def records(out, reads_out, n, length, nreads, read_length, seed):
    rnd = random.Random(seed)
    pick = {}
    for i in range(nreads):
        pick.setdefault(rnd.randrange(n), []).append(i)
    got = []
    with open(out, "wb") as f:
        for j in range(n):
            seq = rnd.randbytes(length).translate(BASES)
            f.write(b">doc%07d\n" % j + seq + b"\n")
            for i in pick.get(j, ()):
                at = rnd.randrange(0, length - read_length + 1)
                got.append((i, b">r%d_doc%07d\n" % (i, j) + seq[at:at + read_length] + b"\n"))
    rnd.shuffle(got)
    with open(reads_out, "wb") as f:
        f.write(b"".join(r for _, r in got))


def strains(out, core_out, own_out, groups, per, core, own, nreads, read_length, seed):
    rnd = random.Random(seed)
    core_picks = {}
    for i in range(nreads):
        core_picks.setdefault(rnd.randrange(groups), []).append(i)
    own_picks = {}
    for i in range(nreads):
        own_picks.setdefault(rnd.randrange(groups * per), []).append(i)
    cores, owns = [], []
    with open(out, "wb") as f:
        for g in range(groups):
            base = bytearray(rnd.randbytes(core).translate(BASES))
            for i in core_picks.get(g, ()):
                at = rnd.randrange(0, core - read_length + 1)
                cores.append(b">c%d_g%05d\n" % (i, g) + bytes(base[at:at + read_length]) + b"\n")
            for s in range(per):
                seq = bytearray(base)
                for _ in range(core // 200):
                    seq[rnd.randrange(core)] = b"ACGT"[rnd.randrange(4)]
                mine = rnd.randbytes(own).translate(BASES)
                name = b"g%05ds%03d" % (g, s)
                f.write(b">" + name + b"\n" + bytes(seq) + mine + b"\n")
                for i in own_picks.get(g * per + s, ()):
                    at = rnd.randrange(0, own - read_length + 1)
                    owns.append(b">o%d_%s\n" % (i, name) + mine[at:at + read_length] + b"\n")
    for path, reads in ((core_out, cores), (own_out, owns)):
        rnd.shuffle(reads)
        with open(path, "wb") as f:
            f.write(b"".join(reads))


def mobile(src, out, reads_out, share, length, nreads, read_length, seed):
    rnd = random.Random(seed)
    element = rnd.randbytes(length).translate(BASES)
    with open(src, "rb") as f, open(out, "wb") as o:
        for line in f:
            if line.startswith(b">"):
                o.write(line)
            else:
                seq = line.rstrip(b"\n")
                o.write(seq + (element if rnd.random() < share else b"") + b"\n")
    with open(reads_out, "wb") as f:
        for i in range(nreads):
            at = rnd.randrange(0, length - read_length + 1)
            f.write(b">m%d\n" % i + element[at:at + read_length] + b"\n")


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "docs":
        docs(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    elif mode == "reads":
        reads(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    elif mode == "records":
        records(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]),
                int(sys.argv[7]), int(sys.argv[8]))
    elif mode == "strains":
        strains(sys.argv[2], sys.argv[3], sys.argv[4], *(int(a) for a in sys.argv[5:12]))
    elif mode == "mobile":
        mobile(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]),
               *(int(a) for a in sys.argv[6:10]))
    elif mode == "random":
        random_reads(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(__doc__)
