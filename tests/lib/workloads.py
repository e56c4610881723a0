"""workloads.py DIR - the small workloads of the server's and the Python
module's tests, written into DIR: keys in two versions (keysA.tsv,
keysB.tsv: 300 sets each, a few named with bytes JSON escapes), keys.txt
and exprs.txt to ask of them; 120 text documents (docs/) and texts.txt;
20 random 3-kbp genomes (genomes/) and 100 reads of them with errors
(reads.fa); 80 JSON documents (json/) and paths.txt. Deterministic.
"""
import json, os, random, sys
t = sys.argv[1]
r = random.Random(7)
# a few names that JSON escapes: a quote, a backslash, a control byte, UTF-8
odd = {0: 'se"t', 1: "se\\t", 2: "se\x01t", 3: "s\u00e9t", 4: "s\u2603t"}
for v in "AB":
    with open(f"{t}/keys{v}.tsv", "w") as f:
        for s in range(300):
            for i in range(r.randrange(5, 40)):
                f.write(f"{v.lower()}{odd.get(s, 'set')}{s}\tk{r.randrange(2000)}\n")
with open(f"{t}/keys.txt", "w") as f:
    for i in range(300):
        f.write(f"k{r.randrange(2300)}\n")
with open(f"{t}/exprs.txt", "w") as f:
    for i in range(200):
        a, b, c = (r.randrange(2000) for _ in range(3))
        f.write(r.choice([f"k{a} AND k{b}", f"k{a} OR (k{b} AND k{c})", f"k{a} k{b}", f"(k{a} OR k{b}) AND k{c}"]) + "\n")
words = [f"w{i}" for i in range(400)]
os.makedirs(f"{t}/docs")
for d in range(120):
    with open(f"{t}/docs/doc{d}.txt", "w") as f:
        f.write(" ".join(r.choice(words[:40 + d * 3]) for _ in range(60)) + "\n")
with open(f"{t}/texts.txt", "w") as f:
    for i in range(200):
        f.write(" ".join(r.choice(words) for _ in range(r.randrange(1, 4))) + "\n")
os.makedirs(f"{t}/genomes")
genomes = []
for g in range(20):
    s = "".join(r.choice("ACGT") for _ in range(3000))
    genomes.append(s)
    with open(f"{t}/genomes/g{g}.fa", "w") as f:
        f.write(f">g{g}\n{s}\n")
with open(f"{t}/reads.fa", "w") as f:
    for i in range(100):
        g = r.choice(genomes)
        p = r.randrange(len(g) - 150)
        read = list(g[p:p + 150])
        for m in range(r.randrange(0, 4)):
            read[r.randrange(150)] = r.choice("ACGT")
        f.write(f">r{i}\n{''.join(read)}\n")
os.makedirs(f"{t}/json")
names = ["a", "b", "c", "d", "e"]
def doc(depth):
    if depth == 0:
        return r.randrange(10)
    return {r.choice(names): doc(depth - 1) for _ in range(r.randrange(1, 3))}
for d in range(80):
    with open(f"{t}/json/d{d}.json", "w") as f:
        json.dump(doc(r.randrange(1, 5)), f)
with open(f"{t}/paths.txt", "w") as f:
    for i in range(100):
        n = r.randrange(1, 4)
        p = [r.choice(names) for _ in range(n)]
        if n == 3 and r.random() < 0.5:
            p[1] = "*"  # one or more elements between
        f.write(r.choice(["/", ""]) + "/".join(p) + "\n")
