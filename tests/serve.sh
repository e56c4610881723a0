#!/bin/sh
# serve.sh - bfi serve on an ephemeral loopback port, against bfi query
# --json and bfi inspect --json on the same snapshots (the oracle: every
# result equal, field for field), for keys, text, sequences, expressions
# and paths; a hot swap during a stream of requests (every answer whole,
# from the old snapshot or the new); each class of bad request and its
# code; limits; and a graceful shutdown that finishes the request in
# flight. Every client is Python's http.client on 127.0.0.1, bounded in time.
# Usage: sh tests/serve.sh ./bfi   (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-serve.XXXXXX")
PIDS=
trap 'for p in $PIDS; do kill -9 $p 2>/dev/null; done; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
SUITE=serve
. "$(dirname "$0")/lib/check.sh"
KEEP=${KEEP:-}
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0"

# the workloads (tests/lib/workloads.py): keys in two versions (for the swap), text, genomes, JSON
python3 "$(dirname "$0")/lib/workloads.py" "$T"

"$BFI" build -q -o "$T/K" --tsv "$T/keysA.tsv" &&
	"$BFI" build -q -o "$T/X" --input text "$T/docs" &&
	"$BFI" build -q -o "$T/F" --input fasta --kmer 21 "$T/genomes" &&
	"$BFI" build -q -o "$T/P" --input json "$T/json" &&
	"$BFI" append "$T/C" -q --tsv "$T/keysB.tsv" || { echo "FAIL $SUITE: the workloads do not build"; exit 1; }

# start NAME ARGS...: a server in the background; its port in $T/NAME.port, its pid in $T/NAME.pid
start() {
	n=$1
	shift
	"$BFI" serve --listen 127.0.0.1:0 "$@" 2>"$T/$n.log" &
	echo $! >"$T/$n.pid"
	PIDS="$PIDS $!"
	i=0
	while [ $i -lt 200 ]; do
		port=$(sed -n 's|^bfi serve: listening on http://127.0.0.1:\([0-9]*\)/$|\1|p' "$T/$n.log")
		if [ -n "$port" ] && python3 "$T/h.py" "$port" health 2>/dev/null; then
			echo "$port" >"$T/$n.port"
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
	echo "the server did not start: $(cat "$T/$n.log")"
	return 1
}

# the client: h.py PORT COMMAND ARGS...
cat >"$T/h.py" <<'EOF'
import http.client, json, sys, threading, time
port = int(sys.argv[1])
cmd = sys.argv[2]
args = sys.argv[3:]

def conn():
    return http.client.HTTPConnection("127.0.0.1", port, timeout=30)

def call(method, path, body=None, c=None, headers=None):
    c = c or conn()
    h = {"Content-Type": "application/json"} if body is not None else {}
    h.update(headers or {})
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    return r.status, r.read(), r.getheader("Content-Type")

def cli(path):  # bfi query --json lines, parsed
    return [json.loads(l) for l in open(path, encoding="utf-8", errors="surrogateescape")]

def lines(path):
    return [l.rstrip("\n") for l in open(path, encoding="utf-8", errors="surrogateescape")]

def fail(msg):
    print(msg)
    sys.exit(1)

if cmd == "health":
    s, b, _ = call("GET", "/healthz")
    sys.exit(s != 200)

if cmd == "many":  # many QUERIES: several names in one request, each answer its own name's
    qs = lines(args[0])
    body = json.dumps({"queries": qs})
    one = {}
    for name in ("x", "k", "p"):
        s, b, _ = call("POST", f"/v1/{name}/query", body)
        if s != 200:
            fail(f"{name}: {s}")
        one[name] = json.loads(b)
    s, b, _ = call("POST", "/v1/x,k,p/query", body)
    got = json.loads(b) if s == 200 else None
    if got != {"snapshots": [one["x"], one["k"], one["p"]]}:
        fail(f"POST /v1/x,k,p/query: {s} {b[:300]}")
    from urllib.parse import quote
    q = "&".join("q=" + quote(x, safe="") for x in qs[:20])
    s1, b1, _ = call("GET", f"/v1/k/query?{q}")
    s2, b2, _ = call("GET", f"/v1/c/query?{q}")
    s, b, _ = call("GET", f"/v1/k,c/query?{q}")
    if s != 200 or json.loads(b) != {"snapshots": [json.loads(b1), json.loads(b2)]}:
        fail(f"GET /v1/k,c/query: {s} {b[:300]}")
    for path, want in (("/v1/k,nosuch/query", 404), ("/v1/k,k/query", 400), ("/v1/k,x", 404),
                       ("/v1/k,,x/query", 404)):
        s, b, _ = call("GET", path + "?key=a")
        if s != want:
            fail(f"{path}: {s}, want {want}: {b[:200]}")
    print("several names: each answer its name's, in order; bad lists refused")

if cmd == "table":  # table NAME QUERIES FORMAT CLI_OUT [THRESHOLD|JSON]: the body is bfi query --format's
    name, queries, form, want = args[:4]
    body = {"queries": lines(queries), "format": form}
    if len(args) > 4 and args[4].startswith("{"):  # more of the body
        body.update(json.loads(args[4]))
    elif len(args) > 4:
        body["threshold"] = float(args[4])
    s, b, ty = call("POST", f"/v1/{name}/query", json.dumps(body))
    w = open(want, "rb").read()
    if s != 200 or not ty.startswith("text/tab-separated-values") or b != w:
        fail(f"{name} {form}: {s} {ty} {b[:200]!r} against {w[:200]!r}")
    s, b, _ = call("POST", f"/v1/{name},k/query", json.dumps(body))
    if s != 400:
        fail(f"a table of two names: {s}")

if cmd == "whole":  # whole NAME FASTA CLI_JSON THRESHOLD: every record one query, as bfi query --whole
    name, fasta, want, theta = args[:4]
    qs, rec = [], None
    for l in lines(fasta):
        if l.startswith(">"):
            rec = l[1:]
        else:
            qs.append({"id": rec, "seq": l})
    body = {"sequences": qs, "whole": True, "threshold": float(theta)}
    s, b, _ = call("POST", f"/v1/{name}/query", json.dumps(body))
    w = cli(want)
    if s != 200:
        fail(f"whole: {s} {b[:200]}")
    got = json.loads(b)["results"]
    if len(got) != 1 or len(w) != 1 or got[0]["query"] != "whole":
        fail(f"whole: {len(got)} results, want one named whole: {b[:200]}")
    del got[0]["query"], w[0]["query"]
    if got[0] != w[0] or not w[0]["matches"]:
        fail(f"whole: {got[0]} against the CLI's {w[0]}")
    print("whole: one answer, the CLI's")

if cmd == "cors":  # cors ORIGIN|-: the headers a browser needs, only with --cors
    origin = None if args[0] == "-" else args[0]
    c = conn()
    c.request("GET", "/v1/k/query?key=a")
    r = c.getresponse()
    r.read()
    if r.getheader("Access-Control-Allow-Origin") != origin:
        fail(f"GET: Access-Control-Allow-Origin {r.getheader('Access-Control-Allow-Origin')}")
    c.request("OPTIONS", "/v1/k/query", headers={"Origin": origin or "https://x.example",
                                                  "Access-Control-Request-Method": "POST"})
    r = c.getresponse()
    r.read()
    if origin is None:
        if r.status != 405 or r.getheader("Access-Control-Allow-Origin"):
            fail(f"OPTIONS without --cors: {r.status}")
    elif (r.status != 204 or r.getheader("Access-Control-Allow-Origin") != origin or
          "POST" not in (r.getheader("Access-Control-Allow-Methods") or "") or
          "Content-Type" not in (r.getheader("Access-Control-Allow-Headers") or "")):
        fail(f"OPTIONS preflight: {r.status} {r.getheaders()}")

if cmd == "post":  # post NAME KIND QUERIES CLI_JSON [EXTRA_JSON]: results equal the CLI's
    name, kind, queries, want = args[:4]
    extra = json.loads(args[4]) if len(args) > 4 else {}
    if kind == "sequences":
        qs, rec = [], None
        for l in lines(queries):
            if l.startswith(">"):
                rec = l[1:]
            else:
                qs.append({"id": rec, "seq": l})
    else:
        qs = lines(queries)
    body = dict(extra)
    body[kind] = qs
    s, b, ty = call("POST", f"/v1/{name}/query", json.dumps(body))
    if s != 200 or ty != "application/json":
        fail(f"{name} {kind}: {s} {ty} {b[:300]}")
    got = json.loads(b)
    w = cli(want)
    if got["snapshot"] != name or got["results"] != w:
        for i, (x, y) in enumerate(zip(got["results"], w)):
            if x != y:
                fail(f"{name} {kind}: result {i}: {x} against the CLI's {y}")
        fail(f"{name} {kind}: {len(got['results'])} results against the CLI's {len(w)}")
    print(f"{name} {kind}: {len(w)} results equal")

if cmd == "get":  # get NAME KEYS CLI_JSON [ARG [EXTRA]]: GET ARG=K (key=K) in requests of 25 keys
    from urllib.parse import quote
    name, keys, want = args[:3]
    arg = args[3] if len(args) > 3 else "key"
    extra = args[4] if len(args) > 4 else ""
    ks, w, got = lines(keys), cli(want), []
    c = conn()
    for i in range(0, len(ks), 25):
        q = "&".join(f"{arg}=" + quote(k, safe="") for k in ks[i:i + 25]) + extra
        s, b, _ = call("GET", f"/v1/{name}/query?{q}", c=c)
        if s != 200:
            fail(f"GET {name}: {s} {b[:300]}")
        got += json.loads(b)["results"]
    if got != w:
        fail(f"GET {name}: the results differ from the CLI's")

if cmd == "info":  # info NAME CLI_JSON: GET /v1/NAME is bfi inspect --json, its path not said
    name, want = args
    s, b, _ = call("GET", f"/v1/{name}")
    want = json.load(open(want))
    want["path"] = None
    if s != 200 or json.loads(b) != want:
        fail(f"GET /v1/{name}: {s}, not bfi inspect --json's object with a null path")
    s, b, _ = call("GET", "/v1")
    if s != 200 or json.loads(b) != {"snapshots": ["k", "x", "f", "p", "c"]}:
        fail(f"GET /v1: {s} {b}")

if cmd == "metrics":  # metrics: the page names what was asked, in the text format
    s, b, ty = call("GET", "/metrics")
    page = b.decode()
    need = ['bfi_requests_total{endpoint="query",code="200"}', 'bfi_request_errors_total{endpoint="query"}',
            'bfi_request_duration_seconds_bucket{endpoint="query",le="+Inf"}',
            'bfi_queries_total', 'bfi_keys_total', 'bfi_mapped_bytes',
            'bfi_snapshot_generation{snapshot="c"} 1', 'bfi_snapshot_open_time_seconds{snapshot="k"}',
            'bfi_snapshot_mapped_bytes{snapshot="f"}']
    missing = [n for n in need if n not in page]
    if s != 200 or not ty.startswith("text/plain") or missing:
        fail(f"/metrics: {s} {ty}, missing {missing}")
    q = [l for l in page.splitlines() if l.startswith("bfi_queries_total ")]
    if not q or int(q[0].split()[1]) < 900:
        fail(f"/metrics: {q}: fewer queries than were answered")

if cmd == "stream":  # stream NAME KEYS SECONDS WANT_A WANT_B: every answer whole, A's or B's
    name, keys, secs, wa, wb = args
    ks = lines(keys)[:40]
    from urllib.parse import quote
    q = "&".join("key=" + quote(k, safe="") for k in ks)
    a, bb = cli(wa)[:40], cli(wb)[:40]
    seen, gens, errors, n = set(), [], [], [0]
    def run():
        c = conn()
        end = time.time() + float(secs)
        while time.time() < end:
            try:
                s, b, _ = call("GET", f"/v1/{name}/query?{q}", c=c)
            except Exception as e:
                errors.append(repr(e))
                c = conn()
                continue
            n[0] += 1
            if s != 200:
                errors.append(f"{s} {b[:200]}")
                continue
            d = json.loads(b)
            r = d["results"]
            gens.append(d["generation"])
            seen.add("A" if r == a else "B" if r == bb else "?")
    th = [threading.Thread(target=run) for _ in range(4)]
    [x.start() for x in th]
    [x.join() for x in th]
    if errors or "?" in seen or seen != {"A", "B"}:
        fail(f"stream: {n[0]} requests, errors {errors[:3]}, answers seen {seen}")
    print(f"stream: {n[0]} requests, 0 errors, generations {min(gens)}..{max(gens)}, every answer one snapshot's")

if cmd == "bad":  # bad: each class of bad request gets its code
    big = b'{"keys": ["' + b"x" * (int(args[0]) + 10) + b'"]}'
    cases = [
        ("POST", "/v1/k/query", b'{"keys": ["a"', 400, "bad_json"),
        ("POST", "/v1/k/query", b'{"keys": ["a"]} x', 400, "bad_json"),
        ("POST", "/v1/k/query", b'', 400, "bad_json"),
        ("POST", "/v1/k/query", b'{"keys": ["\xff\xfe"]}', 400, "bad_utf8"),
        ("POST", "/v1/k/query", b'[1, 2]', 400, "bad_body"),
        ("POST", "/v1/k/query", b'{"keys": ["a"], "colour": 1}', 400, "unknown_field"),
        ("POST", "/v1/k/query", b'{"keys": ["a"], "text": "b"}', 400, "bad_body"),
        ("POST", "/v1/k/query", b'{"format": "count"}', 400, "no_query"),
        ("POST", "/v1/k/query", b'{"keys": "a"}', 400, "bad_field"),
        ("POST", "/v1/k/query", b'{"keys": ["a"], "limit": 0}', 400, "bad_field"),
        ("POST", "/v1/k/query", b'{"keys": ["a"], "limit": 1.5}', 400, "bad_field"),
        ("POST", "/v1/k/query", b'{"keys": ["a"], "format": "xml"}', 400, "bad_field"),
        ("POST", "/v1/k/query", b'{"keys": ["a"], "layout": "tree"}', 400, "bad_layout"),
        ("POST", "/v1/x/query", b'{"text": "a", "threshold": 1.5}', 400, "bad_field"),
        ("POST", "/v1/k/query", b'{"keys": ["a"], "threshold": 0.5}', 400, "bad_field"),
        ("POST", "/v1/k/query", b'{"expr": "a AND ("}', 400, "bad_query"),
        ("POST", "/v1/k/query", b'{"sequences": [{"id": "r", "seq": "ACGT"}]}', 400, "no_kmers"),
        ("POST", "/v1/f/query", b'{"queries": ["ACGT"], "errors": 2, "threshold": 0.5}', 400, "bad_field"),
        ("POST", "/v1/f/query", b'{"queries": ["ACGT"], "errors": -1}', 400, "bad_field"),
        ("POST", "/v1/k/query", b'{"keys": ["a"], "errors": 1}', 400, "bad_form"),
        ("GET", "/v1/f/query?q=ACGT&errors=x", None, 400, "bad_field"),
        ("GET", "/v1/f/query?q=ACGT&findere=65", None, 400, "bad_field"),
        ("POST", "/v1/k/query", b'{"keys": ["a"], "findere": 2}', 400, "bad_form"),
        ("POST", "/v1/f/query", b'{"queries": ["ACGT"], "whole": 1}', 400, "bad_field"),
        ("POST", "/v1/k/query", b'{"keys": ["a"], "whole": true}', 400, "bad_form"),
        ("POST", "/v1/f/query", b'{"sequences": [{"id": "r", "sequence": "ACGT"}]}', 400, "bad_field"),
        ("POST", "/v1/f/query", b'{"path": "/a/b"}', 400, "bad_form"),
        ("POST", "/v1/k/query", b'{"keys": [' + b",".join(b'"k"' for _ in range(1001)) + b']}', 413, "too_many_keys"),
        ("GET", "/v1/k/query?" + "&".join("key=k" for _ in range(501)), None, 413, "too_many_keys"),
        ("GET", "/v1/k/query?" + "&".join("key=k" for _ in range(1001)), None, 414, "uri_too_long"),
        ("POST", "/v1/k/query", big, 413, "body_too_large"),
        ("GET", "/v1/k/query", None, 400, "no_query"),
        ("GET", "/v1/k/query?key=a&colour=red", None, 400, "unknown_field"),
        ("GET", "/v1/k/query?key=a&limit=x", None, 400, "bad_field"),
        ("GET", "/v1/nosuch/query?key=a", None, 404, "not_found"),
        ("GET", "/v1/k/nosuch", None, 404, "not_found"),
        ("GET", "/elsewhere", None, 404, "not_found"),
        ("DELETE", "/v1/k/query", None, 405, "method_not_allowed"),
        ("POST", "/v1/k", b'{}', 405, "method_not_allowed"),
        ("PUT", "/healthz", b'{}', 405, "method_not_allowed"),
    ]
    for m, p, body, code, what in cases:
        s, b, ty = call(m, p, body)
        try:
            d = json.loads(b)
        except ValueError:
            fail(f"{m} {p[:60]} {(body or b'')[:40]}: {s}, not JSON: {b[:200]}")
        if s != code or d.get("code") != what or not d.get("error") or ty != "application/json":
            fail(f"{m} {p[:60]} {(body or b'')[:40]}: {s} {b[:200]}, want {code} {what}")
    # in a batch, the query that does not parse is named
    s, b, _ = call("POST", "/v1/k/query", json.dumps({"expr": ["k1"] * 9 + ["k1 AND ("] + ["k2"] * 5}))
    d = json.loads(b)
    if s != 400 or d["code"] != "bad_query" or not d["error"].startswith("query 9:"):
        fail(f"a bad expression 10th of 15: {s} {b[:200]}")
    # a chunked body over the limit (no Content-Length): read, dropped, refused
    c = conn()
    c.putrequest("POST", "/v1/k/query")
    c.putheader("Transfer-Encoding", "chunked")
    c.endheaders()
    for i in range(4):
        part = b"x" * (int(args[0]) // 2)
        c.send(b"%x\r\n%s\r\n" % (len(part), part))
    c.send(b"0\r\n\r\n")
    r = c.getresponse()
    if r.status != 413 or json.loads(r.read())["code"] != "body_too_large":
        fail(f"chunked body over --max-body: {r.status}")
    # a client that sends half its headers and waits holds no thread: others are answered
    import socket
    slow = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
    for x in slow:
        x.sendall(b"POST /v1/k/query HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"ke")
    t0 = time.time()
    for i in range(20):
        s, b, _ = call("GET", "/v1/k/query?key=k1")
        if s != 200:
            fail(f"with slow clients waiting: {s}")
    if time.time() - t0 > 5:
        fail("with slow clients waiting, 20 requests took more than 5 s")
    [x.close() for x in slow]
    print(f"{len(cases) + 2} bad requests, each its code; slow clients block no one")

if cmd == "timeout":  # a request longer than --timeout: 504
    body = json.dumps({"expr": [" OR ".join(f"k{(i * 7 + j) % 2000}" for j in range(60)) for i in range(4000)]})
    s, b, _ = call("POST", "/v1/k/query", body)
    if s != 504 or json.loads(b)["code"] != "timeout":
        fail(f"a long request: {s} {b[:200]}, want 504 timeout")

if cmd == "inflight":  # inflight KEYS MARK: a long request; MARK made once it is sent
    ks = lines(args[0])
    body = json.dumps({"keys": (ks * 400)[:100000], "format": "count"}).encode()
    c = conn()
    t0 = time.time()
    c.request("POST", "/v1/k/query", body=body, headers={"Content-Type": "application/json"})
    time.sleep(0.02)
    open(args[1], "w").close()
    r = c.getresponse()
    s, b = r.status, r.read()
    if s != 200 or len(json.loads(b)["results"]) != min(100000, len(ks) * 400):
        fail(f"the request in flight at SIGTERM: {s} {b[:100]}")
    print(f"the request in flight at SIGTERM: 200, whole, in {time.time() - t0:.2f} s")
EOF

start main k="$T/K" x="$T/X" f="$T/F" p="$T/P" c="$T/C" || { echo "FAIL $SUITE: no server"; exit 1; }
PORT=$(cat "$T/main.port")
H() { python3 "$T/h.py" "$PORT" "$@"; }

answers() {
	"$BFI" query --json --keys "$T/K" <"$T/keys.txt" >"$T/k.want" &&
		H post k keys "$T/keys.txt" "$T/k.want" || return 1
	"$BFI" query --json --keys --count "$T/K" <"$T/keys.txt" >"$T/kc.want" &&
		H post k keys "$T/keys.txt" "$T/kc.want" '{"format": "count"}' || return 1
	"$BFI" query --json --keys --ordinals --limit 3 "$T/K" <"$T/keys.txt" >"$T/ko.want" &&
		H post k keys "$T/keys.txt" "$T/ko.want" '{"format": "ordinals", "limit": 3}' || return 1
	H get k "$T/keys.txt" "$T/k.want" || return 1
	"$BFI" query --json -e "$T/K" <"$T/exprs.txt" >"$T/e.want" &&
		H post k expr "$T/exprs.txt" "$T/e.want" || return 1
	"$BFI" query --json "$T/X" <"$T/texts.txt" >"$T/x.want" &&
		H post x text "$T/texts.txt" "$T/x.want" || return 1
	"$BFI" query --json -t 0.5 "$T/X" <"$T/texts.txt" >"$T/xt.want" &&
		H post x text "$T/texts.txt" "$T/xt.want" '{"threshold": 0.5}' || return 1
	"$BFI" query --json --fasta "$T/reads.fa" -t 0.8 "$T/F" >"$T/f.want" &&
		H post f sequences "$T/reads.fa" "$T/f.want" '{"threshold": 0.8}' || return 1
	"$BFI" query --json "$T/P" <"$T/paths.txt" >"$T/p.want" &&
		H post p path "$T/paths.txt" "$T/p.want" || return 1
	"$BFI" query --json --keys "$T/C" <"$T/keys.txt" >"$T/c.want" &&
		H post c keys "$T/keys.txt" "$T/c.want" || return 1
	# the answers are not empty: the comparison means something
	[ "$(grep -c '"matches": \["' "$T/k.want")" -gt 100 ] && [ "$(grep -c '"matches": \["' "$T/f.want")" -gt 50 ]
}
check "keys, expressions, text, sequences and paths answer as bfi query --json, field for field" answers

# "queries" and q=Q: formed by the snapshot's key rules, as bfi query forms them given no options
formed() {
	grep -v '^>' "$T/reads.fa" >"$T/reads.txt" || return 1
	for c in "x texts" "f reads" "p paths" "k keys"; do
		set -- $c
		N=$(echo "$1" | tr a-z A-Z)
		"$BFI" query --json "$T/$N" <"$T/$2.txt" >"$T/q$1.want" &&
			H post "$1" queries "$T/$2.txt" "$T/q$1.want" &&
			H get "$1" "$T/$2.txt" "$T/q$1.want" q || return 1
		[ "$(grep -c '"matches": \["' "$T/q$1.want")" -gt 10 ] || { echo "$1: few answers"; return 1; }
	done
	"$BFI" query --json -t 0.8 "$T/F" <"$T/reads.txt" >"$T/qft.want" &&
		H post f queries "$T/reads.txt" "$T/qft.want" '{"threshold": 0.8}' &&
		H get f "$T/reads.txt" "$T/qft.want" q '&threshold=0.8'
}
check "queries with no options are formed as bfi query forms them: text, k-mers, paths, keys" formed

several() {
	H many "$T/keys.txt"
}
tables() {
	"$BFI" query --format tsv -t 0.8 "$T/F" <"$T/reads.txt" >"$T/ft.tsv" &&
		H table f "$T/reads.txt" tsv "$T/ft.tsv" 0.8 &&
		"$BFI" query --format matrix -t 0.8 "$T/F" <"$T/reads.txt" >"$T/ft.m" &&
		H table f "$T/reads.txt" matrix "$T/ft.m" 0.8 &&
		"$BFI" query --format matrix --keys "$T/K" <"$T/keys.txt" >"$T/kt.m" &&
		H table k "$T/keys.txt" matrix "$T/kt.m" && [ "$(wc -l <"$T/kt.m")" -gt 10 ] &&
		# below the threshold a cell is "-", not a false 0; at threshold 0 every cell is a ratio
		grep -q '	-' "$T/ft.m" &&
		"$BFI" query --format matrix -t 0 "$T/F" <"$T/reads.txt" >"$T/f0.m" &&
		H table f "$T/reads.txt" matrix "$T/f0.m" 0 && ! grep -q '	-' "$T/f0.m" &&
		"$BFI" query --format tsv -t 0 "$T/F" <"$T/reads.txt" >"$T/f0.tsv" &&
		H table f "$T/reads.txt" tsv "$T/f0.tsv" 0 && grep -q '	0	0.0000$' "$T/f0.tsv"
}
check "\"format\": \"tsv\" and \"matrix\": the body is bfi query --format's table, threshold 0 every ratio" tables
# "errors": each read's threshold by the k-mer lemma, as bfi query --errors gives it
errors() {
	"$BFI" query --json --fasta "$T/reads.fa" --errors 2 "$T/F" >"$T/fe.want" &&
		grep -q '"needed": ' "$T/fe.want" &&
		H post f sequences "$T/reads.fa" "$T/fe.want" '{"errors": 2}' &&
		"$BFI" query --json --errors 2 "$T/F" <"$T/reads.txt" >"$T/qfe.want" &&
		H post f queries "$T/reads.txt" "$T/qfe.want" '{"errors": 2}' &&
		H get f "$T/reads.txt" "$T/qfe.want" q '&errors=2' &&
		"$BFI" query --format tsv --errors 2 "$T/F" <"$T/reads.txt" >"$T/fe.tsv" &&
		head -n 1 "$T/fe.tsv" | grep -q 'needed$' &&
		H table f "$T/reads.txt" tsv "$T/fe.tsv" '{"errors": 2}'
}
check "\"errors\" (and errors=): each read's threshold by the k-mer lemma, as bfi query --errors" errors
# "findere": a read's (k+z)-mers, as bfi query --findere answers them
findere() {
	"$BFI" query --json --fasta "$T/reads.fa" --findere 3 -t 0.6 "$T/F" >"$T/fz.want" &&
		H post f sequences "$T/reads.fa" "$T/fz.want" '{"findere": 3, "threshold": 0.6}' &&
		"$BFI" query --json --findere 3 -t 0.6 "$T/F" <"$T/reads.txt" >"$T/qfz.want" &&
		H get f "$T/reads.txt" "$T/qfz.want" q '&findere=3&threshold=0.6' &&
		[ "$(grep -c '"matches": \["' "$T/fz.want")" -gt 20 ]
}
check "\"findere\" (and findere=): a read's (k+z)-mers, as bfi query --findere" findere
whole() {
	"$BFI" query --json --fasta "$T/reads.fa" --whole -t 0.01 "$T/F" >"$T/fw.want" &&
		H whole f "$T/reads.fa" "$T/fw.want" 0.01
}
check "\"whole\": true: every sequence of the request one query, as bfi query --whole" whole
check "several names in one request (/v1/x,k,p/query): each name's answer, in order" several
cors() {
	H cors - || return 1
	start cors k="$T/K" --cors https://bfi.example || return 1
	python3 "$T/h.py" "$(cat "$T/cors.port")" cors https://bfi.example
}
check "--cors ORIGIN: replies name it, a preflight gets 204 and the methods; without it, neither" cors

# a snapshot of proteins: "sequences" are split into amino-acid k-mers, as bfi query splits them
proteins() {
	mkdir -p "$T/prot" &&
	python3 -c 'import random, sys
r = random.Random(9)
A = "ACDEFGHIKLMNPQRSTVWY"
ps = ["".join(r.choice(A) for _ in range(3000)) for _ in range(4)]
for i, p in enumerate(ps):
    open(f"{sys.argv[1]}/p{i}.faa", "w").write(f">p{i}\n{p}\n")
with open(f"{sys.argv[1]}/q.fa", "w") as f:
    for i in range(30):
        g = r.randrange(4)
        at = r.randrange(2900)
        f.write(f">q{i}\n{ps[g][at:at + 60]}\n")' "$T/prot" &&
	"$BFI" build -q -o "$T/PR" --input fasta --alphabet protein "$T/prot"/p*.faa &&
	"$BFI" query --json --fasta "$T/prot/q.fa" -t 0.9 "$T/PR" >"$T/pr.want" &&
	[ "$(grep -c '"matches": \["' "$T/pr.want")" -eq 30 ] &&
	start prot pr="$T/PR" || return 1
	python3 "$T/h.py" "$(cat "$T/prot.port")" post pr sequences "$T/prot/q.fa" "$T/pr.want" '{"threshold": 0.9}'
}
check "a snapshot of proteins: \"sequences\" are amino-acid k-mers, as bfi query --fasta answers" proteins

infos() {
	"$BFI" inspect --json "$T/K" >"$T/ki.want" && H info k "$T/ki.want" && H health && H metrics
}
check "GET /v1/NAME is bfi inspect --json; /v1, /healthz and /metrics answer" infos

# the swap: A and B published in turn under K while 4 clients stream requests
swap() {
	"$BFI" query --json --keys "$T/K" <"$T/keys.txt" >"$T/a.want" || return 1
	"$BFI" build -q -o "$T/KB" --tsv "$T/keysB.tsv" && "$BFI" query --json --keys "$T/KB" <"$T/keys.txt" >"$T/b.want" || return 1
	H stream k "$T/keys.txt" 4 "$T/a.want" "$T/b.want" >"$T/stream.out" &
	client=$!
	i=0
	while [ $i -lt 6 ]; do
		sleep 0.4
		if [ $((i % 2)) -eq 0 ]; then
			"$BFI" build -q -o "$T/K" --tsv "$T/keysB.tsv" || return 1
		else
			"$BFI" build -q -o "$T/K" --tsv "$T/keysA.tsv" || return 1
		fi
		i=$((i + 1))
	done
	wait $client || { cat "$T/stream.out"; return 1; }
	cat "$T/stream.out"
	# the last published is served, and the log says each swap
	sleep 0.5
	H post k keys "$T/keys.txt" "$T/a.want" >/dev/null &&
		[ "$(grep -c '^bfi serve: k: .*generation' "$T/main.log")" -ge 5 ]
}
check "snapshots republished under a stream of requests: every answer 200 and one snapshot's" swap

# a collection's commit is swapped in; a path that fails to open keeps the old one serving
collection() {
	"$BFI" append "$T/C" -q --tsv "$T/keysA.tsv" && sleep 0.5 &&
		cat "$T/keysB.tsv" "$T/keysA.tsv" >"$T/ab.tsv" &&
		"$BFI" build -q -o "$T/CA" --tsv "$T/ab.tsv" &&
		"$BFI" query --json --keys "$T/CA" <"$T/keys.txt" | sed 's/"matches": \[\(.*\)\]}/\1/' | tr -d ' ' |
		tr ',' '\n' | sort >"$T/ca.sets" || return 1
	python3 -c 'import json, sys, http.client
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
c.request("POST", "/v1/c/query", json.dumps({"keys": [l.strip() for l in open(sys.argv[2])]}))
d = json.loads(c.getresponse().read())
sys.exit(d["generation"] != 2)' "$PORT" "$T/keys.txt" || { echo "the collection's generation 2 is not served"; return 1; }
	# sets removed, in both segments: the names of those left are served as the CLI prints them
	"$BFI" remove "$T/C" bset7 bset8 'bse"t0' aset9 aset20 "$(printf 'ase\001t2')" && sleep 0.5 &&
		"$BFI" query --json --keys "$T/C" <"$T/keys.txt" >"$T/cr.want" &&
		H post c keys "$T/keys.txt" "$T/cr.want" || return 1
	# a broken snapshot published: logged, and the old one answers on
	mv "$T/X" "$T/X.good" && mkdir "$T/X" && echo junk >"$T/X/index.bfi" && kill -HUP "$(cat "$T/main.pid")" && sleep 0.5
	grep -q '^bfi serve: x: .*the generation before goes on serving' "$T/main.log" || { echo "no log of the failed reopen"; return 1; }
	H post x text "$T/texts.txt" "$T/x.want" >/dev/null || return 1
	rm -rf "$T/X" && mv "$T/X.good" "$T/X"
}
check "a collection's commit is served; a republished path that fails to open leaves the old one serving" collection

bad() {
	start lim --max-body 65536 --max-keys 500 -q k="$T/K" x="$T/X" f="$T/F" p="$T/P" c="$T/C" &&
		python3 "$T/h.py" "$(cat "$T/lim.port")" bad 65536
}
check "every class of bad request gets its 4xx and code; slow clients hold up no one" bad

timeouts() {
	start slow --timeout 0.002 -q k="$T/K" && python3 "$T/h.py" "$(cat "$T/slow.port")" timeout
}
check "a request longer than --timeout gets 504" timeouts

# SIGTERM with a request in flight: it is answered whole, then the server exits 0
shutdown() {
	pid=$(cat "$T/main.pid")
	H inflight "$T/keys.txt" "$T/sent" >"$T/inflight.out" &
	client=$!
	i=0
	while [ ! -e "$T/sent" ] && [ $i -lt 300 ]; do
		sleep 0.02
		i=$((i + 1))
	done
	kill -TERM "$pid"
	wait $client || { cat "$T/inflight.out"; return 1; }
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	wait "$pid"
	rc=$?
	cat "$T/inflight.out"
	# the signal came while the request ran: the log says stopping before the request's line
	stop=$(grep -n "stopping" "$T/main.log" | cut -d: -f1)
	done_at=$(grep -n "POST /v1/k/query 200" "$T/main.log" | tail -1 | cut -d: -f1)
	[ $rc -eq 0 ] && [ -n "$stop" ] && [ -n "$done_at" ] && [ "$stop" -lt "$done_at" ] &&
		! H health 2>/dev/null
}
check "SIGTERM: the request in flight is answered whole, then exit 0" shutdown

helps() { "$BFI" serve --help | grep -q -- --max-body && ! "$BFI" serve 2>/dev/null && ! "$BFI" serve k=/nonexistent 2>/dev/null; }
check "serve has --help, and refuses no NAME=PATH or a path it cannot open" helps
exit $((fails > 0))
