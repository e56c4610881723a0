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
	# its files in tour/ alone: nothing written beside the source
	[ "$(ls -A "$T/run" | tr '\n' ' ')" = "tests tour " ] ||
		{ echo "the tour wrote into the source root: $(ls -A "$T/run" | tr '\n' ' ')"; return 1; }
}
check "the README's tour runs as written, in tour/ alone, and prints what it shows" run

# the quick start: its blocks as typed, from a copy of the source root's view
# (./bfi and tests/), with a PATH that holds no bfi; each command's output
# must not be empty where it shows one
quick() {
	mkdir -p "$T/qs" && ln -s "$BFI" "$T/qs/bfi" && ln -s "$ROOT/tests" "$T/qs/tests" || return 1
	python3 - "$ROOT/README.md" >"$T/qs.sh" <<'EOF'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"^## Quick start\n(.*?)^\*\*bfi\*\* is", text, re.S | re.M)
blocks = re.findall(r"^```sh\n(.*?)^```", m.group(1), re.S | re.M)
print("set -e")
for b in blocks:
    for line in b.strip().split("\n"):
        print(line)
print(f"echo 'the quick start ran: {len(blocks)} blocks'")
EOF
	[ "$(grep -c . "$T/qs.sh")" -gt 10 ] || { echo "no quick start found in README.md"; return 1; }
	(cd "$T/qs" && PATH=/usr/local/sbin:/usr/sbin:/sbin:/usr/bin:/bin timeout 300 sh "$T/qs.sh") >"$T/qs.log" 2>&1
	st=$?
	[ "$st" -eq 0 ] || { tail -15 "$T/qs.log"; return 1; }
	# visible, non-empty results: the reads' genomes, the words' sets, the server's answer
	grep -q '^r[0-9]*	g[123]	' "$T/qs.log" && grep -q '^compression	.*zstd' "$T/qs.log" &&
		grep -q '"matches": \[' "$T/qs.log" && ! command -v bfi >/dev/null 2>&1 ||
		{ cat "$T/qs.log"; return 1; }
	tail -1 "$T/qs.log"
}
check "the README's quick start runs as typed from the source root, with no bfi on PATH, and shows answers" quick

# the server's and the module's examples, in tour/ after the tour, as the
# README shows them: every curl answered 200 with what it names, and the
# Python block run on this build's library
blocks() {
	[ -d "$T/run/tour" ] || { echo "the tour did not run"; return 1; }
	python3 - "$ROOT/README.md" "$T" <<'EOF' || return 1
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
for head, lang, out in (("Serving over HTTP", "sh", "serve.sh"), ("Python", "python", "readme.py")):
    m = re.search(r"^## " + head + r"\n(.*?)^## ", text, re.S | re.M)
    b = re.search(r"^```" + lang + r"\n(.*?)^```", m.group(1), re.S | re.M)
    open(f"{sys.argv[2]}/{out}", "w").write(b.group(1))
EOF
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	# each curl fails on an HTTP error and ends its answer with a newline
	# and the server (the block's one job) stops when the block ends or fails
	{ echo "trap 'kill \$! 2>/dev/null; wait' EXIT"
	  sed -e "s/127\.0\.0\.1:8080/127.0.0.1:$port/g" -e 's/^curl /curl -sSf /' \
		-e 's/^\(curl .*\)$/\1; echo/' "$T/serve.sh"; } >"$T/serve1.sh"
	(cd "$T/run/tour" && PATH="$T/bin:$PATH" timeout 60 sh -e "$T/serve1.sh") >"$T/serve.log" \
		2>"$T/serve.err" || { cat "$T/serve.err" "$T/serve.log"; return 1; }
	n=$(grep -c '^curl ' "$T/serve.sh")
	[ "$n" -ge 8 ] && [ "$(grep -c '"matches"' "$T/serve.log")" -ge 4 ] &&
		grep -q '"count"' "$T/serve.log" && grep -q '"snapshots"' "$T/serve.log" &&
		grep -q '^# TYPE' "$T/serve.log" || { echo "the server's answers:"; cat "$T/serve.log"; return 1; }
	# the module's block on this build's library (preloading ASan's runtime for a sanitized one)
	pre=
	if ldd "$ROOT/libbfi.so" 2>/dev/null | grep -q libasan; then
		pre=$(${CC:-cc} -print-file-name=libasan.so)
	fi
	(cd "$T/run/tour" && BFI_LIBRARY="$ROOT/libbfi.so" PYTHONPATH="$ROOT/tools/python" \
		PYTHONDONTWRITEBYTECODE=1 LD_PRELOAD=$pre \
		ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 timeout 120 python3 "$T/readme.py") ||
		return 1
	echo "the server's $n requests and the module's block ran"
}
check "the README's server and Python examples run in tour/ and answer" blocks
[ "$fails" -eq 0 ]
