#!/bin/sh
# python.sh - keys/s from Python (the bfi module) against the bfi command
# on the same snapshot and keys, alternating, ROUNDS rounds:
#   one key a call:   snap.query(k) for each key   vs  bfi query --keys
#   batches:          snap.query(keys)             vs  bfi query --keys --batch
# each with names and with ordinals (--ordinals / ordinals=True), and,
# with NumPy, batches answered as arrays of ordinals (as_array=True). The
# CLI's figure is its whole process, answers written to /dev/null; the
# module's is its calls, answers kept as Python lists.
# Workload: the synthetic N = 10,000 sets (bfi synth), KEYS present keys
# (default 100,000; a key is in about 100 sets) and as many absent ones.
# Usage: sh tests/bench/python.sh [WORKDIR]    (after ./configure && ninja)
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-python}
BFI=$PWD/bfi
ROUNDS=${ROUNDS:-3}
KEYS=${KEYS:-100000}
PY=${PYTHON:-python3}
export BFI_LIBRARY="$PWD/libbfi.so" PYTHONPATH="$PWD/tools/python"
mkdir -p "$W"
[ -f "$W/syn/sets.tsv" ] || "$BFI" synth -o "$W/syn" -n 10000 >/dev/null
[ -d "$W/snap" ] || "$BFI" build -q -o "$W/snap" --tsv "$W/syn/sets.tsv"
for kind in present absent; do
	head -n "$KEYS" "$W/syn/$kind.txt" >"$W/$kind.k"
done

cli() { # cli KEYFILE ARGS...: keys a second through the whole bfi query process
	f=$1
	shift
	t0=$(date +%s%N)
	"$BFI" query --keys "$@" "$W/snap" <"$f" >/dev/null
	t1=$(date +%s%N)
	echo "$(wc -l <"$f") $t0 $t1" | awk '{ printf "%.0f", $1 / (($3 - $2) / 1e9) }'
}

r=0
while [ "$r" -lt "$ROUNDS" ]; do
	for kind in present absent; do
		f=$W/$kind.k
		"$PY" - "$W/snap" "$f" >"$W/py.out" <<'EOF'
import sys, time
import bfi
snap, path = sys.argv[1], sys.argv[2]
keys = [l.rstrip("\n") for l in open(path)]
with bfi.open(snap) as s:
    s.query(keys[:1000])  # names cached, pages mapped: as the CLI's own first batch
    for label, kw in (("names", {}), ("ordinals", {"ordinals": True})):
        # both keep every answer, as a caller would
        t = time.perf_counter()
        kept = [s.query(k, **kw) for k in keys]
        one = len(keys) / (time.perf_counter() - t)
        del kept
        t = time.perf_counter()
        kept = s.query(keys, **kw)
        batch = len(keys) / (time.perf_counter() - t)
        del kept
        print(label, round(one), round(batch))
    try:  # NumPy arrays of ordinals, when NumPy is there
        import numpy
        t = time.perf_counter()
        s.query(keys, as_array=True)
        print("arrays", round(len(keys) / (time.perf_counter() - t)))
    except ImportError:
        pass
EOF
		for label in names ordinals; do
			flag=
			[ "$label" = ordinals ] && flag=--ordinals
			c1=$(cli "$f" $flag)
			cb=$(cli "$f" $flag --batch)
			set -- $(grep "^$label " "$W/py.out")
			extra=
			[ "$label" = ordinals ] && grep -q '^arrays ' "$W/py.out" &&
				extra="; as NumPy arrays (as_array=True): $(awk '$1 == "arrays" { print $2 }' "$W/py.out") keys/s"
			echo "round $r, $kind keys, $label: one a call: Python $2 keys/s, CLI $c1 ($(echo "$2 $c1" | awk '{ printf "%.2f", $1 / $2 }')x); batches: Python $3 keys/s, CLI $cb ($(echo "$3 $cb" | awk '{ printf "%.2f", $1 / $2 }')x)$extra"
		done
	done
	r=$((r + 1))
done
