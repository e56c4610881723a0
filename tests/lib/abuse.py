"""abuse.py - a hostile client of bfi serve, for tests/serve_abuse.sh and
tests/bench/serve_abuse.sh: files changed under the server, replies too
large to make or left unread, slow senders, bytes that are not UTF-8, too
many arguments, and malformed HTTP. Only 127.0.0.1; every wait is bounded.

    python3 abuse.py PORT SCENARIO ARGS...

Each scenario prints what it saw, and exits 1 (after saying why) if the
server did not do what bfi serve promises.
"""

import http.client
import json
import os
import socket
import sys
import threading
import time

PORT = int(sys.argv[1])
SCENARIO = sys.argv[2]
ARGS = sys.argv[3:]


def fail(why):
    print("  " + why)
    sys.exit(1)


def call(method, path, body=None, timeout=30, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    h = dict(headers or {})
    if body is not None:
        h.setdefault("Content-Type", "application/json")
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    b = r.read()
    c.close()
    return r.status, b


def get(path, timeout=30):
    return call("GET", path, timeout=timeout)


def post(name, obj, timeout=30):
    body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return call("POST", f"/v1/{name}/query", body, timeout=timeout)


def code(b):
    try:
        return json.loads(b).get("code")
    except ValueError:
        return None


def metric(name):
    s, b = get("/metrics")
    total = 0.0
    for line in b.decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def raw(data, timeout=5):
    """Send bytes, read until the server closes or timeout: what came back."""
    s = socket.create_connection(("127.0.0.1", PORT), timeout=timeout)
    s.sendall(data)
    got = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            got += d
    except socket.timeout:
        pass
    s.close()
    return got


def rss(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


# ---- M1: files changed in place ----

def changed():
    """NAME LIVE_DIR OTHER_SNAP_INDEX OTHER_NAME: a same-size overwrite of
    LIVE_DIR/index.bfi is answered 503, never 200; /healthz says so; the
    other name goes on serving."""
    name, live, donor, other = ARGS
    q = f"/v1/{name}/query?key=lmdb&key=xlmdb"
    s, before = get(q)
    if s != 200:
        fail(f"before: {s} {before[:200]}")
    idx = os.path.join(live, "index.bfi")
    data = open(donor, "rb").read()
    if len(data) != os.path.getsize(idx):
        fail("the donor index is not the same size")
    os.chmod(idx, 0o644)
    with open(idx, "r+b") as f:  # in place, as rsync --inplace or dd conv=notrunc
        f.write(data)
    for i in range(20):
        s, b = get(q)
        if s == 200 and b != before:
            fail(f"a 200 with other answers after the overwrite: {b[:200]}")
        if s != 503 or code(b) != "changed":
            fail(f"after the overwrite: {s} {b[:200]}")
    s, b = get("/healthz")
    if s != 503 or json.loads(b).get("snapshots", {}).get(name) != "changed":
        fail(f"/healthz after the overwrite: {s} {b}")
    s, b = get(f"/v1/{other}/query?key=lmdb")
    if s != 200:
        fail(f"the other name: {s} {b[:200]}")
    print(f"overwritten in place: 20 of 20 requests 503 'changed', /healthz 503; {other} 200")


def truncated():
    """NAME SNAP_DIR FILE OTHER_NAME [FAULTS]: FILE (index.bfi or
    catalog.mdb) of SNAP_DIR cut to 4 KiB under the server, through a hard
    link elsewhere (so that no inotify event on SNAP_DIR comes before the
    next request, and its read of the map faults): its requests get 503,
    the server lives, the other name serves; with FAULTS, at least that
    many SIGBUS were caught, else exit 3: the server's own check of its
    files, on a loaded machine, may find the cut before a request reads
    past it, and the caller tries again."""
    name, snap, fname, other = ARGS[:4]
    want_faults = int(ARGS[4]) if len(ARGS) > 4 else 0
    path = os.path.join(snap, fname)
    faults0 = metric("bfi_snapshot_faults_total")
    os.chmod(path, 0o644)
    link = os.path.join(os.path.dirname(os.path.abspath(snap)), ".abuse-link-" + fname)
    if os.path.exists(link):
        os.unlink(link)
    os.link(path, link)
    os.truncate(link, 4096)
    os.unlink(link)
    statuses = []
    for i in range(5):
        s, b = post(name, {"keys": ["lmdb", "zstd", "gzip", "tmux", "xz", "bash", "curl", "vim"]})
        statuses.append(s)
        if s != 503 or code(b) != "changed":
            fail(f"after truncating {fname}: {s} {b[:200]}")
    s, b = get(f"/v1/{other}/query?key=lmdb")
    if s != 200:
        fail(f"the other name after {fname} was truncated: {s} {b[:200]}")
    faults = metric("bfi_snapshot_faults_total") - faults0
    if faults < want_faults:
        print(f"  {fname} truncated: {faults:.0f} SIGBUS caught, {want_faults} wanted")
        sys.exit(3)
    print(f"{fname} truncated: 5 of 5 requests 503 'changed', {other} 200; faults caught: {faults:.0f}")


def serves():
    """NAME KEY WANT...: KEY answers exactly the sets WANT (after a republish)."""
    name, key = ARGS[0], ARGS[1]
    want = sorted(ARGS[2:])
    for i in range(100):  # the new generation is swapped in a moment after the rename
        s, b = get(f"/v1/{name}/query?key={key}")
        if s == 200:
            break
        time.sleep(0.05)
    if s != 200 or sorted(json.loads(b)["results"][0]["matches"]) != want:
        fail(f"{name} {key}: {s} {b[:200]}, want {want}")
    s, b = get("/healthz")
    if s != 200:
        fail(f"/healthz once republished: {s} {b}")
    print(f"{name} republished: 200, {key} -> {want}; /healthz 200")


# ---- M2: replies ----

def cap():
    """NAME PID: 10,000 copies of a key every set holds (a 50 KB body)
    ask for a reply past --max-reply: 413, and the memory comes back."""
    name, pid = ARGS[0], int(ARGS[1])
    base = rss(pid)
    body = json.dumps({"keys": ["c"] * 10000}).encode()
    peak, took = 0, 0
    for i in range(3):
        t0 = time.time()
        s, err = post(name, body, timeout=60)
        took = max(took, time.time() - t0)
        if s != 413 or code(err) != "reply_too_large":
            fail(f"a reply past --max-reply: {s} {len(err)} bytes {err[:200]}")
        peak = max(peak, rss(pid))
    s, b = post(name, {"keys": ["c"]})
    if s != 200:
        fail(f"a small request after: {s}")
    time.sleep(0.3)
    after = rss(pid)
    print(f"413 reply_too_large for a {len(body)}-byte body, a {len(err)}-byte error in at most "
          f"{took:.2f} s; RSS {base >> 10} kB before, {peak >> 10} kB at most during, "
          f"{after >> 10} kB after")
    if len(ARGS) > 2 and after > base + int(ARGS[2]) * (1 << 20):
        fail(f"RSS stayed {(after - base) >> 20} MiB above its baseline")


def held():
    """NAME N KEYS: N clients POST KEYS copies of a common key and never
    read; with --reply-memory below their replies, the next query gets
    503 busy, and once they go, 200."""
    name, n, k = ARGS[0], int(ARGS[1]), int(ARGS[2])
    body = json.dumps({"keys": ["c"] * k}).encode()
    socks = []
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(b"POST /v1/%s/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % (name.encode(), len(body)) + body)
        socks.append(s)
    held_bytes = 0
    for i in range(100):
        held_bytes = metric("bfi_reply_bytes_held")
        s, b = post(name, {"keys": ["c"]})
        if s == 503 and code(b) == "busy":
            break
        time.sleep(0.05)
    else:
        fail(f"no 503 busy with {n} unread replies holding {held_bytes:.0f} bytes")
    for s in socks:
        s.close()
    for i in range(100):
        s, b = post(name, {"keys": ["c"]})
        if s == 200:
            break
        time.sleep(0.05)
    if s != 200:
        fail(f"after the readers went: {s} {b[:200]}")
    print(f"{n} unread replies held {held_bytes:.0f} bytes: the next query 503 busy; once closed, 200")


# ---- M3: long text queries ----

def text():
    """NAME: 65,000 distinct terms are answered in time, and meanwhile
    /healthz answers; 70,000 are refused at once."""
    name = ARGS[0]
    words = " ".join(f"w{i}" for i in range(65000))
    result = {}

    def big():
        t0 = time.time()
        result["s"], result["b"] = post(name, {"text": words, "threshold": 0.5}, timeout=60)
        result["t"] = time.time() - t0
    th = threading.Thread(target=big)
    th.start()
    time.sleep(0.05)
    t0 = time.time()
    s, b = get("/healthz", timeout=10)
    health_t = time.time() - t0
    th.join(60)
    if th.is_alive() or result.get("s") != 200:
        fail(f"65,000 terms: {result.get('s')} {str(result.get('b'))[:200]}")
    t0 = time.time()
    s, b = post(name, {"text": words + " " + " ".join(f"v{i}" for i in range(5000)),
                       "threshold": 0.5})
    refuse_t = time.time() - t0
    if s != 400 or b"65,536" not in b:
        fail(f"70,000 terms: {s} {b[:200]}")
    print(f"65,000 terms: 200 in {result['t']:.2f} s (/healthz meanwhile in {health_t:.3f} s); "
          f"70,000: 400 in {refuse_t:.2f} s")


def deadline():
    """NAME TIMEOUT: one threshold query of 65,000 terms on the plain
    layout, far longer than --timeout, is cut inside the query: 504 soon
    after TIMEOUT."""
    name, timeout = ARGS[0], float(ARGS[1])
    words = " ".join(f"{i}" for i in range(65000))
    t0 = time.time()
    s, b = post(name, {"text": words, "threshold": 0.5, "layout": "plain"}, timeout=120)
    took = time.time() - t0
    if s != 504 or code(b) != "timeout":
        fail(f"a query past --timeout: {s} {b[:200]} in {took:.2f} s")
    if took > timeout + 2:
        fail(f"504 only after {took:.2f} s, --timeout {timeout}")
    print(f"one query past --timeout {timeout}: 504 after {took:.2f} s")


def longquery():
    """NAME: one threshold query of 65,000 terms on the plain layout (most
    of a minute unless cut), for whatever comes while it runs; prints its
    end."""
    name = ARGS[0]
    body = {"text": " ".join(str(i) for i in range(65000)), "threshold": 0.5, "layout": "plain"}
    try:
        s, b = post(name, body, timeout=60)
        print(f"the query in flight: {s} {code(b) or ''}")
    except (OSError, http.client.HTTPException) as e:
        print(f"the query in flight: {e}")


# ---- M4: slow clients ----

def slowloris():
    """N SECONDS TIMEOUT: N sockets each send a header line a second for
    SECONDS; each is cut once --timeout (TIMEOUT) passes, and a normal
    request meanwhile gets its answer."""
    import select
    n, secs, timeout = int(ARGS[0]), float(ARGS[1]), float(ARGS[2])
    socks = []
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", PORT), timeout=2)
        s.sendall(b"GET /v1 HTTP/1.1\r\nHost: x\r\n")
        socks.append([s, time.time(), None])
    t_end = time.time() + secs
    normal = []

    def watch(until):  # the server's end of a socket, seen as it comes
        while time.time() < until:
            live = [e for e in socks if e[2] is None]
            if not live:
                time.sleep(max(0, until - time.time()))
                return
            r, _, _ = select.select([e[0] for e in live], [], [], max(0, until - time.time()))
            for e in live:
                if e[0] in r:
                    try:
                        e[0].recv(4096)
                    except OSError:
                        pass
                    e[2] = time.time() - e[1]
    while time.time() < t_end:
        for e in socks:
            if e[2] is None:
                try:
                    e[0].sendall(b"X-a: b\r\n")
                except OSError:
                    e[2] = time.time() - e[1]
        t0 = time.time()
        try:
            s, b = get("/v1", timeout=timeout + 3)
            normal.append((s, time.time() - t0))
        except OSError as x:
            normal.append((str(x), time.time() - t0))
        watch(t0 + 1)
    for e in socks:
        e[0].close()
    cut = [e[2] for e in socks if e[2] is not None]
    ok = [t for s, t in normal if s == 200]
    if len(cut) != n:
        fail(f"{n - len(cut)} of {n} slow senders still connected after {secs} s")
    if max(cut) > timeout + 2:
        fail(f"a slow sender was cut only after {max(cut):.1f} s (--timeout {timeout})")
    if not normal or len(ok) < len(normal) - 1:
        fail(f"normal requests during the attack: {normal}")
    print(f"{n} slow senders all cut, after {min(cut):.1f}-{max(cut):.1f} s (--timeout {timeout}); "
          f"{len(ok)} of {len(normal)} normal requests 200, slowest {max(ok):.2f} s")


# ---- M5, L2: bytes ----

def utf8():
    """NAME: the \\udcXX form bfi writes for bytes that are not UTF-8 is
    read back as those bytes; other lone surrogates and bytes that are not
    strict UTF-8 get 400."""
    name = ARGS[0]
    s, b = post(name, b'{"keys": ["\\udcff\\udcfe"]}')
    if s != 200:
        fail(f"\\udcff\\udcfe: {s} {b[:200]}")
    r = json.loads(b)["results"][0]
    if r["matches"] != ["bin"] or r["query"] != "\udcff\udcfe":
        fail(f"\\udcff\\udcfe: {r}")
    s, b2 = get(f"/v1/{name}/query?key=%ff%fe")
    if json.loads(b2)["results"] != json.loads(b)["results"]:
        fail(f"GET %ff%fe and POST \\udcff\\udcfe differ: {b2} {b}")
    bad = [b'{"keys": ["\\ud800"]}', b'{"keys": ["\\udc41"]}', b'{"keys": ["\\ud800x"]}',
           b'{"keys": ["\xc0\xaf"]}', b'{"keys": ["\xed\xa0\x80"]}', b'{"keys": ["\xff"]}']
    for body in bad:
        s, b = post(name, body)
        if s != 400 or code(b) != "bad_utf8":
            fail(f"{body!r}: {s} {b[:200]}")
    s, b = post(name, b'{"keys": ["\\ud83d\\ude00 caf\xc3\xa9"]}')
    if s != 200:
        fail(f"a surrogate pair and UTF-8: {s} {b[:200]}")
    print(f"\\udcff\\udcfe matches as GET %ff%fe does; {len(bad)} bad forms 400 bad_utf8")


def args():
    """NAME: a GET of more keys than the server keeps gets 414, not a
    closed connection: as JSON while the URL fits the connection's 128 KiB
    buffer (libmicrohttpd answers a longer one itself); one within the
    limit gets 200."""
    name = ARGS[0]
    for n, want, json_body in ((800, 200, True), (1000, 414, True), (7000, 414, True),
                               (20000, 414, False), (110000, 414, False)):
        path = f"/v1/{name}/query?" + "&".join(["key=lmdb"] * n)
        try:
            s, b = get(path)
        except (OSError, http.client.HTTPException) as x:
            fail(f"GET of {n} keys: no answer ({x})")
        if s != want or (want == 414 and json_body and code(b) != "uri_too_long"):
            fail(f"GET of {n} keys: {s} {b[:200]}")
    print("GET of 800 keys 200; of 1,000 and 7,000 keys 414 uri_too_long, as JSON; of 20,000 "
          "and 110,000 keys (URLs past the buffer) 414")


def http_raw():
    """NAME: a NUL in the request line, and two Content-Length headers that
    differ, get 400 and the connection closed."""
    name = ARGS[0].encode()
    got = raw(b"GET /v1/" + name + b"/query?key=a\x00b HTTP/1.1\r\nHost: x\r\n\r\n")
    if not got.startswith(b"HTTP/1.1 400") or b"bad_request" not in got:
        fail(f"a NUL in the URL: {got[:200]!r}")
    got = raw(b"POST /v1/" + name + b"/query HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
              b"Content-Length: 50\r\n\r\n{}" + b"x" * 48)
    if not got.startswith(b"HTTP/1.1 400") or got.count(b"HTTP/1.1") != 1:
        fail(f"two Content-Lengths: {got[:300]!r}")
    print("a NUL in the URL: 400; two Content-Lengths that differ: 400, and nothing more read")


SCENARIOS = {"changed": changed, "truncated": truncated, "serves": serves, "cap": cap,
             "held": held, "text": text, "deadline": deadline, "longquery": longquery,
             "slowloris": slowloris, "utf8": utf8, "args": args, "raw": http_raw}
SCENARIOS[SCENARIO]()
