#!/bin/sh
# trip.sh - how many functions one query walks through, and how many calls
# climb back up a floor: a bfi query of one key, and the same query as one
# bfi serve request (its HTTP callbacks to its reply), in a copy of the tree
# built with -finstrument-functions (tests/bench/hooks/trip.c, trip.py).
# Usage: sh tests/bench/trip.sh [REV]   (from the source root; needs gcc,
# ninja, addr2line): the working tree's files, or commit REV's.
set -u
cd "$(dirname "$0")/../.." || exit 2
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-trip.XXXXXX")
trap 'kill $(cat "$T/pid" 2>/dev/null) 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
mkdir "$T/src"
if [ $# -gt 0 ]; then
	git archive "$1" | (cd "$T/src" && tar xf -) || exit 2
else
	git ls-files -z | xargs -0 tar cf - | (cd "$T/src" && tar xf -) || exit 2
fi
gcc -shared -fPIC -O1 -o "$T/libtriphook.so" tests/bench/hooks/trip.c -ldl || exit 2
# the hook preloaded: glibc's own no-op hook would otherwise take the calls
(cd "$T/src" && ./configure --mode=debug \
	CFLAGS="-finstrument-functions -finstrument-functions-exclude-file-list=/usr/include" \
	>"$T/configure.log" 2>&1 && ninja bfi >"$T/ninja.log" 2>&1) ||
	{ tail -20 "$T/configure.log" "$T/ninja.log"; exit 2; }
BFI=$T/src/bfi
"$BFI" build -q -o "$T/snap" tests/data/demo || exit 2
key=$(head -n 1 "$(find tests/data/demo -type f | sort | head -n 1)")

echo "bfi query SNAP KEY, from cmd_query:"
LD_PRELOAD=$T/libtriphook.so BFI_TRIP=$T/cli.trace "$BFI" query "$T/snap" "$key" >/dev/null || exit 2
python3 tests/bench/trip.py "$T/cli.trace" 0 "$(wc -l <"$T/cli.trace")" "$T/src" cmd_query || exit 2

echo "the same query as one POST /v1/demo/query, from the server's HTTP callbacks:"
LD_PRELOAD=$T/libtriphook.so BFI_TRIP=$T/srv.trace "$BFI" serve --listen 127.0.0.1:0 "demo=$T/snap" 2>"$T/serve.log" &
echo $! >"$T/pid"
port=
for _ in $(seq 100); do
	port=$(sed -n 's|^bfi serve: listening on http://127.0.0.1:\([0-9]*\)/$|\1|p' "$T/serve.log")
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { cat "$T/serve.log"; exit 2; }
ask() {
	python3 - "$port" "$key" <<'PY'
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
c.request("POST", "/v1/demo/query", body=json.dumps({"keys": [sys.argv[2]]}),
          headers={"Content-Type": "application/json"})
r = c.getresponse()
r.read()
sys.exit(r.status != 200)
PY
}
ask || exit 2 # the first request: what a server does once (its threads, its first reply)
sleep 0.2
from=$(wc -l <"$T/srv.trace")
ask || exit 2
sleep 0.2
to=$(wc -l <"$T/srv.trace")
python3 tests/bench/trip.py "$T/srv.trace" "$from" "$to" "$T/src" on_connection on_uri on_arg on_header handler completed
