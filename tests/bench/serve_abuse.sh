#!/bin/sh
# serve_abuse.sh - the figures of bfi serve's robustness table
# (tests/bench/RESULTS.md, "Robustness"), from the hostile client of
# tests/serve_abuse.sh (tests/lib/abuse.py), on a release build:
#   1. replies capped: 10,000 copies of a key every one of 2,000 sets holds
#      (a 50 KB body) ask for a 169 MB reply;
#   2. memory: the server's RSS after one request, then after an abuse run
#      (three capped replies, six unread replies past --reply-memory, a
#      65,000-term text, 20,000-key GETs, 15 slow senders), and a second
#      later;
#   3. a truncated index.bfi, then catalog.mdb, under the server: 503 for
#      that name while the other serves;
#   4. 15 slow senders against --timeout 2;
#   5. SIGTERM while 5 slow senders hold connections and a query of 65,000
#      terms runs on the plain layout (which would take most of a minute):
#      seconds to exit, against --timeout 2.
# Usage: sh tests/bench/serve_abuse.sh [WORKDIR]   (after ./configure && ninja)
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-abuse}
BFI=$PWD/bfi
A="python3 $PWD/tests/lib/abuse.py"
rm -rf "$W"
mkdir -p "$W"
PIDS=
trap 'for p in $PIDS; do kill -9 $p 2>/dev/null; done' EXIT

start() { # start NAME ARGS...: the port in $W/NAME.port, the pid in $W/NAME.pid
	n=$1
	shift
	"$BFI" serve --listen 127.0.0.1:0 -q "$@" 2>"$W/$n.log" &
	echo $! >"$W/$n.pid"
	PIDS="$PIDS $!"
	i=0
	until grep -q listening "$W/$n.log"; do
		i=$((i + 1))
		[ $i -lt 400 ] || { cat "$W/$n.log"; exit 1; }
		sleep 0.05
	done
	sed -n 's|^bfi serve: listening on http://127.0.0.1:\([0-9]*\)/$|\1|p' "$W/$n.log" >"$W/$n.port"
}
rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }

awk 'BEGIN { for (s = 0; s < 2000; s++) { print "s" s "\tc"; for (k = 0; k < 5; k++) print "s" s "\tk" s "_" k } }' >"$W/common.tsv"
"$BFI" build -q -o "$W/common.snap" --tsv "$W/common.tsv"
"$BFI" build -q -o "$W/demo.snap" tests/data/demo
mkdir "$W/txt" && echo "hello world foo" >"$W/txt/d1" && "$BFI" build -q -o "$W/tx.snap" --input text "$W/txt"
"$BFI" synth -o "$W/syn" -n 20000 --queries 0
"$BFI" build -q -o "$W/syn.snap" --layout flat,plain --tsv "$W/syn/sets.tsv"

echo "== 1, 2: replies capped, and memory after an abuse run"
start mem --max-reply 64M --reply-memory 16M c="$W/common.snap" t="$W/tx.snap" d="$W/demo.snap"
P=$(cat "$W/mem.port")
PID=$(cat "$W/mem.pid")
# the baseline: after ordinary requests on every worker thread (their first allocations made)
python3 -c 'import json, sys, urllib.request
for i in range(40):
    urllib.request.urlopen("http://127.0.0.1:%s/v1/d/query?key=lmdb&key=zstd" % sys.argv[1]).read()
    urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%s/v1/c/query" % sys.argv[1],
        data=json.dumps({"keys": ["c", "k1_1"] * 20}).encode())).read()' "$P"
base=$(rss_kb "$PID")
$A "$P" cap c "$PID"
$A "$P" held c 6 400
$A "$P" text t
$A "$P" args d
$A "$P" slowloris 15 4 30 >/dev/null 2>&1 || true # held, not cut (--timeout 30): they go when it returns
peak=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$PID/status")
sleep 1
after=$(rss_kb "$PID")
echo "RSS: $base kB after one request; $after kB a second after the abuse run; peak $peak kB"
kill "$PID"
wait "$PID" || true

echo "== 3: files cut short under the server"
for f in index.bfi catalog.mdb; do
	rm -rf "$W/live.snap"
	cp -r "$W/demo.snap" "$W/live.snap"
	start trunc d="$W/live.snap" o="$W/demo.snap"
	$A "$(cat "$W/trunc.port")" truncated d "$W/live.snap" $f o
	kill "$(cat "$W/trunc.pid")"
	wait "$(cat "$W/trunc.pid")" || true
done

echo "== 4: slow senders"
start slow --max-connections 20 --timeout 2 d="$W/demo.snap"
$A "$(cat "$W/slow.port")" slowloris 15 6 2
kill "$(cat "$W/slow.pid")"
wait "$(cat "$W/slow.pid")" || true

echo "== 5: SIGTERM under load"
start term --timeout 2 --threads 2 d="$W/demo.snap" s="$W/syn.snap"
P=$(cat "$W/term.port")
$A "$P" slowloris 5 3 2 >/dev/null 2>&1 &
sl=$!
$A "$P" longquery s &
q=$!
sleep 0.5
t0=$(date +%s.%N)
kill -TERM "$(cat "$W/term.pid")"
rc=0
wait "$(cat "$W/term.pid")" || rc=$?
t1=$(date +%s.%N)
wait $sl $q 2>/dev/null || true
echo "SIGTERM: exit $rc after $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s (--timeout 2)"
