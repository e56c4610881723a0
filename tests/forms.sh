#!/bin/sh
# forms.sh - bfi query's forms beyond a plain threshold, each against an
# exact oracle made here: every ratio (-t 0), --errors (the k-mer lemma),
# --findere, --whole, several snapshots (--snap) and proteins
# (--alphabet protein), on random genomes and proteins.
# Usage: sh tests/forms.sh ./bfi    (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-forms.XXXXXX")
trap 'rm -rf "$T"' EXIT
SUITE=forms
. tests/lib/check.sh # check NAME COMMAND...: the command must succeed

# -t 0: every live set once, with its score, none held included; a removed set left out
every_ok() {
	rm -rf "$T/every" &&
	printf 'a\tx\na\ty\nb\tx\nc\tq\n' | "$BFI" append "$T/every" -q --tsv - &&
	printf 'd\tw\ne\ty\n' | "$BFI" append "$T/every" -q --tsv - &&
	"$BFI" remove -q "$T/every" e &&
	"$BFI" query -t 0 --format tsv "$T/every" 'x y' >"$T/every.tsv" &&
	[ "$(cut -f2 "$T/every.tsv" | sed 1d | sort | tr '\n' ' ')" = "a b c d " ] &&
	grep -q '^x y	a	2	1.0000$' "$T/every.tsv" && grep -q '^x y	b	[12]	' "$T/every.tsv" &&
	"$BFI" query -t 0 --format matrix "$T/every" 'x y' | sed 1d | grep -qv '	-' &&
	"$BFI" query -t 0.9 --format matrix "$T/every" 'x y' | sed 1d | grep -q '	-' &&
	! "$BFI" query -t -0.1 "$T/every" x 2>"$T/e" && grep -q 'must be in \[0, 1\]' "$T/e"
}
check "query -t 0: every live set with its score, 0 included, removed sets left out; matrix cells below T are -" every_ok
# --errors E: reads of 0 to 4 errors (substitutions, insertions, deletions) cut from random
# genomes; each read's "needed" is its terms less E x k (0 at most), and its source answers
errors_ok() {
	rm -rf "$T/eg" && mkdir "$T/eg" &&
	python3 - "$T/eg" <<'PY' || return 1
import random, sys
d = sys.argv[1]
r = random.Random(11)
gs = ["".join(r.choice("ACGT") for _ in range(8000)) for _ in range(6)]
for i, g in enumerate(gs):
    open(f"{d}/g{i}.fa", "w").write(f">g{i}\n{g}\n")
with open(f"{d}/reads.fa", "w") as f:
    for i in range(60):
        src, e = r.randrange(6), i % 5
        at = r.randrange(8000 - 160)
        s = list(gs[src][at:at + 150])
        for _ in range(e):
            p, kind = r.randrange(1, len(s) - 1), r.randrange(3)
            if kind == 0:
                s[p] = "ACGT"[("ACGT".index(s[p]) + r.randrange(1, 4)) % 4]
            elif kind == 1:
                s.insert(p, r.choice("ACGT"))
            else:
                del s[p]
        f.write(f">r{i}_g{src}_e{e}\n{''.join(s)}\n")
PY
	"$BFI" build -q -o "$T/eg/snap" --input fasta --kmer 21 "$T/eg"/g*.fa &&
	"$BFI" query --json --fasta "$T/eg/reads.fa" --errors 4 "$T/eg/snap" >"$T/eg/out" &&
	python3 -c 'import json, sys
n = 0
for l in open(sys.argv[1]):
    o = json.loads(l)
    src = o["query"].split("_")[1]
    assert o["needed"] == max(o["terms"] - 4 * 21, 0), o
    assert abs(o["threshold"] - (o["needed"] / o["terms"])) < 6e-5, o
    assert src in o["matches"], o
    n += 1
assert n == 60, n' "$T/eg/out" &&
	"$BFI" query --format tsv --fasta "$T/eg/reads.fa" --errors 1 "$T/eg/snap" | head -n 1 |
		grep -q '^#query	set	score	ratio	needed$' &&
	! "$BFI" query --fasta "$T/eg/reads.fa" --errors 1 -t 0.5 "$T/eg/snap" 2>"$T/e" && grep -q 'does not combine with --threshold' "$T/e" &&
	! "$BFI" query --keys --errors 1 "$T/eg/snap" ACGT 2>"$T/e" && grep -q 'take k-mer queries' "$T/e" &&
	! "$BFI" query --errors x "$T/eg/snap" ACGT 2>"$T/e" && grep -q 'errors must be' "$T/e"
}
check "query --errors E: each read's need is its k-mers less E x K, and every read's source answers" errors_ok
# --findere Z: a read's terms are its distinct (k+Z)-mers; Z 0 is the plain query; every
# error-free read finds its source; the terms of a read of L bases, none repeated, are L - k - Z + 1
findere_ok() {
	[ -d "$T/eg" ] || return 1
	grep -A1 '_e0$' "$T/eg/reads.fa" | grep -v '^--$' >"$T/eg/clean.fa" &&
	"$BFI" query --json --fasta "$T/eg/clean.fa" --findere 0 -t 0.9 "$T/eg/snap" >"$T/eg/z0" &&
	"$BFI" query --json --fasta "$T/eg/clean.fa" -t 0.9 "$T/eg/snap" | cmp -s - "$T/eg/z0" &&
	"$BFI" query --json --fasta "$T/eg/clean.fa" --findere 4 -t 1 --threads 2 "$T/eg/snap" >"$T/eg/z4" &&
	python3 -c 'import json, sys
n = 0
for l in open(sys.argv[1]):
    o = json.loads(l)
    assert o["terms"] == 150 - 21 - 4 + 1, o
    assert o["query"].split("_")[1] in o["matches"], o
    n += 1
assert n == 12, n' "$T/eg/z4" &&
	! "$BFI" query --findere 2 --keys "$T/eg/snap" ACGT 2>"$T/e" && grep -q 'takes k-mer queries' "$T/e" &&
	! "$BFI" query --findere 2 --errors 1 --fasta "$T/eg/clean.fa" "$T/eg/snap" 2>"$T/e" && grep -q 'not errors' "$T/e" &&
	! "$BFI" query --findere 65 "$T/eg/snap" ACGT 2>"$T/e" && grep -q 'findere must be' "$T/e"
}
check "query --findere Z: (k+Z)-mers as terms, Z 0 the plain query, clean reads find their source" findere_ok
# --whole: a file's records as one query; two genomes' records joined: each holds its share
whole_ok() {
	[ -d "$T/eg" ] || return 1
	cat "$T/eg/g1.fa" "$T/eg/g4.fa" >"$T/eg/two.fa" &&
	"$BFI" query --json --fasta "$T/eg/two.fa" --whole -t 0.45 "$T/eg/snap" >"$T/eg/w" &&
	[ "$(wc -l <"$T/eg/w")" -eq 1 ] &&
	python3 -c 'import json, sys
o = json.loads(open(sys.argv[1]).read())
assert o["query"].endswith("two.fa") and sorted(o["matches"]) == ["g1", "g4"], o
assert o["terms"] == 2 * (8000 - 21 + 1), o   # random genomes: no k-mer twice
assert all(s >= 8000 - 21 + 1 for s in o["scores"]), o' "$T/eg/w" &&
	"$BFI" query --json --fasta "$T/eg/g1.fa" --whole -t 0.9 "$T/eg/snap" | grep -q '"matches": \["g1"\]' &&
	! "$BFI" query --whole --keys "$T/eg/snap" ACGT 2>"$T/e" && grep -q 'takes k-mer queries' "$T/e"
}
check "query --whole: a file's records as one query of all their k-mers, each genome its share" whole_ok
# --snap, repeated: each snapshot's answers are asking it alone, led by its name; stdin read once
several_ok() {
	[ -d "$T/eg" ] || return 1
	"$BFI" build -q -o "$T/eg/half" --input fasta --kmer 21 "$T/eg/g0.fa" "$T/eg/g1.fa" "$T/eg/g2.fa" &&
	grep -v '^>' "$T/eg/reads.fa" >"$T/eg/reads.txt" &&
	for form in "-t 0.5" "-t 0.5 --json" "--errors 2 --format tsv" "-t 0.5 --count"; do
		"$BFI" query $form --snap "$T/eg/snap" --snap "$T/eg/half" <"$T/eg/reads.txt" >"$T/eg/both" || return 1
		for sn in snap half; do
			"$BFI" query $form "$T/eg/$sn" <"$T/eg/reads.txt" >"$T/eg/one.$sn" || return 1
		done
		python3 -c 'import json, sys
both, form, a, b, pa, pb = sys.argv[1:]
got = {pa: [], pb: []}
lines = open(both).read().splitlines()
if "tsv" in form:
    assert lines[0] == "#snapshot\tquery\tset\tscore\tratio\tneeded", lines[0]
    lines = lines[1:]
for l in lines:
    if "json" in form:
        o = json.loads(l)
        got[o.pop("snapshot")].append(json.dumps(o))
    else:
        tag, rest = l.split("\t", 1)
        got[tag].append(rest)
for path, one in ((pa, a), (pb, b)):
    want = open(one).read().splitlines()
    if "tsv" in form:
        want = want[1:]
    if "json" in form:
        want = [json.dumps(json.loads(w)) for w in want]
    assert got[path] == want, (form, path, got[path][:2], want[:2])
assert lines and len(got[pa]) == len(got[pb]) > 10' "$T/eg/both" "$form" "$T/eg/one.snap" "$T/eg/one.half" "$T/eg/snap" "$T/eg/half" || return 1
	done
	"$BFI" query -t 0.5 --snap "$T/eg/snap" --snap "$T/eg/half" --fasta "$T/eg/reads.fa" | cut -f1 | sort | uniq -c |
		awk '{ n[$2] = $1 } END { exit !(n["'"$T"'/eg/snap"] == 60 && n["'"$T"'/eg/half"] == 60) }' &&
	! "$BFI" query --snap "$T/eg/snap" --format matrix -t 0.5 ACGT 2>"$T/e" && grep -q 'ask each alone' "$T/e"
}
check "query --snap A --snap B: each snapshot's answers as asking it alone, led by its name (text, JSON, tsv, --fasta)" several_ok
# --alphabet protein: amino-acid k-mers (k 10 unless given), format 3.4, DNA queries refused
protein_ok() {
	rm -rf "$T/pr" && mkdir "$T/pr" &&
	python3 -c 'import random, sys
r = random.Random(4)
A = "ACDEFGHIKLMNPQRSTVWY"
ps = ["".join(r.choice(A) for _ in range(4000)) for _ in range(5)]
for i, p in enumerate(ps):
    open(f"{sys.argv[1]}/p{i}.faa", "w").write(f">p{i}\n{p}\n")
with open(f"{sys.argv[1]}/q.fa", "w") as f:
    for i in range(40):
        g, at = i % 5, r.randrange(3900)
        f.write(f">q{i}_p{g}\n{ps[g][at:at + 80].lower()}\n")' "$T/pr" &&
	"$BFI" build -q -o "$T/pr/snap" --input fasta --alphabet protein "$T/pr"/p*.faa &&
	"$BFI" inspect "$T/pr/snap" | grep -q '^format *3\.4 ' &&
	"$BFI" inspect "$T/pr/snap" | grep -q '^keys *amino-acid 10-mers' &&
	"$BFI" query --json --fasta "$T/pr/q.fa" -t 1 "$T/pr/snap" >"$T/pr/out" &&
	python3 -c 'import json, sys
n = 0
for l in open(sys.argv[1]):
    o = json.loads(l)
    assert o["terms"] == 80 - 10 + 1 and o["query"].split("_")[1] in o["matches"], o
    n += 1
assert n == 40' "$T/pr/out" &&
	"$BFI" query --alphabet protein -t 1 --json "$T/pr/snap" "$(sed -n 2p "$T/pr/q.fa")" | grep -q '"matches": \["p0"' &&
	"$BFI" query --findere 3 -t 1 --json --fasta "$T/pr/q.fa" "$T/pr/snap" | grep -c '"terms": 68, "matches": \["p' | grep -qx 40 &&
	! "$BFI" query --kmer 10 "$T/pr/snap" ACGTACGTACGT 2>"$T/e" && grep -q 'protein 10-mers' "$T/e" &&
	! "$BFI" query --alphabet dna "$T/pr/snap" ACGTACGTACGT 2>"$T/e" && grep -q 'protein 10-mers' "$T/e" &&
	! "$BFI" query --alphabet protein "$T/eg/snap" MKVLAAGG 2>"$T/e" && grep -q 'DNA 21-mers' "$T/e" &&
	! "$BFI" build -q -o "$T/pr/x" --alphabet protein "$T/pr" 2>"$T/e" && grep -q 'needs --input fasta' "$T/e"
}
check "build --alphabet protein: amino-acid 10-mers, format 3.4, every query finds its protein; DNA and protein queries refused across" protein_ok
exit 0
