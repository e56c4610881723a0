#!/usr/bin/env python3
"""RAMBO on a set<TAB>key workload: false negatives, and the measured FPR for
keys held by V = 1, 2, 5, 10 sets beside Lemma 4.1.

usage: check_rambo.py SETS.TSV INSPECT_JSON BFI SNAP [PER_V]
INSPECT_JSON is `bfi inspect --json SNAP` (for B, R and the cells' p).
Queries PER_V keys (default 2000) of each multiplicity V, chosen with a fixed
seed among the keys held by exactly V sets, through `BFI query --layout rambo`.
Lemma 4.1: F = (p (1 - 1/B)^V + 1 - (1 - 1/B)^V)^R. Exits 1 on a false negative.
"""
import collections, json, random, subprocess, sys

sets_tsv, info_json, bfi, snap = sys.argv[1:5]
per_v = int(sys.argv[5]) if len(sys.argv) > 5 else 2000
info = json.load(open(info_json))
B, R, p = info["rambo"]["cells"], info["rambo"]["reps"], info["rambo"]["cell_fpr"]
n = info["sets"]
post = collections.defaultdict(set)
with open(sets_tsv, encoding="utf-8", errors="surrogateescape") as f:
    for line in f:
        s, key = line.rstrip("\n").split("\t", 1)
        post[key].add(s)
rnd = random.Random(7)
fn_total = 0
print(f"B = {B}, R = {R}, cells' p = {p:.4g}, N = {n}")
print("| V | keys | false negatives | measured FPR | Lemma 4.1 | measured / Lemma |")
print("|---|---|---|---|---|---|")
for v in (1, 2, 5, 10):
    keys = sorted(k for k, ss in post.items() if len(ss) == v and "\n" not in k)
    keys = rnd.sample(keys, min(per_v, len(keys)))
    if not keys:
        continue
    out = subprocess.run([bfi, "query", "--layout", "rambo", snap], input="\n".join(keys) + "\n",
                         capture_output=True, text=True, errors="surrogateescape", check=True).stdout
    fn = fp = 0
    for key, line in zip(keys, out.splitlines()):
        got = set(line.split("\t")[1:])
        fn += len(post[key] - got)
        fp += len(got - post[key])
    q = (1 - 1 / B) ** v
    lemma = (p * q + 1 - q) ** R
    measured = fp / (len(keys) * (n - v))
    fn_total += fn
    print(f"| {v} | {len(keys)} | {fn} | {measured:.3g} | {lemma:.3g} | {measured / lemma:.2f} |")
sys.exit(1 if fn_total else 0)
