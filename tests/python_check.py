"""python_check.py - the Python module against bfi query and bfi inspect.

Run by tests/python.sh with the snapshots it builds: every call of the
module is compared with the CLI's answer to the same queries on the same
snapshot (bfi query --json, bfi inspect --sets / --json), and must equal
it exactly. Prints one PASS or FAIL line per check.
Usage: python3 tests/python_check.py BFI DIR
"""
import json
import os
import random
import subprocess
import sys

import bfi

BFI, T = sys.argv[1], sys.argv[2]
failed = 0


def check(name, fn):
    global failed
    try:
        fn()
        print(f"PASS python: {name}")
    except Exception as e:  # a failed check, or the module raising where it should not
        failed += 1
        print(f"FAIL python: {name}")
        print(f"  | {type(e).__name__}: {str(e)[:600]}")


def cli(*args, stdin=None):
    """bfi query --json ARGS, parsed: one object a query."""
    out = subprocess.run([BFI, "query", "--json", *args], input=stdin, capture_output=True,
                         check=True).stdout
    return [json.loads(l) for l in out.decode("utf-8", "surrogateescape").splitlines()]


def lines(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return [l.rstrip("\n") for l in f]


def expect(got, want, what):
    if got != want:
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                raise AssertionError(f"{what}: answer {i}: {g!r} against the CLI's {w!r}")
        raise AssertionError(f"{what}: {len(got)} answers against the CLI's {len(want)}")


def raises(exc, call, what):
    """call() must raise exc (an exception class, or a bfi error name)."""
    try:
        call()
    except bfi.Error as e:
        if isinstance(exc, str) and e.name == exc:
            return
        raise AssertionError(f"{what}: {e.name}, not {exc}")
    except Exception as e:  # noqa: BLE001 (the class is checked here)
        if not isinstance(exc, str) and isinstance(e, exc):
            return
        raise AssertionError(f"{what}: {type(e).__name__}, not {exc}")
    raise AssertionError(f"{what}: no error, {exc} expected")


def ranked(o):
    return list(zip(o["matches"], o["scores"]))


keys = lines(f"{T}/keys.txt")
exprs = lines(f"{T}/exprs.txt")
texts = lines(f"{T}/texts.txt")
paths = lines(f"{T}/paths.txt")
KEYS_IN = "\n".join(keys).encode() + b"\n"


def keys_one():
    want = [o["matches"] for o in cli("--keys", f"{T}/K", stdin=KEYS_IN)]
    with bfi.open(f"{T}/K") as s:
        expect([s.query(k) for k in keys], want, "query(key)")
        assert sum(map(len, want)) > 300, "the answers are nearly empty: the check means little"


def keys_batch():
    want = [o["matches"] for o in cli("--keys", f"{T}/K", stdin=KEYS_IN)]
    wo = [o["matches"] for o in cli("--keys", "--ordinals", f"{T}/K", stdin=KEYS_IN)]
    with bfi.open(f"{T}/K") as s:
        expect(s.query(keys), want, "query(keys)")
        expect(s.query([k.encode() for k in keys]), want, "query(bytes keys)")
        expect(s.query(keys, ordinals=True), wo, "query(keys, ordinals=True)")
        expect([a for _, a in s.iter_query(iter(keys), batch_size=7)], want,
               "iter_query(batch_size=7)")
        for lay in ("flat", "tree", "rambo", "plain"):
            wl = [o["matches"] for o in cli("--keys", "--layout", lay, f"{T}/K", stdin=KEYS_IN)]
            expect(s.query(keys, layout=lay), wl, f"query(keys, layout={lay!r})")


def exprs_all():
    stdin = "\n".join(exprs).encode() + b"\n"
    want = [o["matches"] for o in cli("-e", f"{T}/K", stdin=stdin)]
    want_tree = [o["matches"] for o in cli("-e", "--layout", "tree", f"{T}/K", stdin=stdin)]
    with bfi.open(f"{T}/K") as s:
        expect(s.query_expr(exprs), want, "query_expr")
        expect([s.query_expr(e, layout="tree") for e in exprs], want_tree,
               "query_expr(layout=tree)")


def text_all():
    stdin = "\n".join(texts).encode() + b"\n"
    want = [o["matches"] for o in cli(f"{T}/X", stdin=stdin)]
    want_t = [ranked(o) for o in cli("-t", "0.5", f"{T}/X", stdin=stdin)]
    terms = [o["terms"] for o in cli("-t", "0.5", f"{T}/X", stdin=stdin)]
    with bfi.open(f"{T}/X") as s:
        expect(s.query_text(texts), want, "query_text")
        expect(s.query_text(texts, threshold=0.5), want_t, "query_text(threshold=0.5)")
        expect(s.query_text(texts * 5, threshold=0.5, threads=3), want_t * 5,
               "query_text(threshold=0.5, threads=3)")
        expect(s.query_text(texts * 5, threads=2), want * 5, "query_text(threads=2)")
        expect([s.terms(t) for t in texts], terms, "terms(text)")
        # text with no terms left: nothing matches, with or without a threshold
        none = [ranked(o) for o in cli("-t", "0.5", f"{T}/X", stdin=b"!!! ?\n")]
        expect([s.query_text("!!! ?", threshold=0.5)], none, "query_text(no terms, threshold)")
        expect([s.query_text("!!! ?")], [o["matches"] for o in cli(f"{T}/X", stdin=b"!!! ?\n")],
               "query_text(no terms)")


def sequences():
    recs, rid = [], None
    for l in lines(f"{T}/reads.fa"):
        if l.startswith(">"):
            rid = l[1:]
        else:
            recs.append((rid, l))
    got_cli = cli("--fasta", f"{T}/reads.fa", "-t", "0.8", f"{T}/F")
    want = [ranked(o) for o in got_cli]
    with bfi.open(f"{T}/F") as s:
        expect(s.query_sequences(recs, threshold=0.8), want, "query_sequences")
        # on threads, in chunks of 256: the same answers in the same order
        for t in (0, 2, 5):
            expect(s.query_sequences(recs * 4, threshold=0.8, threads=t), want * 4,
                   f"query_sequences(threads={t})")
        expect([s.query_sequences(q, threshold=0.8) for _, q in recs], want,
               "query_sequences(one)")
        expect([s.terms(sequence=q) for _, q in recs], [o["terms"] for o in got_cli],
               "terms(sequence=)")
        assert sum(1 for w in want if w) > 50, "too few reads found: the check means little"
        # threshold 0: every genome, each with its score, as bfi query -t 0
        every = [ranked(o) for o in cli("--fasta", f"{T}/reads.fa", "-t", "0", f"{T}/F")]
        expect(s.query_sequences(recs, threshold=0), every, "query_sequences(threshold=0)")
        n_sets = len(s.sets())
        assert all(len(a) == n_sets for a in every), "threshold 0 left a set out"
        assert any(sc == 0 for a in every for _, sc in a), "no score 0: the check means little"
        raises("BFI_E_INVALID", lambda: s.query_sequences(recs[0][1], threshold=1.5), "threshold 1.5")
        # errors=E: each read's need by the k-mer lemma, as bfi query --errors E
        got_e = cli("--fasta", f"{T}/reads.fa", "--errors", "2", f"{T}/F")
        expect(s.query_sequences(recs, errors=2, threads=2), [ranked(o) for o in got_e],
               "query_sequences(errors=2)")
        expect([s.query_sequences(q, errors=2) for _, q in recs[:30]],
               [ranked(o) for o in got_e[:30]], "query_sequences(one, errors=2)")
        expect([s.needed(q, errors=2) for _, q in recs], [o["needed"] for o in got_e], "needed()")
        assert any(o["needed"] < o["terms"] for o in got_e), "errors changed no need: the check means little"
        raises(ValueError, lambda: s.query_sequences(recs[0][1], threshold=0.5, errors=1),
               "threshold and errors")
        raises(ValueError, lambda: s.query_sequences(recs[0][1]), "neither threshold nor errors")
        # findere=z: a read's (k+z)-mers, as bfi query --findere z
        got_z = cli("--fasta", f"{T}/reads.fa", "--findere", "3", "-t", "0.6", f"{T}/F")
        expect(s.query_sequences(recs, threshold=0.6, findere=3), [ranked(o) for o in got_z],
               "query_sequences(findere=3)")
        expect([s.query_sequences(q, threshold=0.6, findere=3) for _, q in recs[:20]],
               [ranked(o) for o in got_z[:20]], "query_sequences(one, findere=3)")
        assert sum(1 for o in got_z if o["matches"]) > 20, "findere found too few: the check means little"
        # query_whole: every read one query, as bfi query --whole
        got_w = cli("--fasta", f"{T}/reads.fa", "--whole", "-t", "0.01", f"{T}/F")
        expect([s.query_whole(recs, threshold=0.01)], [ranked(o) for o in got_w], "query_whole")
        assert got_w[0]["matches"], "query_whole found nothing: the check means little"
        # a read shorter than k has no k-mers: nothing matches, as the CLI says
        short = [ranked(o) for o in cli("-t", "0.8", f"{T}/F", stdin=b"ACGTACG\n")]
        expect([s.query_sequences("ACGTACG", threshold=0.8)], short, "query_sequences(shorter than k)")
        # inside a list, between reads that match
        expect(s.query_sequences([recs[0], "ACGTACG", recs[1]], threshold=0.8),
               [want[0], short[0], want[1]], "query_sequences(a short read in a list)")
        # with ordinals, the same sets as the names say
        by_ord = s.query_sequences(recs, threshold=0.8, ordinals=True, threads=2)
        expect([[(s.name(o), sc) for o, sc in a] for a in by_ord], want,
               "query_sequences(ordinals=True)")
        # a list is answered a batch a call: a read that fails fails the
        # call, and the error names that read, on one thread or many
        rnd = random.Random(7)
        big = "".join(rnd.choice("ACGT") for _ in range(70000))
        for t in (1, 3):
            items = [q for _, q in recs[:10]] * 80
            items[700] = big
            try:
                s.query_sequences(items, threshold=0.8, threads=t)
                raise AssertionError("a read of 70,000 distinct k-mers was answered")
            except bfi.Error as e:
                assert e.name == "BFI_E_LIMIT" and "sequence 700:" in str(e), str(e)


def proteins():
    """A snapshot of proteins: query_sequences splits into amino-acid k-mers, as bfi query does."""
    rnd = random.Random(12)
    aa = "ACDEFGHIKLMNPQRSTVWY"
    os.makedirs(f"{T}/prot", exist_ok=True)
    ps = ["".join(rnd.choice(aa) for _ in range(3000)) for _ in range(4)]
    for i, p in enumerate(ps):
        with open(f"{T}/prot/p{i}.faa", "w") as f:
            f.write(f">p{i}\n{p}\n")
    reads = []
    for i in range(30):
        at = rnd.randrange(2900)
        reads.append((f"q{i}", ps[i % 4][at:at + 60]))
    with open(f"{T}/prot/q.fa", "w") as f:
        f.write("".join(f">{i}\n{q}\n" for i, q in reads))
    subprocess.run([BFI, "build", "-q", "-o", f"{T}/PR", "--input", "fasta", "--alphabet",
                    "protein"] + [f"{T}/prot/p{i}.faa" for i in range(4)], check=True)
    want = [ranked(o) for o in cli("--fasta", f"{T}/prot/q.fa", "-t", "0.9", f"{T}/PR")]
    with bfi.open(f"{T}/PR") as s:
        expect(s.query_sequences(reads, threshold=0.9), want, "query_sequences on proteins")
        expect([s.query_sequences(q, threshold=0.9) for _, q in reads], want,
               "query_sequences(one) on proteins")
    assert all(w for w in want), "a protein found nothing: the check means little"


def paths_all():
    want = [o["matches"] for o in cli(f"{T}/P", stdin="\n".join(paths).encode() + b"\n")]
    with bfi.open(f"{T}/P") as s:
        expect(s.query_path(paths), want, "query_path")


def mirrors():
    """The module's ctypes structs (those naming their C struct in _c_) against the C
    compiler's offsetof and sizeof for every field, nested ones included."""
    import ctypes
    import shutil
    import tempfile
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    assert cc, "no C compiler to check the mirrors with"
    rows = []  # (C type, member path, offset, size) as ctypes has them

    def walk(ctype, cls, prefix, base):
        for f in cls._fields_:
            name, ft = f[0], f[1]
            off = base + getattr(cls, name).offset
            if isinstance(ft, type) and issubclass(ft, (ctypes.Structure, ctypes.Union)):
                walk(ctype, ft, prefix + name + ".", off)
            rows.append((ctype, prefix + name, off, ctypes.sizeof(ft)))

    # every module of the package: the mirrors live where they are used
    mods = [m for k, m in sys.modules.items() if k == "bfi" or k.startswith("bfi.")]
    mirrored = list({id(c): c for m in mods for c in vars(m).values()
                     if isinstance(c, type) and hasattr(c, "_c_")}.values())
    assert len(mirrored) >= 8, [c.__name__ for c in mirrored]
    for cls in mirrored:
        rows.append((cls._c_, "", 0, ctypes.sizeof(cls)))
        walk(cls._c_, cls, "", 0)
    src = ["#include <stddef.h>", "#include <stdio.h>", '#include "bfi.h"', '#include "bfi_writer.h"', "int main(void)", "{"]
    for ctype, path, _, _ in rows:
        if path:
            src.append(f'\tprintf("%zu %zu\\n", offsetof({ctype}, {path}), '
                       f'sizeof((({ctype} *)0)->{path}));')
        else:
            src.append(f'\tprintf("0 %zu\\n", sizeof({ctype}));')
    src += ["\treturn 0;", "}"]
    with tempfile.TemporaryDirectory() as d:
        with open(f"{d}/m.c", "w") as f:
            f.write("\n".join(src) + "\n")
        subprocess.run([cc, "-std=c11", f"-I{root}/reader", f"-I{root}/format", f"-I{root}/writer", "-o", f"{d}/m",
                        f"{d}/m.c"], check=True, capture_output=True)
        out = subprocess.run([f"{d}/m"], check=True, capture_output=True).stdout.decode().split("\n")
    for (ctype, path, off, size), line in zip(rows, out):
        want = tuple(int(x) for x in line.split())
        assert (off, size) == want, f"{ctype} {path or '(whole)'}: ctypes {(off, size)}, C {want}"


def joins():
    """bfi.merge and bfi.compact, the library's calls: answers as before the join, notes said,
    refusals named."""
    import shutil
    want = [o["matches"] for o in cli("--keys", f"{T}/C", stdin=KEYS_IN)]
    n, notes = bfi.merge([f"{T}/C"], f"{T}/merged")
    with bfi.open(f"{T}/merged") as s:
        expect(s.query(keys), want, "merge: answers")
        assert n == s.info()["sets"] and n > 10, (n, s.info()["sets"])
    n, notes = bfi.merge([f"{T}/K"], f"{T}/merged_k")
    assert any("plain layout is not kept" in x for x in notes), notes
    try:
        bfi.merge([f"{T}/K", f"{T}/X"], f"{T}/merged_kx")
        raise AssertionError("a merge of keys and text was not refused")
    except bfi.Error as e:
        assert e.name == "BFI_E_JOIN" and "differ in input" in str(e), (e.name, str(e))
    assert not os.path.exists(f"{T}/merged_kx")
    shutil.copytree(f"{T}/C", f"{T}/C2")
    runs, notes = bfi.compact(f"{T}/C2", full=True)
    assert runs == 1 and any("joined into one" in x for x in notes), (runs, notes)
    with bfi.open(f"{T}/C2") as s:
        expect(s.query(keys), want, "compact: answers")
        assert len(s.info()["segments"]) == 1, s.info()["segments"]
    assert bfi.compact(f"{T}/C2", full=True)[0] == 0  # nothing left to do


def building():
    """bfi.build: the snapshots bfi build makes of the same sets, set for set."""
    def sets_of(path):
        out = subprocess.run([BFI, "inspect", "--sets", path], capture_output=True,
                             check=True).stdout.decode("utf-8", "surrogateescape")
        return sorted(l.split("\t", 1)[1] for l in out.splitlines())
    groups = {}
    for l in lines(f"{T}/keysA.tsv"):
        name, key = l.split("\t", 1)
        groups.setdefault(name, []).append(key)
    bfi.build(f"{T}/PYK", groups, layouts=("flat", "tree", "rambo", "plain"))
    assert sets_of(f"{T}/PYK") == sets_of(f"{T}/K"), "sets differ from bfi build's"
    with bfi.open(f"{T}/PYK") as s, bfi.open(f"{T}/K") as k:
        expect(s.query(keys), k.query(keys), "build(sets): answers")
        assert s.info()["layouts"].keys() == k.info()["layouts"].keys()
    bfi.build(f"{T}/PYF", fasta=f"{T}/genomes", kmer=21)
    assert sets_of(f"{T}/PYF") == sets_of(f"{T}/F"), "FASTA sets differ from bfi build's"
    # groups of files and min_count, as --fof and --min-count: a file named
    # twice keeps all its k-mers at 2, one named once only its repeats
    g = [f"{T}/genomes/{f}" for f in sorted(os.listdir(f"{T}/genomes"))][:2]
    with open(f"{T}/fof", "w") as f:
        f.write(f"twice: {g[0]}; {g[0]}\nonce: {g[1]}\n")
    subprocess.run([BFI, "build", "-q", "-o", f"{T}/G", "--input", "fasta", "--kmer", "21",
                    "--min-count", "2", "--fof", f"{T}/fof"], check=True)
    counted = {}
    bfi.build(f"{T}/PYG", groups={"twice": [g[0], g[0]], "once": [g[1]]}, kmer=21, min_count=2,
              counts=counted)
    assert sets_of(f"{T}/PYG") == sets_of(f"{T}/G"), (sets_of(f"{T}/PYG"), sets_of(f"{T}/G"))
    kept = {l.split("\t")[0]: int(l.split("\t")[1]) for l in sets_of(f"{T}/G")}
    whole = {l.split("\t")[0]: int(l.split("\t")[1]) for l in sets_of(f"{T}/F")}
    first = os.path.basename(g[0]).split(".")[0]
    assert kept["twice"] == whole[first] and kept["once"] < kept["twice"], (kept, whole)
    # counts: each set's distinct k-mers seen (the whole genome's) and kept (as inspect --sets)
    second = os.path.basename(g[1]).split(".")[0]
    assert counted == {"twice": (whole[first], whole[first]),
                       "once": (whole[second], kept["once"])}, (counted, whole, kept)
    # and the snapshot records them: Snapshot.sets()' "seen", none without min_count
    with bfi.open(f"{T}/PYG") as s, bfi.open(f"{T}/PYF") as f:
        got = {d["name"]: (d["seen"], d["keys"]) for d in s.sets()}
        assert got == counted, (got, counted)
        assert all("seen" not in d for d in f.sets())
    raises("BFI_E_INVALID", lambda: bfi.build(f"{T}/PYX", {"a": ["k"]}, fpr=2), "fpr 2")
    raises(ValueError, lambda: bfi.build(f"{T}/PYX", {"a": ["k"]}, layouts=("nosuch",)),
           "an unknown layout")
    assert not os.path.exists(f"{T}/PYX")


def matrix():
    """Snapshot.matrix: bfi query --format matrix's table, as names and a NumPy array."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise AssertionError("NumPy is missing (configure installs python3-numpy)")
    reads = [l for l in lines(f"{T}/reads.fa") if not l.startswith(">")]
    for snap, qs, theta in (("F", reads, 0.8), ("F", reads[:40], 0), ("K", keys, None),
                            ("X", texts, 0.5)):
        args = ["--format", "matrix"] + (["-t", str(theta)] if theta is not None else [])
        out = subprocess.run([BFI, "query", *args, f"{T}/{snap}"], input="\n".join(qs).encode() + b"\n",
                             capture_output=True, check=True).stdout.decode("utf-8", "surrogateescape")
        rows = [l.split("\t") for l in out.splitlines()]
        with bfi.open(f"{T}/{snap}") as s:
            names, m = s.matrix(qs, threshold=theta)
        assert names == rows[0][1:], (snap, names[:5], rows[0][1:6])
        assert m.shape == (len(qs), len(names)), (snap, m.shape)
        dashes = 0
        for i, row in enumerate(rows[1:]):
            got = [float(x) for x in m[i]]
            for g, w in zip(got, row[1:]):
                # a set below the threshold: "-" in the CLI, NaN here; else 4 decimals
                if w == "-":
                    assert g != g, (snap, i, got[:8], row[1:9])
                    dashes += 1
                else:
                    assert abs(g - float(w)) <= 6e-5, (snap, i, got[:8], row[1:9])
        assert numpy.nansum(m) > 0, f"{snap}: an empty matrix: the check means little"
        # a term list's cell below the threshold is not a false 0; at threshold 0 each is its ratio
        if snap == "F":
            assert (dashes > 0) == (theta != 0), (snap, theta, dashes)
            assert theta != 0 or ((m > 0) & (m < 0.8)).any(), "no ratio below 0.8: the check means little"


def table():
    """Snapshot.table: bfi query --format tsv's rows, ties by name, unmatched queries kept."""
    reads = [l for l in lines(f"{T}/reads.fa") if not l.startswith(">")]
    for snap, qs, theta in (("F", reads + ["ACGT" * 10], 0.8), ("K", keys + ["no-such-key"], None),
                            ("X", texts, 0.5)):
        args = ["--format", "tsv"] + (["-t", str(theta)] if theta else [])
        out = subprocess.run([BFI, "query", *args, f"{T}/{snap}"], input="\n".join(qs).encode() + b"\n",
                             capture_output=True, check=True).stdout.decode("utf-8", "surrogateescape")
        with bfi.open(f"{T}/{snap}") as s:
            rows = s.table(qs, threshold=theta)
            named = s.table([(f"q{i}", q) for i, q in enumerate(qs[:3])], threshold=theta)
            one = [(f"q{i}",) + r[1:] for i, q in enumerate(qs[:3]) for r in s.table(q, threshold=theta)]
        assert named == one, (snap, named[:3], one[:3])
        text = "".join(f"{q}\t{n or ''}\t{v}\t{r:.4f}\n" for q, n, v, r in rows)
        assert "#query\tset\tscore\tratio\n" + text == out, (snap, text[:300], out[:300])
        assert any(n is None for _, n, _, _ in rows), f"{snap}: no unmatched query: the check means little"
        assert sum(1 for _, n, _, _ in rows if n) >= 3, f"{snap}: too few rows: the check means little"


def client():
    """bfi.Client against a bfi serve of the same snapshots: the local answers, type for type."""
    import re
    import time
    srv = subprocess.Popen([BFI, "serve", "--quiet", "--listen", "127.0.0.1:0", f"k={T}/K",
                            f"x={T}/X", f"f={T}/F", f"p={T}/P"], stderr=subprocess.PIPE)
    try:
        port = None
        for _ in range(200):
            line = srv.stderr.readline().decode()
            m = re.search(r"listening on http://127.0.0.1:(\d+)/", line)
            if m:
                port = int(m.group(1))
                break
        assert port, "the server did not start"
        c = bfi.Client(f"http://127.0.0.1:{port}")
        assert c.names() == ["k", "x", "f", "p"], c.names()
        reads = [l for l in lines(f"{T}/reads.fa") if not l.startswith(">")]
        with bfi.open(f"{T}/K") as s:
            expect(c.open("k").query(keys), s.query(keys), "Client query(keys)")
            expect([c.open("k").query(keys[0])], [s.query(keys[0])], "Client query(one key)")
            expect(c.open("k").query(keys, ordinals=True), s.query(keys, ordinals=True),
                   "Client query(ordinals)")
        with bfi.open(f"{T}/X") as s:
            expect(c.open("x").query(texts), s.query(texts), "Client query(texts)")
            expect(c.open("x").query_text(texts, threshold=0.5),
                   s.query_text(texts, threshold=0.5), "Client query_text(threshold)")
        with bfi.open(f"{T}/F") as s:
            expect(c.open("f").query_sequences(reads, threshold=0.8),
                   s.query_sequences(reads, threshold=0.8), "Client query_sequences")
            expect(c.open("f").query_sequences(reads, errors=2),
                   s.query_sequences(reads, errors=2), "Client query_sequences(errors=2)")
            expect(c.open("f").query_sequences(reads, threshold=0),
                   s.query_sequences(reads, threshold=0), "Client query_sequences(threshold=0)")
            expect(c.open("f").query_sequences(reads, threshold=0.6, findere=3),
                   s.query_sequences(reads, threshold=0.6, findere=3),
                   "Client query_sequences(findere=3)")
            expect(c.open("f").query_whole(reads, threshold=0.01),
                   s.query_whole(reads, threshold=0.01), "Client query_whole")
        with bfi.open(f"{T}/P") as s:
            expect(c.open("p").query_path(paths), s.query_path(paths), "Client query_path")
        # tables: a query twice over, and one that matches nothing, keep their
        # rows apart; the server's ratios have the CLI's 4 decimals
        def rounded(rows):
            return [(q, n, v, round(r, 4)) for q, n, v, r in rows]
        with bfi.open(f"{T}/K") as s:
            qs = keys[:5] + [keys[0], keys[0], "no-such-key"]
            expect(c.open("k").table(qs), s.table(qs), "Client table(keys)")
        with bfi.open(f"{T}/X") as s:
            expect(rounded(c.open("x").table(texts, threshold=0.5)),
                   rounded(s.table(texts, threshold=0.5)), "Client table(texts, threshold)")
        try:
            c.open("nosuch").query("a")
            raise AssertionError("an unknown name answered")
        except bfi.Error as e:
            assert e.name == "not_found" and e.status == 404, (e.name, str(e))
    finally:
        srv.terminate()
        srv.wait(timeout=10)


def formed():
    """query() with no options: each snapshot's queries formed as bfi query forms them."""
    reads = [l for l in lines(f"{T}/reads.fa") if not l.startswith(">")]
    for snap, items in (("X", texts), ("F", reads), ("P", paths)):
        stdin = "\n".join(items).encode() + b"\n"
        want = [o["matches"] for o in cli(f"{T}/{snap}", stdin=stdin)]
        with bfi.open(f"{T}/{snap}") as s:
            expect([s.query(x) for x in items], want, f"query(one) on {snap}")
            expect(s.query(items), want, f"query(many) on {snap}")
        assert sum(1 for w in want if w) >= 2, f"{snap}: too few answers: the check means little"


def collection():
    want = [o["matches"] for o in cli("--keys", f"{T}/C", stdin=KEYS_IN)]
    with bfi.open(f"{T}/C") as s:
        expect(s.query(keys), want, "query(keys) on a collection")
        info = s.info()
        assert len(info["segments"]) == 2 and info["generation"] >= 3, info
        assert [len(x["segments"]) for x in info["layouts"].values()] == [2], info["layouts"]


def info_sets():
    for name in ("K", "X", "F", "P", "C"):
        out = subprocess.run([BFI, "inspect", "--sets", f"{T}/{name}"], capture_output=True,
                             check=True).stdout.decode("utf-8", "surrogateescape")
        want = []
        for l in out.splitlines():
            o, n, k, m, ones, fpr = l.split("\t")
            want.append((int(o), n, int(k), int(m), int(ones)))
        with bfi.open(f"{T}/{name}") as s:
            got = [(x["ordinal"], x["name"], x["keys"], x["bits"], x["bits_set"])
                   for x in s.sets()]
            expect(got, want, f"sets() of {name}")
            for x in s.sets():
                assert abs(x["fill"] - x["bits_set"] / x["bits"]) < 1e-12
            j = json.loads(subprocess.run([BFI, "inspect", "--json", f"{T}/{name}"],
                                          capture_output=True, check=True).stdout)
            i = s.info()
            assert i["sets"] == j["sets"] and i["snapshot_id"] == j["snapshot_id"], (i, j)
            assert sorted(i["layouts"]) == sorted(j["layouts"]), (i["layouts"], j["layouts"])
            assert len(s) == j["sets"]
            if "blocks" in j and "segments" not in i:
                assert i["layouts"]["flat"]["blocks"] == len(j["blocks"])
            for n in (want[0][1], want[-1][1]):
                assert s.name(s.ordinal(n)) == n


def errors():
    for path, code in ((f"{T}/nosuch", "ENOENT"), (f"{T}/junk", "BFI_E_BAD_MAGIC")):
        try:
            bfi.open(path)
        except bfi.Error as e:
            assert e.name == code and e.code < 0 and e.message, (e.name, e.code, e)
        else:
            raise AssertionError(f"{path} opened")
    with bfi.open(f"{T}/K") as s:
        for call, code in ((lambda: s.query_expr("k1 AND ("), "BFI_E_SYNTAX"),
                           (lambda: s.name(10 ** 6), "BFI_E_NOT_FOUND"),
                           (lambda: s.ordinal("no such set"), "BFI_E_NOT_FOUND"),
                           (lambda: s.query_path("/a"), "BFI_E_INVALID"),
                           (lambda: s.query_sequences("ACGT", threshold=0.8), "BFI_E_INVALID")):
            try:
                call()
            except bfi.Error as e:
                assert e.name == code, (e.name, code, e)
            else:
                raise AssertionError(f"no error, {code} expected")
        try:
            s.query(3)
        except TypeError:
            pass
        else:
            raise AssertionError("query(3) did not raise TypeError")
        try:
            s.query("k1", layout="bogus")
        except ValueError:
            pass
        else:
            raise AssertionError("layout='bogus' did not raise ValueError")
    s.close()
    try:
        s.query("k1")
    except ValueError:
        pass
    else:
        raise AssertionError("a closed snapshot answered")
    # the module's table of codes is bfi_error.h's
    import re

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    hdr = open(os.path.join(root, "format", "bfi_error.h")).read()
    codes = {m.group(1): int(m.group(2))
             for m in re.finditer(r"\b(BFI_E_[A-Z_]+) = (-\d+),", hdr)}
    codes.pop("BFI_E_FIRST", None)
    codes.pop("BFI_E_LAST", None)
    assert codes == bfi._CODES, set(codes.items()) ^ set(bfi._CODES.items())
    v, (major, minor) = bfi.version()
    assert v and major >= 3


def close_under_queries():
    """close() while 4 threads query: no crash, no wrong answer; each
    thread's calls after the close raise ValueError."""
    import threading
    import time

    want_one = [o["matches"] for o in cli("--keys", f"{T}/K", stdin=KEYS_IN)]
    batch = keys[:200]
    for run in range(5):
        s = bfi.open(f"{T}/K")
        bad, ended = [], []

        def worker(w):
            try:
                i = 0
                while True:
                    i += 1
                    if w % 2:
                        if s.query(batch) != want_one[:200]:
                            bad.append("a batch")
                    elif s.query(keys[i % len(keys)]) != want_one[i % len(keys)]:
                        bad.append(keys[i % len(keys)])
            except ValueError:
                ended.append(w)
        ts = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
        for t in ts:
            t.start()
        time.sleep(0.3)
        s.close()
        for t in ts:
            t.join(30)
        assert not bad, f"run {run}: wrong answers under close: {bad[:5]}"
        assert sorted(ended) == [0, 1, 2, 3], f"run {run}: threads that did not end: {ended}"
        raises(ValueError, lambda: s.query("k1"), "a closed snapshot")


def key_rules():
    """The library refuses what the CLI refuses: another k, text on k-mers;
    and arguments Python cannot pass whole are refused, not cut."""
    seq = next(l for l in lines(f"{T}/reads.fa") if not l.startswith(">"))
    with bfi.open(f"{T}/F") as s:
        assert s.query_sequences(seq, threshold=0.8, k=21) == s.query_sequences(seq, threshold=0.8)
        raises("BFI_E_KEY_FORM", lambda: s.query_sequences(seq, threshold=0.8, k=31), "k=31")
        raises("BFI_E_KEY_FORM", lambda: s.query_text("hello world"), "text on k-mers")
        raises("BFI_E_KEY_FORM", lambda: s.query_text(["hello world"] * 600, threads=4),
               "text on k-mers, on threads")
        for t in (-1, 1.5, True, "2"):
            raises(ValueError, lambda: s.query_sequences([seq] * 300, threshold=0.8, threads=t),
                   f"threads={t!r}")
        raises("BFI_E_KEY_FORM", lambda: s.query_text("hello world", threshold=0.5),
               "text on k-mers, with a threshold")
        for k in (2 ** 32 + 21, -1, 256, "21"):
            raises(ValueError, lambda: s.query_sequences(seq, threshold=0.8, k=k), f"k={k!r}")
        for key in ("kmer\0junk", b"kmer"):
            raises(ValueError, lambda: s.meta(key), f"meta({key!r})")
        assert s.meta("kmer") == "21"
        for o in (2 ** 32, 2 ** 32 + 1, -1):
            raises("BFI_E_NOT_FOUND", lambda: s.name(o), f"name({o})")
    raises(ValueError, lambda: bfi.open(f"{T}/F\0/etc"), "a path with a NUL")


def numpy_arrays():
    import numpy

    wo = [o["matches"] for o in cli("--keys", "--ordinals", f"{T}/K", stdin=KEYS_IN)]
    with bfi.open(f"{T}/K") as s:
        got = s.query(numpy.array(keys), as_array=True)
        assert all(isinstance(a, numpy.ndarray) and a.dtype == numpy.uint32 for a in got)
        expect([a.tolist() for a in got], wo, "query(numpy array, as_array=True)")

    recs = [l for l in lines(f"{T}/reads.fa") if not l.startswith(">")]
    with bfi.open(f"{T}/F") as s:
        want = s.query_sequences(recs, threshold=0.8, ordinals=True)
        for t in (1, 2):
            got = s.query_sequences(recs, threshold=0.8, as_array=True, threads=t)
            assert all(o.dtype == numpy.uint32 and sc.dtype == numpy.uint32 for o, sc in got)
            expect([list(zip(o.tolist(), sc.tolist())) for o, sc in got], want,
                   f"query_sequences(as_array=True, threads={t})")


def scanned():
    """A snapshot larger than the memory given is scanned, said once as a ScanWarning, and
    answers lists of sequences, keys and texts as the CLI does; a pack of it too, in place."""
    import warnings

    recs = [l for l in lines(f"{T}/reads.fa") if not l.startswith(">")]
    want = [ranked(o) for o in cli("--fasta", f"{T}/reads.fa", "-t", "0.8", f"{T}/F")]
    keys = [l.split("\t")[1] for l in lines(f"{T}/keysA.tsv")][:400] + ["absent-1", "absent-2"]
    want_keys = [o["matches"] for o in cli("--keys", f"{T}/K", stdin="\n".join(keys).encode() + b"\n")]
    subprocess.run([BFI, "pack", "-q", "-o", f"{T}/F.pack", f"{T}/F"], check=True)
    for path in (f"{T}/F", f"{T}/F.pack"):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s = bfi.Snapshot(path, memory=64 << 10)
        said = [x for x in w if issubclass(x.category, bfi.ScanWarning)]
        assert s.scan and len(said) == 1 and "answered in passes over it" in str(said[0].message), \
            [str(x.message) for x in w]
        with s:
            # 64 KiB holds few reads' state: many batches, each a pass
            expect(s.query_sequences(recs, threshold=0.8), want, f"query_sequences, scanned ({path})")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with bfi.Snapshot(f"{T}/K", memory=64 << 10) as s:
            expect(s.query(keys), want_keys, "query(keys), scanned")
        with bfi.Snapshot(f"{T}/K", memory=64 << 10, scan=False) as s:
            assert not s.scan
            expect(s.query(keys), want_keys, "query(keys), scan=False")
        with bfi.Snapshot(f"{T}/K") as s:  # the default: it fits
            assert not s.scan
    assert sum(issubclass(x.category, bfi.ScanWarning) for x in w) == 1, [str(x.message) for x in w]
    lim = bfi.memory_limits()
    assert 0 < lim["usable"] <= lim["physical"] and lim["bound"], lim


check("every ctypes mirror of a C struct matches it, field for field (offsetof, sizeof)", mirrors)
check("a snapshot and a pack larger than memory= are scanned, said once, with the CLI's answers", scanned)
check("query(key) answers as bfi query --json --keys, one by one", keys_one)
check("query(keys) in batches, bytes, ordinals, iter_query and every layout", keys_batch)
check("query_expr answers as bfi query -e", exprs_all)
check("query_text, and with a threshold its ranked scores and terms, as bfi query", text_all)
check("query_sequences at threshold 0.8, 0 (every genome), errors=2, findere=3, and query_whole answer as bfi query --fasta", sequences)
check("query_path answers as bfi query on JSON documents", paths_all)
check("a snapshot of proteins: query_sequences takes amino-acid k-mers, as bfi query --fasta", proteins)
check("query() with no options forms text, k-mer and path queries as bfi query does", formed)
check("a collection with removed sets answers as bfi query", collection)
check("bfi.Client of a bfi serve answers as the local snapshot, type for type", client)
check("Snapshot.matrix is bfi query --format matrix's table, as a NumPy array; below the threshold NaN and '-', at 0 every ratio", matrix)
check("Snapshot.table is bfi query --format tsv's rows, unmatched queries kept", table)
check("bfi.build makes the sets bfi build makes, from a mapping or from FASTA", building)
check("merge and compact through the library: answers kept, notes said, refusals named", joins)
check("sets() is bfi inspect --sets; info() agrees with inspect --json", info_sets)
check("errors carry the library's code and name; the code table is bfi_error.h's", errors)
check("close() while four threads query: no crash, no wrong answer, then ValueError", close_under_queries)
check("another k, text on k-mers, and arguments cut short by C are refused", key_rules)
try:
    import numpy  # noqa: F401 (optional: configure installs python3-numpy for the tests)

    check("NumPy arrays in and out", numpy_arrays)
except ImportError:
    print(f"(NumPy is absent from {sys.executable}: arrays not checked)")
sys.exit(1 if failed else 0)
