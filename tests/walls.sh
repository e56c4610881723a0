#!/bin/sh
# walls.sh - the source's walls hold: no two files of reader/, writer/,
# format/ or tools/ call each other, directly or around a circle (each
# object's undefined symbols, from nm, against the folder's definitions),
# and no reader object refers to a writer symbol. configure's include
# paths keep reader/ from including writer/ headers; this keeps the calls
# one way, so that a file can be understood from the files below it.
# Usage: sh tests/walls.sh    (from the source root, after ninja; tests/run.sh does this)
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-walls.XXXXXX")
trap 'rm -rf "$T"' EXIT
SUITE=walls
. "$(dirname "$0")/lib/check.sh"

if ! command -v nm >/dev/null || ! command -v python3 >/dev/null; then
	echo "FAIL $SUITE: nm (binutils) and python3 are needed"
	exit 1
fi

# circles DIR: no strongly connected group of two or more objects in build/DIR
circles() {
	python3 - "$1" <<'EOF'
import collections, glob, os, subprocess, sys
d = sys.argv[1]
defs, undef = {}, {}
objs = sorted(glob.glob("build/%s/**/*.o" % d, recursive=True))
if not objs:
    print("no objects in build/%s" % d)
    sys.exit(1)
for o in objs:
    f = os.path.basename(o)[:-2]
    for line in subprocess.run(["nm", o], capture_output=True, text=True).stdout.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDRB":
            defs[p[2]] = f
        elif len(p) == 2 and p[0] == "U":
            undef.setdefault(f, set()).add(p[1])
calls = collections.defaultdict(set)
for f, us in undef.items():
    calls[f] |= {defs[u] for u in us if u in defs and defs[u] != f}
# Tarjan's strongly connected components
index, low, stack, on, found, n = {}, {}, [], set(), [], [0]
def visit(v):
    index[v] = low[v] = n[0]
    n[0] += 1
    stack.append(v)
    on.add(v)
    for w in sorted(calls[v]):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        group = []
        while True:
            w = stack.pop()
            on.discard(w)
            group.append(w)
            if w == v:
                break
        if len(group) > 1:
            found.append(sorted(group))
for v in sorted(calls):
    if v not in index:
        visit(v)
for g in found:
    print("files calling each other: " + ", ".join(x + ".c" for x in g))
sys.exit(1 if found else 0)
EOF
}

# tools/ whole (its rooms may not call each other around a circle either), and each room
for d in reader writer format tools tools/cli tools/answer tools/serve tools/inspect tools/common; do
	check "no circles between the files of $d/" circles "$d"
done

# reader objects use nothing the writer defines
reader_alone() {
	nm -g --defined-only build/writer/*.o | awk 'NF == 3 { print $3 }' | sort -u >"$T/writer"
	bad=$(nm -u build/reader/*.o | awk '{ print $NF }' | sort -u | comm -12 - "$T/writer")
	[ -z "$bad" ] || { echo "reader calls the writer: $bad"; return 1; }
}
check "the reader calls nothing of the writer's" reader_alone
