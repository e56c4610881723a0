#!/usr/bin/env python3
"""Merge bfi query's answers from shards into one snapshot's answers.

Usage: merge_answers.py [--scored] SHARD_ANSWERS...

Each file holds bfi query's TSV answers for the same queries on one shard,
a line a query: the query, then its sets (with --scored, threshold
answers: set and score pairs, highest score first, then by ordinal). The
shards' sets are the sets of one snapshot in shard order (bfi merge and
bfi stack join them so), so the merged line is the query, then the sets
of every shard in turn, or, scored, every pair ordered by score and then
by shard and place: byte for byte what that one snapshot prints. Lines
are bytes, as bfi writes them.
"""
import sys


def main(argv):
    scored = bool(argv) and argv[0] == "--scored"
    paths = argv[1:] if scored else argv
    if not paths:
        sys.exit("usage: merge_answers.py [--scored] SHARD_ANSWERS...")
    files = [open(p, "rb") for p in paths]
    out = sys.stdout.buffer
    line_no = 0
    while True:
        lines = [f.readline() for f in files]
        line_no += 1
        if not any(lines):
            break
        if not all(lines) or any(not l.endswith(b"\n") for l in lines):
            sys.exit(f"merge_answers.py: line {line_no}: the shards' answers end apart")
        fields = [l[:-1].split(b"\t") for l in lines]
        query = fields[0][0]
        if any(f[0] != query for f in fields):
            sys.exit(f"merge_answers.py: line {line_no}: the shards answer other queries")
        if not scored:
            sets = [s for f in fields for s in f[1:]]
        else:
            pairs = []
            for shard, f in enumerate(fields):
                rest = f[1:]
                if len(rest) % 2:
                    sys.exit(f"merge_answers.py: line {line_no}: not set and score pairs")
                for at in range(0, len(rest), 2):
                    pairs.append((-int(rest[at + 1]), shard, at, rest[at], rest[at + 1]))
            pairs.sort()
            sets = [x for p in pairs for x in (p[3], p[4])]
        out.write(b"\t".join([query] + sets) + b"\n")
    for f in files:
        f.close()


if __name__ == "__main__":
    main(sys.argv[1:])
