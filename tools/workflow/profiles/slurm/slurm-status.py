#!/usr/bin/env python3
"""Snakemake's cluster status for a Slurm job: success, failed or running.

Usage: slurm-status.py JOBID

Asks scontrol while Slurm still holds the job, then sacct (job accounting,
or with -c the job completion log where no accounting is kept).
"""
import subprocess
import sys

DONE = {"COMPLETED"}
FAILED = {"FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL",
          "DEADLINE", "PREEMPTED", "REVOKED"}


def state(job):
    r = subprocess.run(["scontrol", "show", "job", "-o", job], capture_output=True, text=True)
    for field in r.stdout.split():
        if field.startswith("JobState="):
            return field.split("=", 1)[1]
    for extra in ([], ["-c"]):
        r = subprocess.run(["sacct", *extra, "-j", job, "-n", "-X", "-P", "-o", "State"],
                           capture_output=True, text=True)
        words = r.stdout.split()
        if r.returncode == 0 and words:
            return words[0].split()[0]
    return None


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: slurm-status.py JOBID")
    s = state(sys.argv[1])
    print("success" if s in DONE else "failed" if s in FAILED else "running")


main()
