#!/bin/sh
# cgrun.sh - run one command cold in a memory cgroup (v1) of LIMIT bytes,
# as root: the page cache dropped first, the command's wall time, peak
# resident memory and bytes read from the disk (/usr/bin/time), the
# cgroup's peak usage and whether the OOM killer struck. Its output goes
# to $OUT (default /tmp/cgrun.out), its stderr's last lines are shown.
# Usage: sh tests/bench/cgrun.sh LIMIT CMD [ARGS...]   (e.g. 144M bfi query ...)
set -u
LIMIT=$1
shift
CG=/sys/fs/cgroup/memory/bfi-cgrun-$$
OUT=${OUT:-/tmp/cgrun.out}
T=$(mktemp -d "${TMPDIR:-/tmp}/bfi-cgrun.XXXXXX")
trap 'rm -rf "$T"; rmdir "$CG" 2>/dev/null' EXIT
mkdir "$CG" || exit 2
echo "$LIMIT" >"$CG/memory.limit_in_bytes"
sync
echo 3 >/proc/sys/vm/drop_caches
/usr/bin/time -f "%e %M %I" -o "$T/t" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@" >"$OUT" 2>"$T/err"
rc=$?
read -r s kb blocks <"$T/t" 2>/dev/null || { s=? kb=0 blocks=0; }
echo "exit $rc, $s s, peak RSS $((kb / 1024)) MiB, $((blocks * 512)) bytes from disk, cgroup peak $(($(cat "$CG/memory.max_usage_in_bytes") / 1048576)) MiB, $(grep oom_kill "$CG/memory.oom_control" | tr '\n' ' ')"
tail -3 "$T/err"
