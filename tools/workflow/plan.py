#!/usr/bin/env python3
"""plan.py - the arithmetic of a RAMBO index of many sequencing runs, built
by this workflow on a cluster: shards and nodes, each job's memory and disk,
build hours, network bytes, index size with and without folds, Lemma 4.1's
false-positive rate, and what a query reads. Every rate it starts from is a
figure bfi measured (tests/bench/RESULTS.md), given as an option so that a
re-measurement, or another machine's, replaces it.

usage: plan.py [--files F] [--tb T] [--nodes N] [--jobs-per-node J]
               [--threads T] [--genome G] [--input raw|counted|kmers] [--fpr P]
               [--cells B] [--reps R] [--folds K] [--file-mb MB] ...
               (plan.py --help lists every option and its source)

With the defaults it prints the plan of tools/workflow/README.md: about
460,000 runs, 170 TB of FASTQ.gz, on 100 nodes.
"""
import argparse, math

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                             formatter_class=argparse.ArgumentDefaultsHelpFormatter)
ap.add_argument("--files", type=float, default=460_000, help="sequencing runs, a set each")
ap.add_argument("--tb", type=float, default=170, help="their FASTQ.gz, terabytes (10^12)")
ap.add_argument("--file-mb", type=float, default=0,
                help="FASTQ.gz megabytes a run (0: tb / files)")
ap.add_argument("--nodes", type=int, default=100)
ap.add_argument("--jobs-per-node", type=int, default=2, help="shard builds a node runs at once")
ap.add_argument("--threads", type=int, default=16, help="each build job's --threads")
ap.add_argument("--node-mem-gb", type=float, default=192, help="a node's memory")
ap.add_argument("--genome", type=float, default=5e6,
                help="distinct k-mers of a run's genome (a bacterium's: 5 Mbp)")
ap.add_argument("--input", choices=("raw", "counted", "kmers"), default="raw",
                help="raw: bfi reads the runs' FASTQ.gz and keeps every k-mer, sequencing "
                     "errors' too; counted: bfi reads them with --min-count 2 (the workflow's "
                     "min_count: 2), counting each run's k-mers and keeping those seen twice or "
                     "more; kmers: k-mer lists made beforehand, the errors removed")
ap.add_argument("--fpr", type=float, default=0.01,
                help="Lemma 4.1's rate, for a key of one set, to meet unfolded")
ap.add_argument("--cells", type=int, default=50_000, help="B, cells a repetition (all shards)")
ap.add_argument("--reps", type=int, default=5, help="R, repetitions")
ap.add_argument("--folds", type=int, default=3, help="folds to tabulate")
# measured figures (tests/bench/RESULTS.md, "Build" and "Query speed")
ap.add_argument("--occ-per-mb", type=float, default=24e6 / 14.8,
                help="31-mer occurrences a megabyte of FASTQ.gz (reads.sh: 24 M in 14.8 MB)")
ap.add_argument("--err-per-occ", type=float, default=3.40e6 / 24e6,
                help="error k-mers an occurrence at 0.5%% substitutions (reads.sh: 4.40 M "
                     "distinct, 1.00 M of them the genome's, of 24 M)")
ap.add_argument("--kept-per-occ", type=float, default=0.21e6 / 96e6,
                help="error k-mers an occurrence that --min-count 2 keeps, seen twice "
                     "(reads.sh MIN_COUNT=2, one 4 Mbp genome at 30x: 4.21 M kept of 17.6 M)")
ap.add_argument("--rate", type=float, default=2.60e6,
                help="rambo build from FASTQ.gz, occurrences a second a core (plan_check.sh "
                     "SCALE=4000: 8 shards of 14 runs, R = 5, k = 1, 1 thread, two at once)")
ap.add_argument("--rate-counted", type=float, default=7.84e6,
                help="rambo build from FASTQ.gz with --min-count 2, occurrences a second a "
                     "core (plan_check.sh SCALE=4000, the same shards)")
ap.add_argument("--count-bytes", type=float, default=54,
                help="bytes a distinct k-mer takes while a run is counted (count.c: 20-byte "
                     "slots at most three quarters full, doubling: 27 to 54)")
ap.add_argument("--rate-keys", type=float, default=3.10e6,
                help="rambo build from k-mer lists, keys a second a core (plan_check.sh "
                     "SCALE=4000)")
ap.add_argument("--disk-gbs", type=float, default=1.17,
                help="a node's disk, read in sequence, GB/s (scan.sh: cat of a 2.58 GB index)")
ap.add_argument("--speedup16", type=float, default=11.3,
                help="a build's parallelism at 16 threads, every phase (scaling.sh --stats, "
                     "a flat build)")
ap.add_argument("--stack-mbs", type=float, default=57.9,
                help="bytes a second bfi stack writes, MB/s (plan_check.sh SCALE=4000, "
                     "streaming its rows within --memory)")
ap.add_argument("--shell", action="store_true",
                help="print the build parameters and predictions as shell assignments")
a = ap.parse_args()

K = 31
F, S_nodes = a.files, a.nodes
S = a.nodes * a.jobs_per_node                    # shards: a build job each
B, R = a.cells, a.reps
assert B % S == 0, "cells must be a multiple of the shards"
file_mb = a.file_mb or a.tb * 1e6 / F
occ = file_mb * a.occ_per_mb                     # 31-mer occurrences a run
seen = a.genome + a.err_per_occ * occ              # distinct k-mers a run gives
D = {"raw": seen, "counted": a.genome + a.kept_per_occ * occ, "kmers": a.genome}[a.input]

def width(n, k, q):
    """bfi's filter_m: the bits at which n keys give rate q with k hashes."""
    return math.ceil(-n * k / math.log1p(-math.exp(math.log(q) / k)))

def lemma(pc, b, v, r):
    """Lemma 4.1: the rate at which a set not holding a key of v sets is reported."""
    q = (1 - 1 / b) ** v
    return (pc * q + 1 - q) ** r

def fill_rate(n, m, k):
    return (1 - math.exp(-k * n / m)) ** k

def cell_rate(b, d, m, k):
    """A set's cell's rate, expected over the runs the two-level hash puts beside it: the set
    and Binomial(F - 1, 1/b) others (so the rate Lemma 4.1 sees, the cells as loaded)."""
    lam, total, pr, n = (F - 1) / b, 0.0, math.exp(-(F - 1) / b), 0
    while n < 10 * lam + 50:
        total += pr * fill_rate((n + 1) * d, m, k)
        n += 1
        pr *= lam / n
    return total

union = F / B * D                                 # keys a cell on average: F/B runs, disjoint

def bits_for(k):
    """The least m (to 0.1%) at which Lemma 4.1 for a key of one set, with the cells as
    loaded, is at most fpr, with k hashes; None if no m does."""
    lo, hi = 1.0, 64.0 * union
    if lemma(cell_rate(B, D, hi, k), B, 1, R) > a.fpr:
        return None
    while hi - lo > hi * 1e-3:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if lemma(cell_rate(B, D, mid, k), B, 1, R) <= a.fpr else (mid, hi)
    return math.ceil(hi)

# the workflow gives every shard --bits m and --hashes k (stacked shards must share them):
# the k with the fewest bits
k, m = min(((k, bits_for(k)) for k in range(1, 17) if bits_for(k)), key=lambda x: x[1])
pc = cell_rate(B, D, m, k)                        # a set's cell's rate, as loaded
def row_bytes(b):
    """Bytes a RAMBO row of b cells: 1, 2, 4 or 8 up to 64 cells, whole words past."""
    return next(x for x in (1, 2, 4, 8) if 8 * x >= b) if b <= 64 else (b + 63) // 64 * 8

row = row_bytes(B)
size = R * m * row                                # the stacked index, rows
shard = R * m * row_bytes(B // S)
cores = a.threads * a.jobs_per_node
# a build's speed-up on T threads: measured at 1 and 16 (and taken as linear between), no further
speed = 1 + (a.speedup16 - 1) * (min(a.threads, 16) - 1) / 15
node_occ = F / S_nodes * (D if a.input == "kmers" else occ)
rate = {"raw": a.rate, "counted": a.rate_counted, "kmers": a.rate_keys}[a.input]
hours = node_occ / (rate * speed * a.jobs_per_node) / 3600 if rate else float("nan")
in_bytes = F * (D * 32 if a.input == "kmers" else file_mb * 1e6)   # k-mer lists: 32 bytes a line
gb = 1e9

if a.shell:
    print("S=%d B=%d b=%d R=%d K=%d M=%d PE=%.6g SHARD_BYTES=%d STACK_BYTES=%d OCC=%d D=%d"
          % (S, B, B // S, R, k, m, pc, shard, size, occ, D))
    for f in range(1, a.folds + 1):
        print("FOLD%d_BYTES=%d FOLD%d_PE=%.6g" % (f, size >> f, f, cell_rate(B >> f, D, m, k)))
    raise SystemExit(0)

def tb(x):
    return "%.2f TB" % (x / 1e12) if x >= 1e12 else "%.1f GB" % (x / gb)

print("| quantity | value | from |")
print("|---|---|---|")
print("| runs, FASTQ.gz | %d runs, %.0f TB, %.0f MB a run | the data |" % (F, F * file_mb / 1e6, file_mb))
print("| 31-mer occurrences a run | %.3g | %.3g a MB of FASTQ.gz (measured) |" % (occ, a.occ_per_mb))
print("| distinct k-mers a run | %.3g | genome %.3g%s |" % (
    D, a.genome, {"raw": " + %.3f error k-mers an occurrence (measured)" % a.err_per_occ,
                  "counted": " + %.4f error k-mers an occurrence seen twice, kept (measured); "
                             "%.3g seen, %.0f%% dropped" % (a.kept_per_occ, seen, 100 * (1 - D / seen)),
                  "kmers": "; errors removed before bfi"}[a.input]))
print("| shards, nodes | %d shards on %d nodes, %d a node, %d threads each (%d cores a node) | "
      "a shard a build job |" % (S, S_nodes, a.jobs_per_node, a.threads, cores))
print("| cells B, repetitions R | %d (%d a shard), %d | given: the paper's |" % (B, B // S, R))
print("| keys a cell | %.3g on average; a set's cell holds it and Binomial(F - 1, 1/B) more "
      "runs | F / B runs of D keys, disjoint |" % union)
print("| filter bits m, hashes k | **%.4g bits (%.2f a key), k = %d**: the fewest bits at "
      "which Lemma 4.1 for a key of one set is %.3g, a set's cells as loaded | `bits`, `hashes` "
      "in the config |" % (m, m / union, k, a.fpr))
print("| cells' rate p | %.3g | expected over a set's cell's load |" % pc)
print("| index, stacked | **%s** (%s a shard) | R m B/8 |" % (tb(size), tb(shard)))
print("| false-positive rate | V = 1: %.3g, V = 2: %.3g, V = 10: %.3g | Lemma 4.1 |" % (
    lemma(pc, B, 1, R), lemma(pc, B, 2, R), lemma(pc, B, 10, R)))
print("| false sets an absent k-mer | %.1f of %d | F p^R |" % (F * pc ** R, F))
for f in range(1, a.folds + 1):
    b2 = B >> f
    pe2 = cell_rate(b2, D, m, k)
    print("| index, %d fold%s (B = %d) | %s; Lemma 4.1 V = 1: %.3g, V = 10: %.3g; an absent k-mer "
          "%.0f sets | halved a fold; cells hold 2^f times the runs |" % (
              f, "s" if f > 1 else "", b2, tb(size / 2 ** f), lemma(pe2, b2, 1, R),
              lemma(pe2, b2, 10, R), F * pe2 ** R))
print("| build, a node | **%.2f h** for %.3g %s | %.3g a second a core (measured) x %.1f "
      "(the speed-up at %d threads; 11.3 measured at 16) x %d jobs |" % (hours, node_occ,
                                             "keys" if a.input == "kmers" else "occurrences", rate,
                                             speed, a.threads, a.jobs_per_node))
mem = a.node_mem_gb * 0.9 / a.jobs_per_node * gb   # a job's --memory
count_scratch = 0.0
if a.input == "counted":
    # each thread counts a run in its share of a quarter of --memory; past it, the counts
    # go to a scratch file as sorted runs of 20-byte records, merged at the run's end
    share = mem / 4 / a.threads
    count_mem = seen * a.count_bytes
    count_scratch = a.threads * seen * 20 if count_mem > share else 0.0
    print("| counting, a job | each of %d threads counts a run: %s of counts for its %.3g distinct "
          "k-mers (%d bytes each), against a share of %s; %s | count.c |" % (
              a.threads, tb(count_mem), seen, a.count_bytes, tb(share),
              "past it, %s of scratch at once (%d runs' 20-byte counts)" % (tb(count_scratch), a.threads)
              if count_scratch else "held in memory, no scratch"))
records = F / S * D * 24                          # the writer's (set, key) records, 24 bytes each
spill = max(0.0, records - mem)
stripes = math.ceil(shard / mem)
# each stripe of rows reads the spilled keys back from the disk, the node's jobs at once
reread = stripes * spill * a.jobs_per_node / (a.disk_gbs * gb) / 3600
if reread:
    print("| build, reading the keys back | %.1f h more: %d stripe%s a job, each reading %s of "
          "spilled keys at %.2f GB/s a node | the writer's spool |" % (
              reread, stripes, "s" if stripes > 1 else "", tb(spill), a.disk_gbs))
print("| memory a job | --memory %.0f GB: the shard's %s of rows in %d stripe%s (each reads the "
      "keys back once) | node memory / jobs, less 10%% |" % (mem / gb, tb(shard), stripes,
                                                           "s" if stripes > 1 else ""))
print("| disk a job | %s: the keys' spill (%s of 24-byte records, less --memory)%s, the shard and "
      "its pack | the writer's spool |" % (tb(spill + 2 * shard + count_scratch), tb(records),
                                           ", the counts' scratch (%s)" % tb(count_scratch)
                                           if count_scratch else ""))
print("| network | %s in (%s, %s a node); %s of shards to a stacking node, or none "
      "when each is served where built | |" % (tb(in_bytes), "the runs" if a.input != "kmers"
                                               else "k-mer lists", tb(in_bytes / S_nodes), tb(size)))
print("| a k-mer query reads | %d rows of %d bytes stacked (%.0f KB); %d rows of %d bytes a shard "
      "| R k rows of B/8, of B/S/8 |" % (R * k, row, R * k * row / 1e3, R * k, row_bytes(B // S)))
print("| stack on one machine | %.1f h at %.0f MB/s, within its --memory (rows a share at a "
      "time), and the disk for the stack (%s) | bfi stack |" % (size / (a.stack_mbs * 1e6) / 3600,
                                                             a.stack_mbs, tb(size)))
