#!/bin/sh
# tour.sh - the README's tour, run as it stands: every ```sh block of "A
# five-minute tour", in order, in a scratch directory that sees the source
# tree's tests/, with this build's bfi first on PATH. Each command must
# succeed, and a command followed by "# → TEXT" must print exactly TEXT.
# Usage: sh tests/tour.sh ./bfi   (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
ROOT=$(pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-tour.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
SUITE=tour
. "$(dirname "$0")/lib/check.sh"
mkdir "$T/bin" "$T/run" && ln -s "$BFI" "$T/bin/bfi" && ln -s "$ROOT/tests" "$T/run/tests"

# the tour's blocks as one script: "cmd  # → out" becomes a check of cmd's output
python3 - "$ROOT/README.md" >"$T/tour.sh" <<'EOF'
import re, shlex, sys
text = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"^## A five-minute tour\n(.*?)^## ", text, re.S | re.M)
blocks = re.findall(r"^```sh\n(.*?)^```", m.group(1), re.S | re.M)
print("set -e")
n = 0
for b in blocks:
    lines = b.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        # a command continued over lines runs whole
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i].strip()
        i += 1
        if "# → " in line:
            cmd, want = line.split("# → ", 1)
            n += 1
            print(f"got=$({cmd.strip()})")
            print(f"[ \"$got\" = {shlex.quote(want)} ] || {{ printf 'the tour: %s\\n  printed: %s\\n  README:  %s\\n' "
                  f"{shlex.quote(cmd.strip())} \"$got\" {shlex.quote(want)}; exit 1; }}")
        else:
            print(line)
print(f"echo 'the tour ran: {len(blocks)} blocks, {n} outputs as the README shows them'")
EOF

run() {
	[ "$(grep -c . "$T/tour.sh")" -gt 20 ] || { echo "no tour found in README.md"; return 1; }
	(cd "$T/run" && PATH="$T/bin:$PATH" timeout 900 sh "$T/tour.sh") >"$T/log" 2>&1
	st=$?
	tail -1 "$T/log"
	[ "$st" -eq 0 ] || { tail -15 "$T/log"; return 1; }
}
check "the README's tour runs as written, from the files it makes, and prints what it shows" run
[ "$fails" -eq 0 ]
