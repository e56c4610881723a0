#!/bin/sh
# split.sh - one large FASTA or FASTQ file read on every thread
# (writer/split.c): the same index bytes and catalog as one thread gives,
# at any thread count and --memory (parts of 64 KiB to 1 MiB, counts held
# or spilled to scratch files and the file read again), from plain, gzip,
# xz, bzip2 and zstd input; distinct, kept and dropped k-mers exact
# against an oracle made here; the first error in the file reported as
# one thread reports it; and --stats showing the reading shared out.
# BGZF and zstd in many frames are decompressed on threads too
# (writer/frames.c), and xz in many blocks on liblzma's threads.
# The inputs are made to trip the cutter: FASTA records cut across many
# parts (lines of 60 and 80, CRLF, blanks, lowercase, N runs, comment
# lines), FASTQ with qualities that begin with '@' and '+', and records
# whose sequence and quality run over two lines.
# Usage: sh tests/split.sh ./bfi   (from the source root; tests/run.sh does this)
BFI=${1:-./bfi}
case $BFI in /*) ;; *) BFI=$(pwd)/$BFI ;; esac
SUITE=split
. tests/lib/check.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-split.XXXXXX")
trap 'rm -rf "$T"' EXIT
command -v python3 >/dev/null || { echo "SKIP split: no python3 to make the inputs"; exit 0; }
mkdir -p "$T/fq" "$T/fa" "$T/gz" "$T/xz" "$T/bz2" "$T/zst"
python3 - "$T" <<'EOF'
import bz2, gzip, lzma, random, sys
T = sys.argv[1]
rng = random.Random(47)
K = 31
comp = {"A": "T", "C": "G", "G": "C", "T": "A"}
def kmers(seq, out, counts=None):
    """Canonical k-mers of seq (upper case; any other letter breaks them) into out or counts."""
    run = 0
    for i, c in enumerate(seq):
        run = run + 1 if c in comp else 0
        if run >= K:
            f = seq[i - K + 1:i + 1]
            r = "".join(comp[x] for x in reversed(f))
            m = min(f, r)
            if counts is not None:
                counts[m] = counts.get(m, 0) + 1
            else:
                out.add(m)
# FASTQ: reads of a 100 kbp genome, 1% substitutions, some N; qualities from
# a set that holds '@' and '+', some records over two lines each
genome = "".join(rng.choice("ACGT") for _ in range(100000))
counts = {}
with open(T + "/fq/reads.fq", "w") as f:
    for r in range(12000):
        at = rng.randrange(len(genome) - 150)
        s = list(genome[at:at + 150])
        for i in range(150):
            if rng.random() < 0.01:
                s[i] = rng.choice("ACGT".replace(s[i], ""))
        if r % 97 == 0:
            s[rng.randrange(150)] = "N"
        s = "".join(s)
        q = "".join(rng.choice("@+FF:,#") for _ in range(150))
        if r % 50 == 0:
            f.write("@r%d x\n%s\n%s\n+\n%s\n%s\n" % (r, s[:70], s[70:], q[:90], q[90:]))
        else:
            f.write("@r%d\n%s\n+r%d\n%s\n" % (r, s, r, q))
        kmers(s, None, counts)
distinct = len(counts)
kept = sum(1 for v in counts.values() if v >= 2)
with open(T + "/fq.oracle", "w") as o:
    o.write("%d %d\n" % (distinct, kept))
raw = open(T + "/fq/reads.fq", "rb").read()
import os, struct, zlib
def bgzf_member(data):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    comp = c.compress(data) + c.flush()
    head = struct.pack("<BBBBIBBHBBHH", 0x1f, 0x8b, 8, 4, 0, 0, 0xff, 6, 66, 67, 2, 18 + len(comp) + 7)
    return head + comp + struct.pack("<II", zlib.crc32(data) & 0xffffffff, len(data))
os.makedirs(T + "/bgzf", exist_ok=True)
os.makedirs(T + "/badbgzf", exist_ok=True)
members = [bgzf_member(raw[i:i + 65280]) for i in range(0, len(raw), 65280)]
with open(T + "/bgzf/reads.fq.gz", "wb") as g:
    g.write(b"".join(members) + bgzf_member(b""))
# a plain gzip member among BGZF's (gzip allows it): read on from there in one stream
import gzip
os.makedirs(T + "/mixbgzf", exist_ok=True)
with open(T + "/mixbgzf/reads.fq.gz", "wb") as g:
    g.write(b"".join(members[:9]) + gzip.compress(raw[9 * 65280:12 * 65280]) +
            b"".join(members[12:]) + bgzf_member(b""))
# a member past the middle with a byte of its deflate data changed
bad = bytearray(members[len(members) * 2 // 3])
bad[40] ^= 0x55
with open(T + "/badbgzf/reads.fq.gz", "wb") as g:
    g.write(b"".join(members[:len(members) * 2 // 3]) + bytes(bad) +
            b"".join(members[len(members) * 2 // 3 + 1:]) + bgzf_member(b""))
with gzip.open(T + "/gz/reads.fq.gz", "wb") as g:
    g.write(raw)
with lzma.open(T + "/xz/reads.fq.xz", "wb") as g:
    g.write(raw)
with bz2.open(T + "/bz2/reads.fq.bz2", "wb") as g:
    g.write(raw)
# FASTA: six records of 300 kbp in lines of 60 or 80, one with CRLF ends, blanks
# at some line ends, lowercase stretches, N runs and a comment line
seen = set()
with open(T + "/fa/genomes.fa", "w", newline="") as f:
    for r in range(6):
        s = [rng.choice("ACGT") for _ in range(300000)]
        for _ in range(20):
            a = rng.randrange(len(s) - 200)
            s[a:a + 40] = [c.lower() for c in s[a:a + 40]]
            b = rng.randrange(len(s) - 200)
            s[b:b + rng.randrange(1, 40)] = ["N"] * len(s[b:b + rng.randrange(1, 40)])
        s = "".join(s)
        width = 60 if r % 2 else 80
        end = "\r\n" if r == 3 else "\n"
        f.write(">g%d some description%s" % (r, end))
        for i in range(0, len(s), width):
            line = s[i:i + width]
            if i // width % 101 == 7:
                line += "  "
            f.write(line + end)
            if r == 2 and i // width == 2000:
                f.write(";a comment in the sequence" + end)
        kmers(s.upper(), seen)
with open(T + "/fa.oracle", "w") as o:
    o.write("%d\n" % len(seen))
EOF
[ -s "$T/fq.oracle" ] || { echo "FAIL split: the inputs could not be made"; exit 1; }
if command -v zstd >/dev/null; then zstd -q "$T/fq/reads.fq" -o "$T/zst/reads.fq.zst"; fi
# zstd in many frames, cut anywhere in a line: most name their size, a skippable
# one among them; one of four pieces made from a pipe, which names no size
# (decompressed as a stream in a job, or, in 24M, too large for one), and one
# of nine that names its size (in a job; in 48M too large for one): from a
# frame too large zin.c reads on. In another file two bytes changed in a
# frame that names no size.
zstd_frames() { # zstd_frames OUT DAMAGE: the pieces' frames, the tenth piece damaged if DAMAGE
	i=0
	for p in "$T"/piece.*; do
		i=$((i + 1))
		case $i in
		5) printf '\120\052\115\030\004\000\000\000abcd' ;;
		12 | 13 | 14 | 31 | 32 | 33 | 34 | 35 | 36 | 37 | 38) continue ;;
		esac
		case $i in
		11) cat "$T"/piece.01[0-3] | zstd -q -c ;;
		30) cat "$T"/piece.029 "$T"/piece.03[0-7] >"$T/big" && zstd -q -c "$T/big" ;;
		10) zstd -q -c <"$p" >"$T/ten.zst" &&
			if [ "$2" ]; then
				n=$(wc -c <"$T/ten.zst")
				head -c $((n / 2)) "$T/ten.zst" && printf 'XY' && tail -c $((n - n / 2 - 2)) "$T/ten.zst"
			else cat "$T/ten.zst"; fi ;;
		*) zstd -q -c "$p" ;;
		esac
	done >"$1"
}
if command -v zstd >/dev/null && split -b 100000 -d -a 3 "$T/fq/reads.fq" "$T/piece."; then
	mkdir -p "$T/zstf" "$T/zstbad"
	zstd_frames "$T/zstf/reads.fq.zst" && zstd_frames "$T/zstbad/reads.fq.zst" damage
fi

build() { # build OUT INPUT [options]: index and catalog rows (inspect --sets) of a build
	out=$1 in=$2
	shift 2
	rm -rf "$out"
	"$BFI" build -q -o "$out" --input fasta --kmer 31 "$@" "$in" &&
		"$BFI" inspect --sets "$out" >"$out.sets"
}
same() { # same A B: two builds' index bytes and catalog rows
	cmp "$1/index.bfi" "$2/index.bfi" && cmp "$1.sets" "$2.sets"
}

fastq_same() {
	build "$T/q1" "$T/fq" --threads 1 &&
		for t in 2 4 7; do build "$T/q$t" "$T/fq" --threads "$t" && same "$T/q1" "$T/q$t" || return 1; done &&
		build "$T/qm" "$T/fq" --threads 4 --memory 48M && same "$T/q1" "$T/qm" &&
		build "$T/qs" "$T/fq" --threads 3 --memory 8M && same "$T/q1" "$T/qs" &&
		read -r distinct kept <"$T/fq.oracle" &&
		awk -F '\t' -v d="$distinct" '$3 != d { print "distinct " $3 ", the oracle " d; exit 1 }' "$T/q1.sets"
}
# two files of half the input each: at one thread neither is split (each is
# read whole by the per-file path), at four both are: the two ways agree
two_ways() {
	mkdir -p "$T/two" && cp "$T/fq/reads.fq" "$T/two/a.fq" && cp "$T/fa/genomes.fa" "$T/two/b.fa" &&
		build "$T/w1" "$T/two" --threads 1 && build "$T/w4" "$T/two" --threads 4 && same "$T/w1" "$T/w4" &&
		build "$T/wm1" "$T/two" --threads 1 --min-count 2 &&
		build "$T/wm4" "$T/two" --threads 4 --min-count 2 && same "$T/wm1" "$T/wm4"
}
check "a file read whole on one thread and the same file split on four: the same bytes, plain and --min-count 2" two_ways
check "FASTQ: the same bytes and catalog at 1, 2, 4 and 7 threads, with parts of 64 KiB and counts spilled (--memory 48M, 8M); distinct k-mers as the oracle counts" fastq_same

compressed_same() {
	for c in gz xz bz2 zst; do
		[ -d "$T/$c" ] && [ -n "$(ls "$T/$c")" ] || continue
		build "$T/c$c" "$T/$c" --threads 4 && same "$T/q1" "$T/c$c" || { echo "$c differs"; return 1; }
		build "$T/s$c" "$T/$c" --threads 2 --memory 48M && same "$T/q1" "$T/s$c" ||
			{ echo "$c differs at 48M"; return 1; }
	done
}
check "FASTQ compressed by gzip, xz, bzip2 and zstd: the plain file's bytes, at 4 threads and at 2 in 48M" compressed_same

refused() { # refused DIR PATTERN: a build of DIR fails at 1 and at 4 threads, saying PATTERN (in $T/refused1.err, $T/refused4.err), and leaves no snapshot
	for t in 1 4; do
		rm -rf "$T/refused"
		! "$BFI" build -q -o "$T/refused" --threads "$t" --input fasta --kmer 31 "$1" 2>"$T/refused$t.err" &&
			grep -q "$2" "$T/refused$t.err" && [ ! -e "$T/refused" ] || { cat "$T/refused$t.err"; return 1; }
	done
}

bgzf_same() { # BGZF's members decompressed on threads: the plain file's bytes; a bad member an error
	for t in 2 8; do
		build "$T/b$t" "$T/bgzf" --threads "$t" && same "$T/q1" "$T/b$t" || { echo "$t differs"; return 1; }
	done
	build "$T/bm" "$T/bgzf" --threads 4 --memory 48M && same "$T/q1" "$T/bm" &&
		build "$T/bx" "$T/mixbgzf" --threads 4 && same "$T/q1" "$T/bx" &&
		refused "$T/badbgzf" "reads.fq.gz: .*(at byte [0-9]* of the file)"
}
check "BGZF decompressed on threads: the plain file's bytes at 2, 8 and 4 threads in 48M, and with a plain gzip member among its own; a corrupt member an error at 1 and 4, no snapshot" bgzf_same

zstd_frames_same() { # zstd's frames decompressed on threads: the plain file's bytes; a bad frame an error
	[ -s "$T/zstf/reads.fq.zst" ] || { echo "SKIP: no zstd"; return 0; }
	zstd -q -t "$T/zstf/reads.fq.zst" && ! zstd -q -t "$T/zstbad/reads.fq.zst" 2>/dev/null || return 1
	for t in 1 2 8; do
		build "$T/z$t" "$T/zstf" --threads "$t" && same "$T/q1" "$T/z$t" || { echo "$t differs"; return 1; }
	done
	[ "$(ls "$T"/piece.* | wc -l)" -eq 38 ] || { echo "the pieces are not as the frames expect"; return 1; }
	build "$T/zm" "$T/zstf" --threads 4 --memory 48M && same "$T/q1" "$T/zm" &&
		build "$T/zs" "$T/zstf" --threads 4 --memory 24M && same "$T/q1" "$T/zs" &&
		refused "$T/zstbad" "reads.fq.zst: .*(in the zstd frame at byte [0-9]* of the file)" &&
		cmp "$T/refused1.err" "$T/refused4.err"
}
check "zstd in frames decompressed on threads (a skippable frame, large ones that name their size or not): the plain file's bytes at 1, 2, 8, and 4 threads in 48M and 24M; a corrupt frame the same error at 1 and 4, no snapshot" zstd_frames_same

xz_blocks_same() { # xz's blocks decompressed on liblzma's threads: the plain file's bytes; a bad block an error
	[ -s "$T/xzb/reads.fq.xz" ] || { echo "SKIP: no xz"; return 0; }
	[ "$(xz -lv "$T/xzb/reads.fq.xz" | awk '$1 == "Blocks:" { print $2; exit }')" -gt 10 ] || return 1
	for t in 2 8; do
		build "$T/x$t" "$T/xzb" --threads "$t" && same "$T/q1" "$T/x$t" || { echo "$t differs"; return 1; }
	done
	build "$T/xm" "$T/xzb" --threads 4 --memory 48M && same "$T/q1" "$T/xm" &&
		refused "$T/xzbad" "reads.fq.xz: .*xz data.*(at byte [0-9]* of the file)"
}
check "xz in blocks (xz -T) decompressed on threads: the plain file's bytes at 2, 8 and 4 threads in 48M; a corrupt block an error at 1 and 4, no snapshot" xz_blocks_same

fasta_same() {
	build "$T/a1" "$T/fa" --threads 1 &&
		build "$T/a4" "$T/fa" --threads 4 && same "$T/a1" "$T/a4" &&
		build "$T/am" "$T/fa" --threads 4 --memory 48M && same "$T/a1" "$T/am" &&
		build "$T/as" "$T/fa" --threads 5 --memory 8M && same "$T/a1" "$T/as" &&
		read -r distinct <"$T/fa.oracle" &&
		awk -F '\t' -v d="$distinct" '$3 != d { print "distinct " $3 ", the oracle " d; exit 1 }' "$T/a1.sets"
}
check "FASTA records cut across parts (CRLF, blanks, lowercase, N runs, a comment): the same bytes at 1, 4 and 5 threads and in 48M and 8M; distinct k-mers as the oracle counts" fasta_same

min_count_same() {
	read -r distinct kept <"$T/fq.oracle" &&
		build "$T/m1" "$T/fq" --threads 1 --min-count 2 &&
		build "$T/m4" "$T/fq" --threads 4 --min-count 2 && same "$T/m1" "$T/m4" &&
		build "$T/ms" "$T/fq" --threads 4 --min-count 2 --memory 8M && same "$T/m1" "$T/ms" &&
		build "$T/mz" "$T/gz" --threads 3 --min-count 2 --memory 48M && same "$T/m1" "$T/mz" &&
		awk -F '\t' -v d="$distinct" -v k="$kept" '$3 != k || $7 != d || $8 != d - k {
			print "kept " $3 " seen " $7 " dropped " $8 "; the oracle: kept " k " of " d; exit 1 }' "$T/m4.sets"
}
check "--min-count 2: kept, seen and dropped k-mers exact against the oracle; the same bytes at 1 and 4 threads, held or spilled, plain or gzip" min_count_same

shared_out() {
	rm -rf "$T/st"
	"$BFI" build --stats -o "$T/st" --threads 4 --input fasta --kmer 31 "$T/fq" 2>"$T/stats" &&
		awk '$3 == "reading" { r = $7 + 0 } $3 == "filling" { f = $7 + 0 }
			END { if (r < 1.5 || f < 1.5) { print "reading " r "x, filling " f "x"; exit 1 } }' "$T/stats"
}
check "--stats at 4 threads: one file's reading and filling shared out (CPU over the busiest thread 1.5x or more)" shared_out

full_disk() { # a lone set's rows are written in place through a mapping: a full disk is an error, not SIGBUS
	mkdir -p "$T/small" && mount -t tmpfs -o size=256k tmpfs "$T/small" 2>/dev/null ||
		{ echo "SKIP: cannot mount a small tmpfs here"; return 0; }
	"$BFI" build -q -o "$T/small/snap" --threads 4 --input fasta --kmer 31 "$T/fq" 2>"$T/full.err"
	st=$?
	umount "$T/small"
	[ "$st" -ne 0 ] && [ "$st" -lt 128 ] && grep -q "No space left on device" "$T/full.err" ||
		{ echo "exit $st"; cat "$T/full.err"; return 1; }
}
check "a lone large set's rows written in place on a disk too small for them: 'No space left on device', no crash" full_disk

# errors: the first in the file, as one thread reports it
mkdir -p "$T/bad1" "$T/bad2" "$T/bad3"
# a quality two longer than its sequence, past line 30000; a line that is no record after one past 24000
awk '{ print } /^\+r/ && NR > 30000 && !done { getline; print $0 "FF"; done = 1 }' "$T/fq/reads.fq" >"$T/bad1/reads.fq"
awk '{ print } /^\+r/ && NR > 24000 && !done { getline; print; print "not a record"; done = 1 }' \
	"$T/fq/reads.fq" >"$T/bad2/reads.fq"
head -c $(($(wc -c <"$T/gz/reads.fq.gz") / 2)) "$T/gz/reads.fq.gz" >"$T/bad3/reads.fq.gz"
errors_same() {
	for b in bad1 bad2 bad3; do
		rm -rf "$T/e"
		! "$BFI" build -q -o "$T/e" --threads 1 --input fasta --kmer 31 "$T/$b" 2>"$T/e1" || return 1
		for t in 2 4; do
			! "$BFI" build -q -o "$T/e" --threads "$t" --input fasta --kmer 31 "$T/$b" 2>"$T/e$t" &&
				cmp "$T/e1" "$T/e$t" || { echo "$b at $t threads:"; cat "$T/e1" "$T/e$t"; return 1; }
		done
		[ ! -e "$T/e" ] || return 1
		case $b in bad3) ;; *) grep -q "reads.fq:[0-9]*: " "$T/e1" || { cat "$T/e1"; return 1; } ;; esac
	done
}
check "a quality too long, a line that is no record, a gzip stream cut short: the same error at 1, 2 and 4 threads, and no snapshot" errors_same

[ "$fails" -eq 0 ]
