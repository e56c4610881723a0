#!/bin/sh
# scan.sh - bfi query --scan on an index larger than the memory it is
# given: SNAP's flat layout, batches of Q k-mer keys (cut from the reads)
# and of the reads at -t 0.8, each round from a cold page cache
# (posix_fadvise DONTNEED of the index before it), against cat of the
# same cold index and against the mapped path (--batch) on the same
# queries, alternating, ROUNDS times (3): wall seconds and the bytes read
# from the disk (/usr/bin/time's %I, 512-byte blocks).
# Usage: MEMORY=1G [Q="10000 100000"] [ROUNDS=3] sh tests/bench/scan.sh SNAP READS.fa
set -eu
cd "$(dirname "$0")/../.."
BFI=${BFI:-$PWD/bfi}
SNAP=$1
READS=$2
MEMORY=${MEMORY:-1G}
W=$(mktemp -d "${TMPDIR:-/tmp}/bfi-scan.XXXXXX")
trap 'rm -rf "$W"' EXIT
cold() { python3 -c "import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)" "$SNAP/index.bfi"; }
# run LABEL CMD...: wall seconds and disk bytes read, cold
run() {
	label=$1
	shift
	cold
	/usr/bin/time -f "%e %I %M" -o "$W/t" "$@" >"$W/$label.out"
	read -r s blocks kb <"$W/t"
	echo "$label $s s, $((blocks * 512)) bytes from disk, peak RSS $((kb / 1024)) MiB"
}
size=$(stat -c %s "$SNAP/index.bfi")
echo "index $size bytes, --memory $MEMORY"
grep -v '^>' "$READS" | awk '{ for (i = 1; i + 30 <= length($0); i += 7) print substr($0, i, 31) }' >"$W/kmers.all"
r=0
while [ "$r" -lt "${ROUNDS:-3}" ]; do
	run cat cat "$SNAP/index.bfi"
	for q in ${Q:-10000 100000}; do
		head -n "$q" "$W/kmers.all" >"$W/k"
		run "scan-keys-$q" "$BFI" query --scan --memory "$MEMORY" --kmer 31 "$SNAP" <"$W/k"
		run "mapped-keys-$q" "$BFI" query --threads 1 --kmer 31 "$SNAP" <"$W/k"
		cmp -s "$W/scan-keys-$q.out" "$W/mapped-keys-$q.out" || { echo "answers differ"; exit 1; }
	done
	run scan-reads "$BFI" query --scan --memory "$MEMORY" --kmer 31 -t 0.8 --fasta "$READS" "$SNAP"
	run mapped-reads "$BFI" query --threads 1 --kmer 31 -t 0.8 --fasta "$READS" "$SNAP"
	cmp -s "$W/scan-reads.out" "$W/mapped-reads.out" || { echo "answers differ"; exit 1; }
	r=$((r + 1))
done
