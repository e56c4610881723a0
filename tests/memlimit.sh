#!/bin/sh
# memlimit.sh - bfi query under a real memory limit: a memory cgroup this
# test makes (v1's memory controller, or v2's), smaller than the index,
# with the index dropped from the page cache first. Without --scan or
# --memory, bfi query must read the cgroup's limit, choose the scan and
# say so once, complete (no OOM kill), give the answers of the mapped
# path outside the limit byte for byte, and keep its peak resident memory
# within its --memory (three quarters of the limit) plus 32 MiB; the same
# for FASTA reads at a threshold and an explicit --memory. It needs root
# and a memory controller; without them it says it was skipped and why.
# Under AddressSanitizer, which holds freed memory in a quarantine (here
# turned off) and checks every access against shadow memory of an eighth
# of what is touched, the peak may pass --memory by a quarter more.
# Usage: sh tests/memlimit.sh ./bfi    (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
SUITE=memlimit
. tests/lib/check.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-memlimit.XXXXXX")
CG=
trap 'rm -rf "$T"; [ -n "$CG" ] && rmdir "$CG" 2>/dev/null' EXIT

skip() {
	echo "SKIP memlimit: $1"
	exit 0
}
[ "$(id -u)" = 0 ] || skip "not root: no memory cgroup can be made"
command -v python3 >/dev/null || skip "no python3 to measure the peak"
if [ -d /sys/fs/cgroup/memory ] && [ -w /sys/fs/cgroup/memory ]; then
	V=1
	CG=/sys/fs/cgroup/memory/bfi-memlimit-$$
elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
	V=2
	CG=/sys/fs/cgroup/bfi-memlimit-$$
else
	skip "no writable cgroup memory controller (v1 or v2) on this machine"
fi
mkdir "$CG" 2>/dev/null || { CG=; skip "cannot make a memory cgroup"; }

# 600 random documents of 4 kbp, every filter 4 Mbit wide (--bits): an index of 300 MB
python3 - "$T" <<'EOF' || exit 1
import random, sys
rnd = random.Random(5)
t = sys.argv[1]
docs = []
with open(t + "/docs.fa", "w") as f:
    for d in range(600):
        s = "".join(rnd.choice("ACGT") for _ in range(4000))
        docs.append(s)
        f.write(">doc%d\n%s\n" % (d, s))
with open(t + "/reads.fa", "w") as f:
    for r in range(200):
        d = rnd.randrange(600)
        p = rnd.randrange(4000 - 150)
        f.write(">r%d_doc%d\n%s\n" % (r, d, docs[d][p:p + 150]))
with open(t + "/keys", "w") as f:
    for r in range(20000):
        d = rnd.randrange(600)
        p = rnd.randrange(4000 - 31)
        f.write(docs[d][p:p + 31] + "\n")
EOF
"$BFI" build -q -o "$T/snap" --input fasta --kmer 31 --per-record --bits 4194304 "$T/docs.fa" || exit 1
size=$(stat -c %s "$T/snap/index.bfi")
"$BFI" query --kmer 31 "$T/snap" <"$T/keys" >"$T/keys.mapped" || exit 1
"$BFI" query --kmer 31 -t 0.8 --fasta "$T/reads.fa" "$T/snap" >"$T/reads.mapped" || exit 1

slack=100 # percent of --memory the peak may reach, beside 32 MiB
if ldd "$BFI" 2>/dev/null | grep -q libasan; then
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
	slack=125
fi
# The process's own baseline (a sanitizer's shadow and runtime included): a query of no key
base=$(python3 -c '
import resource, subprocess, sys
subprocess.run([sys.argv[1], "query", "--kmer", "31", sys.argv[2]], stdin=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)' "$BFI" "$T/snap") || exit 1
extra=0
[ "$base" -gt $((24 << 20)) ] && extra=$((base - (12 << 20))) # a sanitizer's: give it room
LIMIT=$((size / 2 + extra)) # the index is twice the limit, less the baseline's excess
echo "# index $size bytes, process baseline $base bytes, cgroup limit $LIMIT bytes (v$V), peaks within --memory x $slack% + 32 MiB"
if [ "$V" = 1 ]; then
	echo "$LIMIT" >"$CG/memory.limit_in_bytes"
else
	echo "$LIMIT" >"$CG/memory.max"
fi

# limited OUT ERR ARGS...: bfi query ARGS in the cgroup, cold; prints its peak resident bytes
limited() {
	out=$1 err=$2
	shift 2
	python3 -c '
import os
fd = os.open(os.path.join(os.sys.argv[1], "index.bfi"), os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
os.close(fd)' "$T/snap"
	python3 -c '
import resource, subprocess, sys
cg, inp, out, err = sys.argv[1:5]
def enter():
    with open(cg + "/cgroup.procs", "w") as f:
        f.write(str(os.getpid()))
import os
with open(inp) as i, open(out, "w") as o, open(err, "w") as e:
    rc = subprocess.run(sys.argv[5:], stdin=i, stdout=o, stderr=e, preexec_fn=enter).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
sys.exit(rc)' "$CG" "$IN" "$out" "$err" "$BFI" query "$@"
}
# peak_ok PEAK MEMORY: within MEMORY + 32 MiB (a sanitizer's: MEMORY * slack%, and its baseline's excess)
peak_ok() {
	[ "$1" -le $(($2 / 100 * slack + (32 << 20) + extra)) ] ||
		{ echo "peak $1 bytes, over $2 (x $slack%) + 32 MiB"; return 1; }
}

keys() {
	IN=$T/keys
	peak=$(limited "$T/q.out" "$T/q.err" --kmer 31 "$T/snap") || { cat "$T/q.err"; return 1; }
	echo "# 20,000 keys: peak $peak bytes, --memory $((LIMIT / 4 * 3))" >>"$T/peaks"
	cmp "$T/q.out" "$T/keys.mapped" &&
		[ "$(grep -c 'note: the index of .* is larger than the .* MiB this query may hold (three quarters of the cgroup memory limit' "$T/q.err")" = 1 ] &&
		peak_ok "$peak" $((LIMIT / 4 * 3))
}
check "20,000 keys without --scan or --memory in a cgroup of half the index: the scan chosen and said, the mapped answers, the peak within --memory + 32 MiB" keys
reads() {
	IN=/dev/null
	mem=$(((LIMIT - (32 << 20) - extra) / 2))
	peak=$(limited "$T/q.out" "$T/q.err" --memory "$mem" --kmer 31 -t 0.8 --fasta "$T/reads.fa" "$T/snap") ||
		{ cat "$T/q.err"; return 1; }
	echo "# 200 reads: peak $peak bytes, --memory $mem" >>"$T/peaks"
	cmp "$T/q.out" "$T/reads.mapped" && peak_ok "$peak" "$mem"
}
check "200 reads at -t 0.8 and a --memory below the limit: the mapped answers, the peak within it + 32 MiB" reads
strains() { # 2,000 sets that share 500 keys: 10,000 such keys answer 80 MB, ten times --memory
	awk 'BEGIN { for (s = 0; s < 2000; s++) { for (i = 0; i < 500; i++) printf "strain%d\tcore-%d\n", s, i
		for (i = 0; i < 20; i++) printf "strain%d\town-%d-%d\n", s, s, i } }' >"$T/strains.tsv" &&
		"$BFI" build -q -o "$T/strains" --tsv "$T/strains.tsv" &&
		awk 'BEGIN { for (r = 0; r < 20; r++) for (i = 0; i < 500; i++) print "core-" i }' >"$T/core" &&
		"$BFI" query "$T/strains" <"$T/core" >"$T/core.mapped" || return 1
	IN=$T/core
	peak=$(limited "$T/q.out" "$T/q.err" --scan --memory 16M "$T/strains") || { cat "$T/q.err"; return 1; }
	echo "# 10,000 keys every set holds: peak $peak bytes, --memory 16M" >>"$T/peaks"
	cmp "$T/q.out" "$T/core.mapped" && peak_ok "$peak" $((16 << 20)) &&
		grep -q "note: --memory 16M held the queries' state and answers in [0-9]* batches" "$T/q.err"
}
check "keys every one of 2,000 sets holds, whose answers pass --memory ten times: batches halved, the mapped answers, the peak within --memory + 32 MiB" strains
served() { # bfi serve in the cgroup: the snapshot mapped and said so; its pack refused, and why
	"$BFI" pack -q -o "$T/snap.pack" "$T/snap" || return 1
	! python3 -c '
import os, subprocess, sys
def enter():
    with open(sys.argv[1] + "/cgroup.procs", "w") as f:
        f.write(str(os.getpid()))
sys.exit(subprocess.run(sys.argv[2:], preexec_fn=enter, stdin=subprocess.DEVNULL, timeout=60).returncode)' \
		"$CG" "$BFI" serve --quiet --listen 127.0.0.1:0 p="$T/snap.pack" 2>"$T/s.err" &&
		grep -q "a pack is read into memory whole to be served, and its index .* passes the .* MiB this process may hold" "$T/s.err" || return 1
	key=$(head -1 "$T/keys")
	"$BFI" query --json --kmer 31 "$T/snap" "$key" >"$T/q.json" || return 1
	python3 -c '
import json, os, re, subprocess, sys, time, urllib.request
cg, bfi, snap, key, want = sys.argv[1:6]
def enter():
    with open(cg + "/cgroup.procs", "w") as f:
        f.write(str(os.getpid()))
p = subprocess.Popen([bfi, "serve", "--warm", "--listen", "127.0.0.1:0", "s=" + snap],
                     preexec_fn=enter, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
try:
    log, url = "", None
    deadline = time.time() + 30
    while url is None and time.time() < deadline:
        line = p.stderr.readline()
        log += line
        m = re.search(r"listening on (http://\S+)", line)
        url = m and m.group(1)
    assert url, log
    assert re.search(r"note: its index \(\d+ MiB\) passes the \d+ MiB this process may hold .*served from its mapping, not warmed", log), log
    got = json.load(urllib.request.urlopen(url + "v1/s/query?q=" + key, timeout=30))
    assert got["results"][0]["matches"] == json.load(open(want))["matches"], got
finally:
    p.terminate()
    p.wait(timeout=30)' "$CG" "$BFI" "$T/snap" "$key" "$T/q.json"
}
check "bfi serve in the cgroup: the snapshot served from its mapping, unwarmed, and said; its pack refused, saying why" served
cat "$T/peaks" 2>/dev/null
[ "$fails" -eq 0 ]
