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
# Under a sanitizer, whose shadow and quarantine take memory of their
# own, the limit is raised by what the tool's own baseline takes.
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

# The process's own baseline (a sanitizer's shadow and runtime included): a query of no key
base=$(python3 -c '
import resource, subprocess, sys
subprocess.run([sys.argv[1], "query", "--kmer", "31", sys.argv[2]], stdin=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)' "$BFI" "$T/snap") || exit 1
extra=0
[ "$base" -gt $((24 << 20)) ] && extra=$((base - (12 << 20))) # a sanitizer's: give it room
LIMIT=$((size / 2 + extra)) # the index is twice the limit, less the baseline's excess
echo "# index $size bytes, process baseline $base bytes, cgroup limit $LIMIT bytes (v$V)"
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
# peak_ok PEAK MEMORY: within MEMORY + 32 MiB, and the sanitizer's excess
peak_ok() {
	[ "$1" -le $(($2 + (32 << 20) + extra)) ] || { echo "  | peak $1 bytes, over $2 + 32 MiB"; return 1; }
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
cat "$T/peaks" 2>/dev/null
[ "$fails" -eq 0 ]
