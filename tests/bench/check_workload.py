#!/usr/bin/env python3
"""Check bfi answers against the exact truth of a set<TAB>key workload.

usage: check_workload.py SETS.TSV PRESENT_ANSWERS ABSENT_ANSWERS M K
The answer files are `bfi query` text output (key, then TAB-separated names).
Reports false negatives on present keys (must be 0), and the measured
false-positive rate on absent keys beside Bloom's formula
(1 - e^(-k n/m))^k averaged over the sets, with n each set's distinct keys.
"""
import collections, math, sys

sets_tsv, present, absent, m, k = sys.argv[1:6]
m, k = int(m), int(k)
post = collections.defaultdict(set)
size = collections.Counter()
with open(sets_tsv, encoding="utf-8", errors="surrogateescape") as f:
    for line in f:
        s, key = line.rstrip("\n").split("\t", 1)
        if s not in size or key not in post or s not in post[key]:
            post[key].add(s)
        size[s] += 0
for key, ss in post.items():
    for s in ss:
        size[s] += 1
nsets = len(size)

def answers(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            yield parts[0], set(parts[1:])

fn = fp_present = q = 0
for key, got in answers(present):
    q += 1
    truth = post.get(key, set())
    fn += len(truth - got)
    fp_present += len(got - truth)
print(f"present keys: {q} queries, {fn} false negatives, {fp_present} extra sets")

aq = afp = 0
for key, got in answers(absent):
    if key in post:
        continue
    aq += 1
    afp += len(got)
theory = sum((1 - math.exp(-k * n / m)) ** k for n in size.values()) / nsets
measured = afp / (aq * nsets) if aq else float("nan")
print(f"absent keys: {aq} queries x {nsets} sets, {afp} false positives")
print(f"measured FPR {measured:.6g}, theory {theory:.6g}, ratio {measured/theory:.3f}")
sys.exit(1 if fn else 0)
