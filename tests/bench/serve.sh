#!/bin/sh
# serve.sh - bfi serve under wrk on 127.0.0.1, each figure beside its bound
# measured in the same run:
#   1. single-key GETs (keep-alive): requests/s and p99 latency, rounds
#      alternating with tests/bench/mhd_floor, libmicrohttpd alone
#      answering a fixed 40-byte body (the HTTP layer's own rate);
#   2. POSTs of 1,000 keys: keys/s against bfi bench --batch 1000 in-process,
#      and against libmicrohttpd alone answering as many bytes as the names;
#   3. 150-bp reads at threshold 0.8: reads/s against bfi query --fasta;
#   4. 60 s of GETs while the snapshot is republished every second: non-2xx
#      responses, socket errors, and the server's RSS and mappings of
#      index.bfi before and after.
# On two cores or more, the servers and the in-process runs they are
# compared with are pinned to core 0 and wrk to core 1: each side has one
# core, and the rounds agree far better than when the scheduler mixes
# them. Bounded: each wrk run is DURATION seconds (default 5) on CONNS
# connections (default 16).
# Usage: sh tests/bench/serve.sh [WORKDIR]     (after ./configure && ninja)
#        ROUNDS=3 DURATION=5 SWAP_SECONDS=60 sh tests/bench/serve.sh
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-serve}
BFI=$PWD/bfi
FLOOR=$PWD/build/tests/bench/mhd_floor
ROUNDS=${ROUNDS:-3}
DUR=${DURATION:-5}
CONNS=${CONNS:-16}
THREADS=$(nproc)
SRV= LOAD=
if [ "$THREADS" -ge 2 ] && command -v taskset >/dev/null; then
	SRV="taskset -c 0" LOAD="taskset -c 1"
fi
if ! command -v wrk >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		apt-get install -y -qq --no-install-recommends wrk </dev/null >/dev/null
	else
		echo "serve.sh needs wrk: apt-get install -y wrk" >&2
		exit 2
	fi
fi
[ -x "$FLOOR" ] && [ -x "$BFI" ] || { echo "serve.sh: run ./configure && ninja first" >&2; exit 2; }
mkdir -p "$W"
PIDS=
trap 'for p in $PIDS; do kill $p 2>/dev/null; done' EXIT

# the workloads: the Bloofi paper's synthetic sets (N = 10,000), and 16 genomes
[ -f "$W/syn/sets.tsv" ] || "$BFI" synth -o "$W/syn" -n 10000 >/dev/null
[ -d "$W/snap" ] || "$BFI" build -q -o "$W/snap" --tsv "$W/syn/sets.tsv"
[ -d "$W/snap2" ] || { head -n -1000 "$W/syn/sets.tsv" >"$W/sets2.tsv" && "$BFI" build -q -o "$W/snap2" --tsv "$W/sets2.tsv"; }
head -1000 "$W/syn/present.txt" >"$W/k1000"
KEY=$(head -1 "$W/syn/present.txt")
if [ ! -d "$W/genomes.snap" ]; then
	python3 - "$W" <<'EOF'
import os, random, sys
w = sys.argv[1]
r = random.Random(11)
os.makedirs(f"{w}/genomes", exist_ok=True)
gs = []
for g in range(16):
    s = "".join(r.choice("ACGT") for _ in range(250000))
    gs.append(s)
    open(f"{w}/genomes/g{g}.fa", "w").write(f">g{g}\n{s}\n")
with open(f"{w}/reads.fa", "w") as f:
    for i in range(20000):
        g = r.choice(gs)
        p = r.randrange(len(g) - 150)
        read = list(g[p:p + 150])
        for m in range(r.randrange(0, 3)):
            read[r.randrange(150)] = r.choice("ACGT")
        f.write(f">r{i}\n{''.join(read)}\n")
EOF
	"$BFI" build -q -o "$W/genomes.snap" --input fasta --kmer 31 "$W/genomes"
fi

up() { # up PORT: wait until it answers
	i=0
	until python3 -c "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 0.2)" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "nothing listens on $1" >&2; exit 1; }
		sleep 0.05
	done
}
rate() { awk '/^Requests\/sec/ { print $2 }'; }
# pct A B: A as a percentage of B; also kept in $W/pct.LABEL for med LABEL
pct() { echo "$1 $2" | awk '{ printf "%.0f\n", 100 * $1 / $2 }' | tee -a "$W/pct.$3"; }
# med LABEL: the median of the percentages kept under LABEL, and their range
med() { sort -n "$W/pct.$1" | awk -v l="$1" '{ v[NR] = $1 } END { printf "median %s: %s%% (rounds %s%%..%s%%)\n", l, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR] }'; }
rm -f "$W"/pct.*
p99() { awk '$1 == "99%" { print $2 }'; }

$SRV "$FLOOR" 18181 "$THREADS" &
PIDS="$PIDS $!"
$SRV "$BFI" serve -q --listen 127.0.0.1:18182 --threads "$THREADS" s="$W/snap" g="$W/genomes.snap" 2>"$W/serve.log" &
SERVER=$!
PIDS="$PIDS $SERVER"
up 18181
up 18182

echo "== 1. single-key GET, $CONNS connections, ${DUR} s a run, alternating"
r=0
while [ "$r" -lt "$ROUNDS" ]; do
	f=$($LOAD wrk -t1 -c"$CONNS" -d"${DUR}s" --latency "http://127.0.0.1:18181/v1/s/query?key=$KEY")
	s=$($LOAD wrk -t1 -c"$CONNS" -d"${DUR}s" --latency "http://127.0.0.1:18182/v1/s/query?key=$KEY")
	c=$($LOAD wrk -t1 -c"$CONNS" -d"${DUR}s" --latency "http://127.0.0.1:18182/v1/s/query?key=$KEY&format=count")
	fr=$(echo "$f" | rate)
	echo "round $r: floor $fr req/s (p99 $(echo "$f" | p99)); bfi serve $(echo "$s" | rate) req/s (p99 $(echo "$s" | p99)), $(pct "$(echo "$s" | rate)" "$fr" get)% of the floor; format=count $(echo "$c" | rate) req/s (p99 $(echo "$c" | p99)), $(pct "$(echo "$c" | rate)" "$fr" get_count)%"
	r=$((r + 1))
done
med get
med get_count
curl_len=$(python3 -c "import http.client; c = http.client.HTTPConnection('127.0.0.1', 18182); c.request('GET', '/v1/s/query?key=$KEY'); print(len(c.getresponse().read()))")
echo "(a bfi serve answer here is $curl_len bytes: the key is in $(echo "$KEY" | "$BFI" query --count "$W/snap" | cut -f2) sets)"

echo "== 2. POST batches of 1,000 keys against bfi bench --batch 1000"
python3 - "$W/k1000" >"$W/post.lua" <<'EOF'
import json, sys
keys = [l.rstrip("\n") for l in open(sys.argv[1])]
body = json.dumps({"keys": keys})
print('wrk.method = "POST"')
print('wrk.headers["Content-Type"] = "application/json"')
print("wrk.body = " + json.dumps(body))
EOF
python3 - "$W/k1000" >"$W/post_count.lua" <<'EOF'
import json, sys
keys = [l.rstrip("\n") for l in open(sys.argv[1])]
body = json.dumps({"keys": keys, "format": "count"})
print('wrk.method = "POST"')
print('wrk.headers["Content-Type"] = "application/json"')
print("wrk.body = " + json.dumps(body))
EOF
# the floor for answers as long as the names' (about 940 KB a request here)
blen=$(python3 - "$W/k1000" <<'EOF'
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", 18182)
c.request("POST", "/v1/s/query", json.dumps({"keys": open(sys.argv[1]).read().split()}))
print(len(c.getresponse().read()))
EOF
)
$SRV "$FLOOR" 18183 "$THREADS" "$blen" &
PIDS="$PIDS $!"
up 18183
echo "(an answer of 1,000 keys' names is $blen bytes)"
r=0
while [ "$r" -lt "$ROUNDS" ]; do
	fb=$($LOAD wrk -t1 -c4 -d"${DUR}s" -s "$W/post.lua" "http://127.0.0.1:18183/v1/s/query" | rate)
	echo "round $r: libmicrohttpd alone, answering $blen bytes: $(echo "$fb" | awk '{ printf "%.0f", $1 * 1000 }') keys/s"
	b=$($SRV "$BFI" bench --layout flat --batch 1000 "$W/snap" "$W/k1000" | awk '/^keys / { for (i = 2; i <= NF; i++) if ($i == "q/s,") print $(i - 1) }')
	p=$($LOAD wrk -t1 -c4 -d"${DUR}s" -s "$W/post.lua" "http://127.0.0.1:18182/v1/s/query" | rate)
	pc=$($LOAD wrk -t1 -c4 -d"${DUR}s" -s "$W/post_count.lua" "http://127.0.0.1:18182/v1/s/query" | rate)
	echo "round $r: in-process bfi_query_keys $b keys/s; POST names $(echo "$p" | awk '{ printf "%.0f", $1 * 1000 }') keys/s ($(pct "$(echo "$p" | awk '{ print $1 * 1000 }')" "$b" post)%); POST format=count $(echo "$pc" | awk '{ printf "%.0f", $1 * 1000 }') keys/s ($(pct "$(echo "$pc" | awk '{ print $1 * 1000 }')" "$b" post_count)%)"
	r=$((r + 1))
done
med post
med post_count

echo "== 3. 150-bp reads at threshold 0.8, 100 a request, against bfi query --fasta"
python3 - "$W/reads.fa" >"$W/reads.lua" <<'EOF'
import json, sys
recs, rid = [], None
for l in open(sys.argv[1]):
    l = l.rstrip("\n")
    if l.startswith(">"):
        rid = l[1:]
    else:
        recs.append({"id": rid, "seq": l})
    if len(recs) == 100:
        break
print('wrk.method = "POST"')
print('wrk.headers["Content-Type"] = "application/json"')
print("wrk.body = " + json.dumps(json.dumps({"sequences": recs, "threshold": 0.8})))
EOF
r=0
while [ "$r" -lt "$ROUNDS" ]; do
	t0=$(date +%s%N)
	$SRV "$BFI" query --fasta "$W/reads.fa" -t 0.8 "$W/genomes.snap" >/dev/null
	t1=$(date +%s%N)
	cli=$(echo "$t0 $t1" | awk '{ printf "%.0f", 20000 / (($2 - $1) / 1e9) }')
	p=$($LOAD wrk -t1 -c4 -d"${DUR}s" -s "$W/reads.lua" "http://127.0.0.1:18182/v1/g/query" | rate)
	echo "round $r: bfi query --fasta $cli reads/s; POST $(echo "$p" | awk '{ printf "%.0f", $1 * 100 }') reads/s ($(pct "$(echo "$p" | awk '{ print $1 * 100 }')" "$cli" reads)%)"
	r=$((r + 1))
done
med reads

echo "== 4. ${SWAP_SECONDS:-60} s of GETs while the snapshot is republished every second"
maps() { grep -c 'index.bfi' "/proc/$SERVER/maps" || true; }
rss() { awk '/^VmRSS/ { print $2 " kB" }' "/proc/$SERVER/status"; }
echo "before: RSS $(rss), index.bfi mappings $(maps)"
grep index.bfi "/proc/$SERVER/maps" | sed 's/^/  /'
SWAP_S=${SWAP_SECONDS:-60}
(
	i=0
	while [ $i -lt "$SWAP_S" ]; do
		sleep 0.7 # and about 0.3 s of build: one publish a second, alternating two set lists
		if [ $((i % 2)) -eq 0 ]; then sets=$W/sets2.tsv; else sets=$W/syn/sets.tsv; fi
		"$BFI" build -q -o "$W/snap" --tsv "$sets"
		i=$((i + 1))
	done
) &
PUB=$!
out=$($LOAD wrk -t1 -c"$CONNS" -d"${SWAP_S}s" --latency "http://127.0.0.1:18182/v1/s/query?key=$KEY")
wait $PUB || true
echo "$out" | grep -E "requests in|Requests/sec|Non-2xx|Socket errors|99%" | sed 's/^/  /'
non2xx=$(echo "$out" | awk '/Non-2xx/ { print $NF }')
echo "non-2xx responses: ${non2xx:-0}; socket errors: $(echo "$out" | grep -c 'Socket errors' || true) lines"
sleep 1
echo "after: RSS $(rss), index.bfi mappings $(maps); swaps logged: $(grep -c 'generation' "$W/serve.log")"
grep index.bfi "/proc/$SERVER/maps" | sed 's/^/  /'
