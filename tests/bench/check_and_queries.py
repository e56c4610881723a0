#!/usr/bin/env python3
"""Check `bfi query --expr` answers to multi-word AND queries against exact truth.

usage: check_and_queries.py SETS.TSV QUERIES ANSWERS
Each query line is a list of words, all required (bfi's implicit AND). Its
truth is the intersection of the words' posting lists. Every true set must
be in the answer (no false negatives); the answer's other sets are false
positives, counted. Exits 1 on any false negative.
"""
import collections, sys

sets_tsv, queries, answers = sys.argv[1:4]
post = collections.defaultdict(set)
with open(sets_tsv, encoding="utf-8", errors="surrogateescape") as f:
    for line in f:
        s, key = line.rstrip("\n").split("\t", 1)
        post[key].add(s)
fn = fp = tp = n = 0
with open(queries, encoding="utf-8", errors="surrogateescape") as qf, \
     open(answers, encoding="utf-8", errors="surrogateescape") as af:
    for q, a in zip(qf, af):
        words = q.rstrip("\n").split()
        parts = a.rstrip("\n").split("\t")
        got = set(parts[1:])
        truth = set.intersection(*(post.get(w, set()) for w in words)) if words else set()
        fn += len(truth - got)
        fp += len(got - truth)
        tp += len(truth)
        n += 1
print(f"AND queries: {n}, true answers {tp}, false negatives {fn}, false positives {fp}")
sys.exit(1 if fn else 0)
