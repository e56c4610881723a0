#!/usr/bin/env python3
"""Check bfi answers against the exact truth of a set<TAB>key workload.

usage: check_workload.py SETS.TSV SETS_INFO K PRESENT_ANSWERS ABSENT_ANSWERS [TARGET_FPR]
SETS_INFO is `bfi inspect --sets SNAP` (ordinal, name, distinct, m, ones, fpr).
The answer files are `bfi query` text output (key, then TAB-separated names).
Reports false negatives on present keys (must be 0), and the measured
false-positive rate per (absent key, set) beside Bloom's formula
(1 - e^(-k n/m))^k averaged over the sets, each with its own n and m, and
beside the target rate. Exits 1 on any false negative.
"""
import collections, math, sys

sets_tsv, info, k, present, absent = sys.argv[1:6]
target = float(sys.argv[6]) if len(sys.argv) > 6 else None
k = int(k)
post = collections.defaultdict(set)
with open(sets_tsv, encoding="utf-8", errors="surrogateescape") as f:
    for line in f:
        s, key = line.rstrip("\n").split("\t", 1)
        post[key].add(s)
width, distinct = {}, {}
with open(info, encoding="utf-8", errors="surrogateescape") as f:
    for line in f:
        o, name, n, m, ones, fpr = line.rstrip("\n").split("\t")
        width[name], distinct[name] = int(m), int(n)
nsets = len(width)

def answers(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            yield parts[0], set(parts[1:])

fn = extra = q = 0
for key, got in answers(present):
    q += 1
    truth = post.get(key, set())
    fn += len(truth - got)
    extra += len(got - truth)
print(f"present keys: {q} queries, {fn} false negatives, {extra} extra sets")

aq = afp = 0
for key, got in answers(absent):
    if key in post:
        continue
    aq += 1
    afp += len(got)
theory = sum((1 - math.exp(-k * distinct[s] / width[s])) ** k for s in width) / nsets
measured = afp / (aq * nsets) if aq else float("nan")
line = (f"absent keys: {aq} queries x {nsets} sets, {afp} false positives; measured FPR "
        f"{measured:.4g}, theory {theory:.4g} (ratio {measured / theory:.3f})")
if target:
    line += f", target {target} (measured/target {measured / target:.3f})"
print(line)
sys.exit(1 if fn else 0)
