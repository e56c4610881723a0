"""serve_clients.py - reads a second through bfi serve from C clients at
once, each a process of its own (threads of one would share Python's
lock and be the bottleneck) posting batches of PER reads at threshold 0.8
on its own keep-alive connection for SECONDS seconds (127.0.0.1 only).
One request is answered on one of the server's threads; many clients use
many.
Usage: python3 tests/bench/serve_clients.py PORT NAME READS.fa C PER SECONDS
(with bfi serve --listen 127.0.0.1:PORT NAME=SNAP running)"""
import http.client
import json
import multiprocessing
import sys
import time

port, name, fasta = int(sys.argv[1]), sys.argv[2], sys.argv[3]
clients, per, secs = int(sys.argv[4]), int(sys.argv[5]), min(float(sys.argv[6]), 60.0)
reads = [l.strip() for l in open(fasta) if l.strip() and not l.startswith(">")]
if len(reads) < 2 * per:
    sys.exit(f"serve_clients: {fasta} holds {len(reads)} reads, fewer than 2 x {per}")
# the bodies made before the clock starts: the clients' own work is sending them
bodies = [json.dumps({"sequences": [{"seq": s} for s in reads[i:i + per]], "threshold": 0.8})
          for i in range(0, len(reads) - per + 1, per)]


def run(c, out):
    """Client c: the reads it had answered, or an HTTP status as a string."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    i, n, end = c, 0, time.monotonic() + secs
    while time.monotonic() < end:
        conn.request("POST", f"/v1/{name}/query", bodies[i % len(bodies)],
                     {"Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        if r.status != 200:
            out.put(f"HTTP {r.status}")
            return
        n += per
        i += clients
    out.put(n)


if __name__ == "__main__":
    out = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=run, args=(c, out)) for c in range(clients)]
    t0 = time.monotonic()
    for p in procs:
        p.start()
    got = [out.get(timeout=secs + 60) for _ in procs]
    for p in procs:
        p.join()
    took = time.monotonic() - t0
    bad = [g for g in got if isinstance(g, str)]
    if bad:
        sys.exit(f"serve_clients: {bad[0]}")
    print(f"{clients} client(s), {per} reads a request: {sum(got) / took:.0f} reads/s")
