#!/bin/sh
# python.sh - the Python module (tools/python/bfi) on the library just
# built, every call compared with bfi query and bfi inspect on the same
# snapshots (tests/python_check.py); then pip installs it offline into a
# scratch target and it imports from there.
# Usage: sh tests/python.sh ./bfi   (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-python.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
SUITE=python
. "$(dirname "$0")/lib/check.sh"
ROOT=$(pwd)
# the interpreter the module is checked on: PYTHON, else the system's python3
# (where configure installed python3-numpy and python3-pip), else python3 on PATH
PY=${PYTHON:-}
[ -n "$PY" ] || { [ -x /usr/bin/python3 ] && PY=/usr/bin/python3; } || PY=python3

if ! command -v python3 >/dev/null; then
	echo "FAIL $SUITE: python3 is missing (configure installs it)"
	exit 1
fi
export BFI_LIBRARY="$ROOT/libbfi.so" PYTHONPATH="$ROOT/tools/python" PYTHONDONTWRITEBYTECODE=1
# a sanitized libbfi.so loads into python3 only after the ASan runtime
if ldd "$BFI_LIBRARY" 2>/dev/null | grep -q libasan; then
	LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so)
	export LD_PRELOAD
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0:verify_asan_link_order=0"
fi

python3 "$ROOT/tests/lib/workloads.py" "$T"
"$BFI" build -q -o "$T/K" --layout flat,tree,rambo,plain --tsv "$T/keysA.tsv" &&
	"$BFI" build -q -o "$T/X" --input text "$T/docs" &&
	"$BFI" build -q -o "$T/F" --input fasta --kmer 21 "$T/genomes" &&
	"$BFI" build -q -o "$T/P" --input json "$T/json" &&
	"$BFI" append "$T/C" -q --tsv "$T/keysB.tsv" &&
	"$BFI" append "$T/C" -q --tsv "$T/keysA.tsv" &&
	"$BFI" remove "$T/C" bset7 aset9 "$(printf 'ase\001t2')" >/dev/null &&
	mkdir "$T/junk" && python3 -c 'import sys; open(sys.argv[1], "wb").write(b"junk" * 4096)' "$T/junk/index.bfi" || { echo "FAIL $SUITE: the workloads do not build"; exit 1; }

# one PASS or FAIL line per check of the module
(cd "$T" && $PY "$ROOT/tests/python_check.py" "$BFI" "$T")
st=$?

# pip installs the module from its folder with no network, and it imports from there
pip_install() {
	$PY -m pip --version >/dev/null 2>&1 || { echo "pip is missing"; return 1; }
	PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 $PY -m pip install -q \
		--target "$T/site" "$ROOT/tools/python" || return 1
	(cd "$T" && PYTHONPATH="$T/site" $PY -c '
import bfi, sys
assert bfi.__file__.startswith(sys.argv[1]), bfi.__file__
with bfi.open(sys.argv[2]) as s:
    assert s.query("k1") == s.query(["k1"])[0]
print("pip-installed bfi answers")' "$T/site" "$T/K")
}
check "pip install of tools/python works offline, and the module answers from there" pip_install

# a fresh venv, no network, no ninja install, no BFI_LIBRARY: the wheel brings libbfi.so
venv_wheel() {
	$PY -m venv "$T/venv" >"$T/venv.log" 2>&1 || { cat "$T/venv.log"; return 1; }
	env -u BFI_LIBRARY -u PYTHONPATH PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
		"$T/venv/bin/python" -m pip install -q "$ROOT/tools/python" >"$T/venv.log" 2>&1 ||
		{ cat "$T/venv.log"; return 1; }
	(cd "$T" && env -u BFI_LIBRARY -u PYTHONPATH "$T/venv/bin/python" -c '
import bfi, os, sys
assert bfi.__file__.startswith(sys.argv[1]), bfi.__file__
assert os.path.isfile(os.path.join(os.path.dirname(bfi.__file__), "libbfi.so.3"))
with bfi.open(sys.argv[2]) as s:
    assert s.query("k1") == s.query(["k1"])[0] and s.query("k1")
print("the wheel, in a fresh venv, answers with its own libbfi.so")' "$T/venv" "$T/K")
}
check "pip install ./tools/python into a fresh venv, offline: the wheel carries libbfi.so and answers" venv_wheel
[ "$st" -eq 0 ] && [ "$fails" -eq 0 ]
