#!/bin/sh
# scan.sh - bfi query --scan on an index larger than the memory it is
# given: SNAP's flat layout, batches of Q k-mer keys (cut from the reads)
# and of the reads at -t 0.8, each round from a cold page cache
# (posix_fadvise DONTNEED of the index before it), against cat of the
# same cold index and against the mapped path (--batch) on the same
# queries, alternating, ROUNDS times (3): wall seconds and the bytes read
# from the disk (/usr/bin/time's %I, 512-byte blocks). With LIMIT (bytes)
# set, as root on a machine with cgroup v1's memory controller, every
# command runs in a memory cgroup of that limit, page cache included
# (/sys/fs/cgroup/memory/bfi-scan-bench, made and removed here), and its
# peak usage is reported: the mapped path then has to evict pages it will
# fault in again, the scan does not. Each batch of Q keys is one batch
# (--batch-size Q): one pass; BATCH cuts them into batches of that many.
# MAPPED=0 leaves the mapped path out (it takes hours at 10^6 keys under
# a limit). With PACK (a bfi pack of SNAP),
# the same scans run from the pack in place, against zstd -dc of it.
# The keys are READS's k-mers, or those of KEYS (FASTA) when given.
# VS (another bfi binary, such as the build before a change) runs the
# same scans after each of BFI's, whose answers must match. MEMORY=
# (empty) gives no --memory: bfi query takes its default from the limits
# it runs under. AUTO=1 gives no --scan either: the reader must choose it.
# FREE=1 runs the mapped path outside the cgroup, cold: the figure a scan
# is held to. THREADS=N gives the scans --threads N (default: a thread a
# core, over which each range's reads are shared). Each line gives the
# bytes read from the disk as a multiple of the index.
# Usage: MEMORY=1G [LIMIT=1400M] [Q="10000 100000"] [ROUNDS=3] [MAPPED=0] [PACK=SNAP.pack]
#        [KEYS=more.fa] [BATCH=100000] [VS=old/bfi] [AUTO=1] [FREE=1] [THREADS=N]
#        sh tests/bench/scan.sh SNAP READS.fa
set -eu
cd "$(dirname "$0")/../.."
BFI=${BFI:-$PWD/bfi}
SNAP=$1
READS=$2
MEMORY=${MEMORY-1G}
SCAN=--scan
[ "${AUTO:-0}" = 1 ] && SCAN=
MEM=${MEMORY:+--memory $MEMORY}${THREADS:+ --threads $THREADS}
BATCHARG=${BATCH:+--batch-size $BATCH}
W=$(mktemp -d "${TMPDIR:-/tmp}/bfi-scan.XXXXXX")
CG=
if [ -n "${LIMIT:-}" ]; then
	CG=/sys/fs/cgroup/memory/bfi-scan-bench
	mkdir -p "$CG"
	echo "$LIMIT" >"$CG/memory.limit_in_bytes"
fi
trap 'rm -rf "$W"; [ -n "$CG" ] && rmdir "$CG" 2>/dev/null' EXIT
PACK=${PACK:-}
MAPPED=${MAPPED:-1}
cold() {
	python3 -c "import os, sys
for f in sys.argv[1:]:
	fd = os.open(f, os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)" "$SNAP/index.bfi" $PACK
}
# run LABEL CMD...: wall seconds and disk bytes read, cold
run() {
	label=$1
	shift
	cold
	peak=
	if [ -n "$CG" ] && { [ "${FREE:-0}" != 1 ] || [ "${label#mapped}" = "$label" ]; }; then
		echo 0 >"$CG/memory.max_usage_in_bytes"
		/usr/bin/time -f "%e %I %M" -o "$W/t" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@" >"$W/$label.out"
		peak=", cgroup peak $(($(cat "$CG/memory.max_usage_in_bytes") / 1048576)) MiB"
	else
		/usr/bin/time -f "%e %I %M" -o "$W/t" "$@" >"$W/$label.out"
	fi
	read -r s blocks kb <"$W/t"
	echo "$label $s s, $((blocks * 512)) bytes from disk ($(awk "BEGIN { printf \"%.2f\", $blocks * 512 / $size }")x the index), peak RSS $((kb / 1024)) MiB$peak"
}
size=$(stat -c %s "$SNAP/index.bfi")
echo "index $size bytes, --memory ${MEMORY:-default}${LIMIT:+, cgroup limit $LIMIT}${SCAN:+, --scan}"
grep -v '^>' "${KEYS:-$READS}" | awk '{ for (i = 1; i + 30 <= length($0); i++) print substr($0, i, 31) }' >"$W/kmers.all"
r=0
while [ "$r" -lt "${ROUNDS:-3}" ]; do
	run cat cat "$SNAP/index.bfi"
	[ -z "$PACK" ] || run zstd-dc zstd -dc "$PACK"
	for q in ${Q:-10000 100000}; do
		head -n "$q" "$W/kmers.all" >"$W/k"
		[ "$(wc -l <"$W/k")" -eq "$q" ] || { echo "the reads hold fewer than $q k-mers"; exit 1; }
		run "scan-keys-$q" "$BFI" query $SCAN --batch-size "${BATCH:-$q}" $MEM --kmer 31 "$SNAP" <"$W/k"
		if [ -n "${VS:-}" ]; then
			run "vs-scan-keys-$q" "$VS" query $SCAN --batch-size "${BATCH:-$q}" $MEM --kmer 31 "$SNAP" <"$W/k" 2>/dev/null
			cmp -s "$W/scan-keys-$q.out" "$W/vs-scan-keys-$q.out" || { echo "answers differ"; exit 1; }
		fi
		if [ -n "$PACK" ]; then
			run "pack-keys-$q" "$BFI" query $SCAN --batch-size "${BATCH:-$q}" $MEM --kmer 31 "$PACK" <"$W/k"
			cmp -s "$W/scan-keys-$q.out" "$W/pack-keys-$q.out" || { echo "answers differ"; exit 1; }
		fi
		[ "$MAPPED" = 0 ] && continue
		run "mapped-keys-$q" "$BFI" query --threads 1 --kmer 31 "$SNAP" <"$W/k"
		cmp -s "$W/scan-keys-$q.out" "$W/mapped-keys-$q.out" || { echo "answers differ"; exit 1; }
	done
	run scan-reads "$BFI" query $SCAN $MEM --kmer 31 -t 0.8 --fasta "$READS" "$SNAP"
	if [ -n "${VS:-}" ]; then
		run vs-scan-reads "$VS" query $SCAN $MEM --kmer 31 -t 0.8 --fasta "$READS" "$SNAP" 2>/dev/null
		cmp -s "$W/scan-reads.out" "$W/vs-scan-reads.out" || { echo "answers differ"; exit 1; }
	fi
	if [ -n "$PACK" ]; then
		run pack-reads "$BFI" query $SCAN $MEM --kmer 31 -t 0.8 --fasta "$READS" "$PACK"
		cmp -s "$W/scan-reads.out" "$W/pack-reads.out" || { echo "answers differ"; exit 1; }
	fi
	if [ "$MAPPED" != 0 ]; then
		run mapped-reads "$BFI" query --threads 1 --kmer 31 -t 0.8 --fasta "$READS" "$SNAP"
		cmp -s "$W/scan-reads.out" "$W/mapped-reads.out" || { echo "answers differ"; exit 1; }
	fi
	r=$((r + 1))
done
