#!/bin/sh
# reads.sh - what raw sequencing runs cost bfi's writer: the per-sample
# figures the workflow's plans are derived from. N samples, each the reads
# of its own random genome of G bases: 150-bp reads at COV-fold coverage,
# substitutions at rate ERR, Illumina's binned qualities (F, :, ','),
# gzipped FASTQ as sequencers deliver it. Reported: FASTQ.gz bytes and
# bases a sample, distinct canonical 31-mers a sample (the genome's and
# the errors'), then a build of all N at 1 and 2 threads: seconds, 31-mer
# occurrences a second a core, peak RSS, index bytes a set.
# With MIN_COUNT=M, also a build at 2 threads keeping only the 31-mers a
# sample gives M times or more (--min-count): its seconds and peak RSS
# against the plain build's, and the distinct 31-mers a set it keeps.
# Usage: BFI=/path/to/release/bfi [N=8] [G=1000000] [COV=30] [ERR=0.005] [MIN_COUNT=2
#        [MEMORY=256M [LIMIT=320M]]] sh tests/bench/reads.sh [WORKDIR]    (needs python3-numpy)
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-reads}
BFI=${BFI:-$PWD/bfi}
N=${N:-8}
G=${G:-1000000}
COV=${COV:-30}
ERR=${ERR:-0.005}
# Debian's python3, which has python3-numpy, before another on PATH
PY=${PYTHON:-python3}
[ -n "${PYTHON:-}" ] || [ ! -x /usr/bin/python3 ] || PY=/usr/bin/python3
mkdir -p "$W/fq"
"$PY" - "$W/fq" "$N" "$G" "$COV" "$ERR" <<'EOF'
import gzip, os, sys
import numpy as np
out, n, g, cov, err = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
L, K = 150, 31
bases = np.frombuffer(b"ACGT", dtype=np.uint8)
quals = np.frombuffer(b"F:,", dtype=np.uint8)
def distinct(reads):
    """Distinct canonical 31-mers of the reads (a 2-bit code a base, both strands)."""
    codes = reads.astype(np.uint64)
    fw = np.zeros((reads.shape[0], L - K + 1), dtype=np.uint64)
    rc = np.zeros_like(fw)
    for i in range(K):
        fw = (fw << np.uint64(2)) | codes[:, i:i + L - K + 1]
        rc = rc | ((np.uint64(3) - codes[:, i:i + L - K + 1]) << np.uint64(2 * i))
    return np.unique(np.minimum(fw, rc)).size
for s in range(n):
    path = os.path.join(out, "s%03d.fq.gz" % s)
    rng = np.random.default_rng(1000 + s)
    genome = rng.integers(0, 4, g, dtype=np.uint8)
    nreads = int(g * cov / L)
    starts = rng.integers(0, g - L, nreads)
    reads = genome[starts[:, None] + np.arange(L)]
    hit = rng.random(reads.shape) < err
    reads[hit] = (reads[hit] + rng.integers(1, 4, hit.sum(), dtype=np.uint8)) % 4
    q = quals[rng.choice(3, reads.shape, p=[0.9, 0.07, 0.03])]
    if not os.path.exists(path):
        with gzip.open(path + ".tmp", "wb", compresslevel=6) as f:
            seq = bases[reads]
            for r in range(nreads):
                f.write(b"@r%d\n%s\n+\n%s\n" % (r, seq[r].tobytes(), q[r].tobytes()))
        os.rename(path + ".tmp", path)
    if s == 0:
        d = distinct(reads)
        print("sample: %d reads of %d bp, %d bases, %d 31-mer occurrences, %d distinct canonical 31-mers"
              " (the genome alone: %d)" % (nreads, L, nreads * L, nreads * (L - K + 1), d, g - K + 1))
        print("sample: %d bytes of FASTQ.gz, %.2f bases a byte" % (os.path.getsize(path),
              nreads * L / os.path.getsize(path)))
EOF
occ=$("$PY" -c "print(int($G * $COV / 150) * 120 * $N)")
for t in 1 2; do
	rm -rf "$W/snap-$t"
	/usr/bin/time -f "%e %M" -o "$W/time" "$BFI" build -q --threads "$t" --input fasta --kmer 31 \
		-o "$W/snap-$t" "$W/fq"
	read -r s kb <"$W/time"
	echo "$N samples at $t thread(s): $s s, $("$PY" -c "print('%.2f' % ($occ / $s / $t / 1e6))") M 31-mer occurrences a second a core, peak RSS $((kb / 1024)) MB, index $(($(stat -c %s "$W/snap-$t/index.bfi") / N)) bytes a set"
done
cmp "$W/snap-1/index.bfi" "$W/snap-2/index.bfi" && echo "the same index at 1 and 2 threads"
keys_a_set() { "$BFI" inspect --sets "$1" | awk -F '\t' '{ s += $3 } END { printf "%.0f", s / NR }'; }
echo "plain: $(keys_a_set "$W/snap-2") distinct 31-mers a set"
if [ -n "${MIN_COUNT:-}" ]; then
	rm -rf "$W/snap-mc"
	/usr/bin/time -f "%e %M" -o "$W/time" "$BFI" build -q --threads 2 --input fasta --kmer 31 \
		--min-count "$MIN_COUNT" -o "$W/snap-mc" "$W/fq"
	read -r s kb <"$W/time"
	echo "--min-count $MIN_COUNT at 2 threads: $s s, peak RSS $((kb / 1024)) MB, $(keys_a_set "$W/snap-mc") distinct 31-mers a set kept, index $(($(stat -c %s "$W/snap-mc/index.bfi") / N)) bytes a set"
fi
# With MIN_COUNT and MEMORY (and LIMIT, as root: a cgroup v1 memory limit,
# page cache included), the same build at --memory MEMORY, where the counts
# go through scratch runs: its seconds, peak RSS and the cgroup's peak, and
# whether its index is the one built in memory.
if [ -n "${MIN_COUNT:-}" ] && [ -n "${MEMORY:-}" ]; then
	rm -rf "$W/snap-mcm"
	CG=
	if [ -n "${LIMIT:-}" ]; then
		CG=/sys/fs/cgroup/memory/bfi-reads-bench
		mkdir -p "$CG" && echo "$LIMIT" >"$CG/memory.limit_in_bytes" && echo 0 >"$CG/memory.max_usage_in_bytes"
	fi
	/usr/bin/time -f "%e %M" -o "$W/time" sh -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh \
		"$CG" "$BFI" build -q --threads 2 --memory "$MEMORY" --input fasta --kmer 31 \
		--min-count "$MIN_COUNT" -o "$W/snap-mcm" "$W/fq" 2>"$W/warn"
	read -r s kb <"$W/time"
	peak=
	[ -z "$CG" ] || peak=", cgroup peak $(($(cat "$CG/memory.max_usage_in_bytes") / 1048576)) MiB (limit $LIMIT)"
	[ -z "$CG" ] || rmdir "$CG"
	same="a different index"
	cmp -s "$W/snap-mc/index.bfi" "$W/snap-mcm/index.bfi" && same="the same index"
	echo "--min-count $MIN_COUNT at --memory $MEMORY: $s s, peak RSS $((kb / 1024)) MB$peak; $same as in memory"
	sed 's/^/  /' "$W/warn"
fi
