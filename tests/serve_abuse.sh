#!/bin/sh
# serve_abuse.sh - bfi serve against a hostile world (tests/lib/abuse.py):
# its files changed in place or truncated under it (503 for that name, the
# others go on, no wrong 200), replies past --max-reply (413) or left
# unread past --reply-memory (503 busy), text queries of 65,000 terms and
# single queries past --timeout, slow senders (cut at --timeout), bytes
# that are not UTF-8 and the \udcXX form read back, more GET arguments than
# it keeps (414), malformed HTTP, and SIGTERM under load. Each case failed
# before its fix (../shared/reviews/hostile-2026-11-27.md, M1-M5, L1-L3, L12).
# Usage: sh tests/serve_abuse.sh ./bfi   (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
DATA=$(pwd)/tests/data/demo
A="python3 $(pwd)/tests/lib/abuse.py"
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-abuse.XXXXXX")
PIDS=
trap 'for p in $PIDS; do kill -9 $p 2>/dev/null; done; rm -rf "$T"' EXIT
SUITE=serve_abuse
. tests/lib/check.sh
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0"

# start NAME ARGS...: a server in the background; its port in $T/NAME.port, pid in $T/NAME.pid
start() {
	n=$1
	shift
	"$BFI" serve --listen 127.0.0.1:0 -q "$@" 2>"$T/$n.log" &
	echo $! >"$T/$n.pid"
	PIDS="$PIDS $!"
	i=0
	while [ $i -lt 400 ]; do
		port=$(sed -n 's|^bfi serve: listening on http://127.0.0.1:\([0-9]*\)/$|\1|p' "$T/$n.log")
		[ -n "$port" ] && { echo "$port" >"$T/$n.port"; return 0; }
		kill -0 "$(cat "$T/$n.pid")" 2>/dev/null || break
		sleep 0.05
		i=$((i + 1))
	done
	echo "the server did not start: $(cat "$T/$n.log")"
	return 1
}
stop() { kill "$(cat "$T/$1.pid")" 2>/dev/null; wait "$(cat "$T/$1.pid")" 2>/dev/null; }
port() { cat "$T/$1.port"; }

# the demo, and a twin of the same sizes with other keys (each line's first letter doubled)
"$BFI" build -q -o "$T/demo.snap" "$DATA" && cp -r "$DATA" "$T/d2" &&
	for f in "$T"/d2/*; do sed -i 's/^\(.\)/x\1/' "$f"; done &&
	"$BFI" build -q -o "$T/d2.snap" "$T/d2" || { echo "FAIL $SUITE: no snapshots"; exit 1; }
[ "$(wc -c <"$T/demo.snap/index.bfi")" -eq "$(wc -c <"$T/d2.snap/index.bfi")" ] ||
	{ echo "FAIL $SUITE: the twin's index is not the demo's size"; exit 1; }
# many sets, and the plain layout, which tests each set's filter for each term:
# one threshold query of 65,000 terms takes most of a minute there
"$BFI" synth -o "$T/syn" -n 20000 --queries 0 &&
	"$BFI" build -q -o "$T/syn.snap" --layout flat,plain --tsv "$T/syn/sets.tsv" ||
	{ echo "FAIL $SUITE: no synthetic snapshot"; exit 1; }

# --- M1: changed in place: 503 for that name, never a wrong 200; republished: back ---
changed_ok() {
	cp -r "$T/demo.snap" "$T/live.snap" && cp -r "$T/demo.snap" "$T/other.snap" &&
		start m1 d="$T/live.snap" o="$T/other.snap" || return 1
	$A "$(port m1)" changed d "$T/live.snap" "$T/d2.snap/index.bfi" o || return 1
	"$BFI" build -q -o "$T/live.snap" "$DATA" && $A "$(port m1)" serves d lmdb liblmdb0 lmdb-utils || return 1
	stop m1
}
check "an index overwritten in place: 503 'changed', never a 200; the other name serves; republished, 200" changed_ok

# A truncated file faults the reader's map (SIGBUS): that request gets 503,
# the server lives. The check after each query, or the main thread's, may
# find the change first; then it is 503 all the same, and for index.bfi,
# whose SIGBUS must be seen caught, the cut is tried again (three times
# at most: a loaded machine may run the main thread's check first).
truncated_ok() {
	for f in index.bfi catalog.mdb; do
		rm -rf "$T/live.snap" "$T/other.snap"
		cp -r "$T/demo.snap" "$T/live.snap" && cp -r "$T/demo.snap" "$T/other.snap" &&
			start m1t d="$T/live.snap" o="$T/other.snap" || return 1
		# index.bfi: the first request reads past its end, and its SIGBUS is caught
		faults=0
		[ $f = index.bfi ] && faults=1
		for try in 1 2 3; do
			$A "$(port m1t)" truncated d "$T/live.snap" $f o $faults
			rc=$?
			[ $rc = 3 ] || [ $rc = 0 ] || return 1
			"$BFI" build -q -o "$T/live.snap" "$DATA" && $A "$(port m1t)" serves d lmdb liblmdb0 lmdb-utils || return 1
			[ $rc = 0 ] && break
			[ $try = 3 ] && { echo "  $f: no SIGBUS caught in three cuts"; return 1; }
		done
		kill -0 "$(cat "$T/m1t.pid")" || { echo "  the server died"; return 1; }
		stop m1t
	done
}
check "index.bfi or catalog.mdb truncated under the server: 503, the server lives, the other name serves" truncated_ok

# --- L12: a health check sees a removed path; paths are opened before listening ---
health_ok() {
	cp -r "$T/demo.snap" "$T/gone.snap" && start l12 g="$T/gone.snap" d="$T/demo.snap" || return 1
	rm -rf "$T/gone.snap"
	python3 -c 'import json, sys, urllib.request, urllib.error
try:
    urllib.request.urlopen("http://127.0.0.1:%s/healthz" % sys.argv[1], timeout=10)
    sys.exit("  /healthz: 200 with a path removed")
except urllib.error.HTTPError as e:
    d = json.loads(e.read())
    if e.code != 503 or d["snapshots"] != {"g": "gone"}:
        sys.exit("  /healthz: %s %s" % (e.code, d))' "$(port l12)" || return 1
	stop l12
	"$BFI" serve --listen 127.0.0.1:0 d="$T/demo.snap" x="$T/nowhere" 2>"$T/err"
	[ $? -eq 2 ] && ! grep -q listening "$T/err" || { echo "  a bad PATH: $(cat "$T/err")"; return 1; }
	for l in 127.0.0.1:+80 "127.0.0.1: 80" 127.0.0.1:080080; do
		"$BFI" serve --listen "$l" d="$T/demo.snap" 2>"$T/err"
		[ $? -eq 2 ] && grep -q "give ADDR:PORT" "$T/err" || { echo "  --listen '$l' taken"; return 1; }
	done
}
check "/healthz says a removed path is gone; a bad PATH fails before listening; ports are digits" health_ok

# --- M2: replies capped, and unread ones bounded ---
awk 'BEGIN { for (s = 0; s < 2000; s++) { print "s" s "\tc"; for (k = 0; k < 5; k++) print "s" s "\tk" s "_" k } }' >"$T/common.tsv"
"$BFI" build -q -o "$T/common.snap" --tsv "$T/common.tsv" || exit 1
cap_ok() {
	start m2 c="$T/common.snap" || return 1
	$A "$(port m2)" cap c "$(cat "$T/m2.pid")" || return 1
	stop m2
	# unread replies: each about 6.4 MB, of which the socket buffers take a few
	start m2h --max-reply 8M --reply-memory 8M c="$T/common.snap" || return 1
	$A "$(port m2h)" held c 6 400 || return 1
	stop m2h
}
check "a reply past --max-reply gets 413; unread replies past --reply-memory make new queries 503" cap_ok

# --- M3: text queries linear in their terms; single queries cut at --timeout ---
text_ok() {
	mkdir -p "$T/txt" && echo "hello world foo" >"$T/txt/d1" &&
		"$BFI" build -q -o "$T/tx.snap" --input text "$T/txt" && start m3 --threads 1 --timeout 2 t="$T/tx.snap" || return 1
	$A "$(port m3)" text t || return 1
	stop m3
	start m3d --timeout 1 s="$T/syn.snap" || return 1
	$A "$(port m3d)" deadline s 1 || return 1
	stop m3d
}
check "65,000 terms answered in time; 70,000 refused at once; a query past --timeout cut with 504" text_ok

# --- M4: slow senders cut at --timeout ---
slow_ok() {
	start m4 --max-connections 20 --timeout 2 d="$T/demo.snap" || return 1
	$A "$(port m4)" slowloris 15 6 2 || return 1
	stop m4
}
check "15 slow senders: each cut at --timeout, while other requests are answered" slow_ok

# --- M5, L1, L2, L3 ---
bytes_ok() {
	printf 'bin\t\377\376\n' >"$T/bin.tsv" && "$BFI" build -q -o "$T/bin.snap" --tsv "$T/bin.tsv" &&
		start m5 b="$T/bin.snap" d="$T/demo.snap" || return 1
	$A "$(port m5)" utf8 b && $A "$(port m5)" args d && $A "$(port m5)" raw d || return 1
	python3 -c 'import json, sys, urllib.request
d = json.load(urllib.request.urlopen("http://127.0.0.1:%s/v1/d" % sys.argv[1], timeout=10))
if d["path"] is not None or sys.argv[2] in json.dumps(d):
    sys.exit("  GET /v1/d tells the path")' "$(port m5)" "$T" || return 1
	stop m5
}
check "\\udcXX read back as its byte; bad UTF-8 400; 414 for too many arguments; NUL, two lengths 400; no path" bytes_ok

# --- SIGTERM under load: out within --timeout and a second ---
sigterm_ok() {
	start term --timeout 2 --threads 2 d="$T/demo.snap" s="$T/syn.snap" || return 1
	# slow senders hold connections, and a long query runs, when the signal comes
	$A "$(port term)" slowloris 5 3 2 >/dev/null 2>&1 &
	sl=$!
	$A "$(port term)" longquery s >/dev/null 2>&1 &
	q=$!
	sleep 0.5
	t0=$(date +%s.%N)
	kill -TERM "$(cat "$T/term.pid")"
	wait "$(cat "$T/term.pid")"
	rc=$?
	t1=$(date +%s.%N)
	wait $sl $q 2>/dev/null
	took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	echo "  SIGTERM under load: exit $rc after $took s (--timeout 2)"
	[ "$rc" -eq 0 ] && awk -v t="$took" 'BEGIN { exit !(t < 3.5) }'
}
check "SIGTERM under slow senders and a long query: exit 0 within --timeout and a second" sigterm_ok

echo "serve_abuse: $fails failed"
[ "$fails" -eq 0 ]
