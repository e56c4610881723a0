#!/bin/sh
# scale.sh - the writer's time against its input: 50 and then 200 simulated
# genomes of 5 Mbp (random bases, one FASTA file each: 250 M and 1 G
# 31-mers), built at --threads 2 with the same --memory, reporting the time,
# peak RSS (GNU time) and the time ratio, which linear work would put at 4.
# Usage: BFI=/path/to/release/bfi sh tests/bench/scale.sh [WORKDIR] [MEMORY]
#        (MEMORY defaults to 4G, where both builds fill their rows in memory,
#        so that they take the same path)
set -eu
cd "$(dirname "$0")/../.."
W=${1:-${TMPDIR:-/tmp}/bfi-bench-scale}
MEM=${2:-4G}
BFI=${BFI:-$PWD/bfi}
command -v /usr/bin/time >/dev/null || { echo "scale.sh: needs GNU time (apt-get install time)" >&2; exit 2; }
mkdir -p "$W/g200" "$W/g50"
# 256 byte values onto 4 bases, 64 each: uniform random sequence
map=$(printf 'ACGT%.0s' $(seq 64))
i=0
while [ "$i" -lt 200 ]; do
	f=$(printf 'g%03d.fa' "$i")
	if [ ! -s "$W/g200/$f" ]; then
		{ echo ">$f"; head -c 5000000 /dev/urandom | tr '\000-\377' "$map" | fold -w 80; echo; } >"$W/g200/$f"
	fi
	[ "$i" -ge 50 ] || ln -sf "../g200/$f" "$W/g50/$f"
	i=$((i + 1))
done
run() { # run NAME DIR: seconds and peak RSS of one build
	rm -rf "$W/out-$1"
	/usr/bin/time -f "%e %M" -o "$W/time-$1" "$BFI" build -q -o "$W/out-$1" --threads 2 --memory "$MEM" \
		--input fasta --kmer 31 "$2"
	read -r s kb <"$W/time-$1"
	echo "$1: $s s, peak RSS $((kb / 1024)) MB, index $(stat -c %s "$W/out-$1/index.bfi") bytes"
	echo "$s" >"$W/secs-$1"
}
run g50 "$W/g50"
run g200 "$W/g200"
awk -v a="$(cat "$W/secs-g50")" -v b="$(cat "$W/secs-g200")" 'BEGIN {
	printf "4x the input: %.2fx the time (linear: 4)\n", b / a }'
