#!/bin/sh
# slurm.sh - the workflow (tools/workflow) on a one-node Slurm cluster
# brought up here, on localhost: munge and Slurm's controller and node
# daemon started with a config written into a scratch directory (its own
# ports, socket, state and logs; no accounting database: sacct -c reads
# the job completion log), the workflow run through the Slurm profile
# (sbatch, a job per rule with the threads and memory it declares), its
# jobs listed by sacct, its merged answers checked against the joined
# index; then the daemons stopped and everything removed. As root, on
# Debian: slurm-wlm and munge are installed if missing. Not part of CI.
# Usage: sh tests/bench/slurm.sh [CONFIG.yaml]    (default: the workflow's example)
set -eu
cd "$(dirname "$0")/../.."
ROOT=$PWD
BFI=${BFI:-$ROOT/bfi}
[ "$(id -u)" = 0 ] || { echo "slurm.sh: run as root (it starts munged, slurmctld and slurmd)" >&2; exit 2; }
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y slurm-wlm munge >/dev/null
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/bfi-slurm.XXXXXX")
H=$(hostname)
export SLURM_CONF=$W/slurm.conf
stop() {
	for p in slurmd slurmctld munged; do
		[ -f "$W/$p.pid" ] && kill "$(cat "$W/$p.pid")" 2>/dev/null || true
	done
	sleep 1
	rm -rf "$W"
}
trap stop EXIT
mkdir -p "$W/state" "$W/spool" "$W/run"
# the node as this machine has it: its cores, and its memory less 1 GiB
cpus=$(nproc)
mem=$(($(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo) - 1024))
cat >"$SLURM_CONF" <<EOF
ClusterName=bfi
SlurmctldHost=$H
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$W/munge.sock
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/slurmctld.log
SlurmdLogFile=$W/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$W/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
SlurmUser=root
SlurmdUser=root
MpiDefault=none
NodeName=$H CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=bfi Nodes=$H Default=YES MaxTime=INFINITE State=UP
EOF
munged --socket="$W/munge.sock" --pid-file="$W/munged.pid" --log-file="$W/munged.log" \
	--seed-file="$W/munge.seed" --force
slurmctld -f "$SLURM_CONF" -i
slurmd -f "$SLURM_CONF"
i=0
until sinfo -h -o %T 2>/dev/null | grep -q idle; do
	i=$((i + 1))
	[ "$i" -lt 30 ] || { echo "slurm.sh: the node did not come up"; tail "$W/slurmd.log" "$W/slurmctld.log"; exit 1; }
	sleep 1
done
echo "== sinfo"
sinfo
if [ $# -gt 0 ]; then
	cfg="--configfile $(realpath "$1")"
else
	cfg=
fi
echo "== snakemake --profile tools/workflow/profiles/slurm"
start=$(date +%s)
# shellcheck disable=SC2086
(cd "$W/run" && snakemake -s "$ROOT/tools/workflow/Snakefile" --profile "$ROOT/tools/workflow/profiles/slurm" \
	$cfg --config bfi="$BFI" 2>&1 | grep -E '^(Job stats|job |[a-z_]+ +[0-9]+ |total|Submitted|Finished|Complete)' | head -60)
echo "wall $(($(date +%s) - start)) s"
echo "== sacct -c (the job completion log), and each job's resources as Slurm gave them"
sacct -c -o JobID,JobName%18,State,Elapsed,NCPUS
awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^(JobId|Name|Tres)=/) printf "%s ", $i; print "" }' "$W/jobcomp.txt"
if [ $# -eq 0 ]; then
	echo "== the merged answers against the joined index"
	"$BFI" query "$W/run/bfi-out/index.snap" <tools/workflow/example/words.txt |
		cmp - "$W/run/bfi-out/answers/words.txt.tsv" &&
		echo "words.txt.tsv: byte-identical to the joined index's answers"
fi
