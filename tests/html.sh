#!/bin/sh
# html.sh - bfi inspect --html against bfi inspect --json and --sets: the
# page parses (every element closed), fetches nothing, and every number it
# draws (sections, each set's fill, blocks, histogram, tree levels, RAMBO
# cells) equals the JSON's or the library's; the false positives it
# measures on --probe keys sit beside the Bloom formula, and on sets of one
# size beside RAMBO's Lemma 4.1. With Chromium present, the page is
# rendered headless to a PNG.
# Usage: sh tests/html.sh ./bfi   (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
DATA=$(pwd)/tests/data/demo
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-html.XXXXXX")
trap 'rm -rf "$T"' EXIT
SUITE=html
. "$(dirname "$0")/lib/check.sh"

# the checker: page.py PAGE JSON SETS -> what differs, or nothing
cat >"$T/page.py" <<'EOF'
import json, sys
from html.parser import HTMLParser

page, want, sets_tsv = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
VOID = {"meta", "br", "img", "input", "link", "hr", "line", "rect", "path", "circle"}

class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.els, self.errors, self.script = [], [], [], None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.els.append((tag, a))
        for k, v in attrs:
            if k in ("src", "href") or (v and ("http://" in v or "https://" in v) and k != "data-path"):
                self.errors.append(f"<{tag} {k}={v!r}>: a reference to fetch")
        if tag == "script":
            self.script = "" if a.get("type") == "application/json" else None
            if a.get("type") != "application/json":
                self.errors.append("a script that runs")
        if tag not in VOID:
            self.stack.append(tag)
    def handle_startendtag(self, tag, attrs):
        self.els.append((tag, dict(attrs)))
    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()
    def handle_data(self, d):
        if self.script is not None and self.stack and self.stack[-1] == "script":
            self.script += d

p = P()
text = open(page, encoding="utf-8").read()
p.feed(text)
p.close()
bad = list(p.errors)
if p.stack:
    bad.append(f"unclosed: {p.stack}")
for w in ("@import", "url(", "<link", "<iframe"):
    if w in text:
        bad.append(f"{w} in the page")
if json.loads(p.script or "null") != want:
    bad.append("the embedded JSON is not bfi inspect --json's")

def els(cls):
    return [a for t, a in p.els if a.get("class") == cls]

def close(a, b, tol=1e-5):
    return abs(float(a) - float(b)) <= tol * max(1.0, abs(float(b)))

# bytes by section
got = [(a["data-kind"], int(a["data-bytes"])) for t, a in p.els if "data-kind" in a]
if got != [(s["kind"], s["size"]) for s in want["sections"]]:
    bad.append(f"sections {got}")
# each set's fill, against inspect --sets (ones / m)
fills = {}
for l in open(sets_tsv, encoding="utf-8", errors="surrogateescape"):
    f = l.rstrip("\n").split("\t")
    fills[int(f[0])] = int(f[4]) / int(f[3])
cells = els("set")
if cells:
    got = {int(a["data-ordinal"]): float(a["data-fill"]) for a in cells}
    if set(got) != set(fills) or any(not close(got[o], fills[o], 1e-5) for o in fills):
        bad.append("the heat map's fills are not inspect --sets'")
else:
    bins = els("bin")
    if not bins or any(not close(a["data-fill"], sum(fills[o] for o in range(int(a["data-first"]), int(a["data-last"]) + 1) if o in fills)
                           / max(1, sum(1 for o in range(int(a["data-first"]), int(a["data-last"]) + 1) if o in fills)), 1e-5) for a in bins):
        bad.append("the heat map's bins are not the means of inspect --sets' fills")
# blocks
if "blocks" in want and "collection" not in want:
    got = [(int(a["data-first"]), int(a["data-sets"]), int(a["data-bits"])) for a in els("block")]
    if got != [(b["first_set"], b["sets"], b["bits"]) for b in want["blocks"]]:
        bad.append(f"blocks {got}")
    for a in els("block"):
        f, n = int(a["data-first"]), int(a["data-sets"])
        if not close(a["data-mean-fill"], sum(fills[o] for o in range(f, f + n)) / n, 1e-5):
            bad.append(f"block {a['data-block']}'s mean fill")
# histogram
got = [int(a["data-sets"]) for a in els("bucket")]
if got != [b["sets"] for b in want["fill"]["histogram"]]:
    bad.append(f"histogram {got}")
# tree levels
if "tree" in want:
    got = [(int(a["data-nodes"]), int(a["data-bits"]), float(a["data-fill"]), float(a["data-expected-fpr"]))
           for a in els("level")]
    lv = want["tree"]["levels"]
    if len(got) != len(lv) or any(g[0] != l["nodes"] or g[1] != l["bits"] or not close(g[2], l["fill"], 1e-4)
                                  or not close(g[3], l["expected_fpr"], 1e-4) for g, l in zip(got, lv)):
        bad.append(f"tree levels {got}")
# RAMBO: each drawn repetition's cells and their summary
if "rambo" in want:
    reps = [a for t, a in p.els if a.get("class") == "rambo-rep"]
    cells = els("cell")
    B = want["rambo"]["cells"]
    if not reps or len(cells) != B * len(reps):
        bad.append(f"{len(cells)} RAMBO cells drawn for {len(reps)} repetitions of {B}")
    for i, a in enumerate(reps):
        r = want["rambo"]["repetitions"][int(a["data-rep"])]["sets_per_cell"]
        mine = [int(c["data-sets"]) for c in cells[i * B:(i + 1) * B]]
        if (int(a["data-min"]), int(a["data-max"])) != (r["min"], r["max"]) or \
                (min(mine), max(mine)) != (r["min"], r["max"]) or not close(a["data-mean"], r["mean"], 1e-2):
            bad.append(f"RAMBO repetition {a['data-rep']}: {a} against {r}")
# false positives: measured beside expected
for a in els("probe"):
    lay, n, hits = a["data-layout"], int(a["data-probes"]), int(a["data-hits"])
    m, e = float(a["data-measured"]), float(a["data-expected"])
    if lay != "rambo" and not close(e, want["expected_fpr"]["mean"], 1e-4):
        bad.append(f"{lay}: expected {e} is not the JSON's {want['expected_fpr']['mean']}")
    if lay == "rambo" and not close(a["data-lemma"], want["rambo"]["cell_fpr"] ** want["rambo"]["reps"], 1e-4):
        bad.append(f"rambo: Lemma 4.1 {a['data-lemma']} is not cell_fpr^R")
    print(f"{lay}: {n} absent keys, {hits} false positives: measured {m:.3g}, expected {e:.3g}"
          + (f", Lemma 4.1 {float(a['data-lemma']):.3g}" if lay == "rambo" else ""))
    expected_hits = e * n * want["sets"]
    if expected_hits >= 100 and not 0.8 * expected_hits <= hits <= 1.2 * expected_hits:
        bad.append(f"{lay}: {hits} false positives where {expected_hits:.0f} are expected")
    if lay == "rambo" and len(sys.argv) > 4 and sys.argv[4] == "lemma":
        lh = float(a["data-lemma"]) * n * want["sets"]
        if not 0.75 * lh <= hits <= 1.25 * lh:
            bad.append(f"rambo: {hits} false positives where Lemma 4.1 expects {lh:.0f}")
if len(sys.argv) > 4 and not els("probe"):
    bad.append("no false-positive rows")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF

# page NAME SNAP [ARGS...]: the page, the JSON and the sets of SNAP, checked
page() {
	n=$1
	snap=$2
	shift 2
	"$BFI" inspect --html "$T/$n.html" "$@" "$snap" &&
		"$BFI" inspect --json "$snap" >"$T/$n.json" && "$BFI" inspect --sets "$snap" >"$T/$n.sets" &&
		python3 "$T/page.py" "$T/$n.html" "$T/$n.json" "$T/$n.sets" ${LEMMA:+"$LEMMA"}
}

"$BFI" build -q -o "$T/demo" --layout flat,tree,rambo,plain "$DATA" || { echo "FAIL $SUITE: no snapshot"; exit 1; }
demo() { LEMMA=probes page demo "$T/demo" --probe 20000; }
check "every layout of the demo data: the page parses, fetches nothing, and draws the JSON's numbers; flat and tree measure the Bloom formula's rate" demo

# sets of one size (the Bloofi paper's workload): RAMBO measures Lemma 4.1
lemma() {
	"$BFI" synth -o "$T/syn" -n 600 >/dev/null &&
		"$BFI" build -q -o "$T/syn.snap" --layout rambo --cells 8 --reps 2 --fpr 0.1 --tsv "$T/syn/sets.tsv" &&
		LEMMA=lemma page syn "$T/syn.snap" --probe 20000
}
check "RAMBO on sets of one size: the false positives measured match Lemma 4.1" lemma

# a collection with a removed set (a hole), and more sets than the heat map has cells (bins)
coll() {
	cut -f1 "$T/syn/sets.tsv" | uniq | head -3 >"$T/gone" &&
		"$BFI" append "$T/coll" -q --tsv "$T/syn/sets.tsv" && "$BFI" remove "$T/coll" --from "$T/gone" >/dev/null &&
		page coll "$T/coll" || return 1
	awk 'BEGIN { for (s = 0; s < 5000; s++) printf "s%d\tk%d\n", s, s }' >"$T/many.tsv" &&
		"$BFI" build -q -o "$T/many" --tsv "$T/many.tsv" && page many "$T/many" &&
		grep -q 'class="bin"' "$T/many.html"
}
check "a collection with removed sets, and 5,000 sets shown in bins" coll

refused() {
	"$BFI" inspect --html "$T/x.html" --json "$T/demo" 2>"$T/err"
	[ $? -eq 2 ] && grep -q '^bfi inspect: ' "$T/err" || return 1
	"$BFI" inspect --probe 10 "$T/demo" 2>"$T/err"
	[ $? -eq 2 ] || return 1
	"$BFI" inspect --html "$T/no/such/dir/x.html" "$T/demo" 2>"$T/err"
	[ $? -eq 2 ] && grep -q 'No such file' "$T/err" && [ ! -e "$T/x.html" ]
}
check "--html with --json, --probe without --html, and an unwritable FILE are refused" refused

# headless Chromium renders it to a PNG (when Chromium is installed)
browser=
for b in chromium chromium-browser google-chrome; do
	command -v "$b" >/dev/null && browser=$b && break
done
if [ -n "$browser" ]; then
	render() {
		timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
			--window-size=1000,2400 --screenshot="$T/demo.png" "file://$T/demo.html" >"$T/chromium.log" 2>&1
		[ -s "$T/demo.png" ] || { tail -5 "$T/chromium.log"; return 1; }
		# a PNG, and not blank: the picture's bytes compress to more than an empty page's
		python3 - "$T/demo.png" <<'EOF'
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", b[16:24])
assert w >= 900 and h >= 1000, (w, h)
assert len(b) > 20000, f"{len(b)} bytes: a blank page?"
print(f"{w} x {h} pixels, {len(b)} bytes")
EOF
	}
	check "headless $browser renders the page to a PNG" render
else
	echo "(no Chromium: the page is not rendered; configure installs the chromium package)"
fi
[ "$fails" -eq 0 ]
