"""python_threads.py - the bfi module's query_sequences on 1 and on N
threads, alternating, ROUNDS times: the reads of a FASTA file at θ = 0.8,
the answers checked to be the same.
Usage: BFI_LIBRARY=./libbfi.so python3 tests/bench/python_threads.py SNAP READS.fa [N] [ROUNDS]
(from the source root, after ./configure && ninja)"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools", "python"))
import bfi  # noqa: E402

snap_path, fasta = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 2
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
reads = [l.strip() for l in open(fasta) if l.strip() and not l.startswith(">")]
times = {1: [], n: []}
with bfi.open(snap_path) as snap:
    one = None
    for _ in range(rounds):
        for t in (1, n):
            t0 = time.perf_counter()
            got = snap.query_sequences(reads, threshold=0.8, threads=t)
            times[t].append(time.perf_counter() - t0)
            if one is None:
                one = got
            assert got == one, f"threads={t}: other answers than one thread's"
best = {t: min(v) for t, v in times.items()}
print(f"{len(reads)} reads: 1 thread {best[1]:.3f} s, {n} threads {best[n]:.3f} s: "
      f"{best[1] / best[n]:.2f}x (each the best of {rounds})")
