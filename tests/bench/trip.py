#!/usr/bin/env python3
"""trip.py - what one request walks through: the functions a trace of
tests/bench/hooks/trip.c shows entered between two marks, and the calls
among them that climb a floor.

Usage: trip.py TRACE START END TREE ROOTS...
  TRACE   the hook's lines "TID E|X OBJECT OFFSET"
  START, END  the trace's lines [START, END) to read (one request's)
  TREE    the source tree the traced binary was built from
  ROOTS   the functions a trip starts from (a thread's outermost calls of
          ours, e.g. the HTTP callbacks); each thread's calls under them count

A stop is a function of ours entered in the trip; a climb is a call whose
callee lives on a higher floor than its caller (the floors, lowest first:
format, reader and writer, tools/common, tools/answer, the commands and
the server). It also lists calls from the server into the command's own
rooms (tools/cli, and tools/query, which held bfi query's room before
tools/answer).
"""
import collections, os, subprocess, sys

FLOORS = [("format/", 0), ("reader/", 1), ("writer/", 1), ("tools/common/", 2),
          ("tools/answer/", 3), ("tools/cli/", 4), ("tools/serve/", 4), ("tools/inspect/", 4),
          ("tools/query/", 4)]  # the command's own query room, before tools/answer


def floor(path):
    for pre, f in FLOORS:
        if path.startswith(pre):
            return f, pre.rstrip("/")
    return None, None


TREE = "."


def resolve(events):
    """(object, offset) -> (function, source file) through addr2line, per object."""
    by_obj = collections.defaultdict(set)
    for _, _, obj, off in events:
        by_obj[obj].add(off)
    names = {}
    for obj, offs in by_obj.items():
        offs = sorted(offs)
        out = subprocess.run(["addr2line", "-f", "-e", obj] + [hex(o) for o in offs],
                             capture_output=True, text=True, check=True).stdout.split("\n")
        for i, o in enumerate(offs):
            src = os.path.relpath(out[2 * i + 1].split(":")[0], TREE)
            names[(obj, o)] = ("%s:%s" % (src, out[2 * i]), src)
    return names


def main():
    global TREE
    path, start, end, TREE = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    roots = set(sys.argv[5:])
    events = []
    with open(path) as f:
        for i, line in enumerate(f):
            if start <= i < end:
                tid, what, obj, off = line.split()
                events.append((tid, what, obj, int(off, 16)))
    names = resolve(events)
    stacks = collections.defaultdict(list)
    stops, edges = {}, set()
    for tid, what, obj, off in events:
        fn, src = names[(obj, off)]
        st = stacks[tid]
        if what == "E":
            inside = st and st[-1][1]
            counted = inside or fn.split(":")[1] in roots
            if counted:
                stops[fn] = src
                if st and st[-1][1]:
                    edges.add((st[-1][0], fn))
            st.append((fn, counted))
        elif st:
            st.pop()
    climbs, into_cli = [], []
    for a, b in sorted(edges):
        fa, ra = floor(stops[a])
        fb, rb = floor(stops[b])
        if fa is not None and fb is not None and fb > fa:
            climbs.append((a, ra, b, rb))
        if ra == "tools/serve" and rb in ("tools/cli", "tools/query"):
            into_cli.append((a, b))
    rooms = collections.Counter(floor(s)[1] or "other" for s in stops.values())
    print("stops %d  climbs %d  server->cli %d" % (len(stops), len(climbs), len(into_cli)))
    print("  by room: " + ", ".join("%s %d" % kv for kv in sorted(rooms.items())))
    cross = collections.Counter((floor(stops[a])[1], floor(stops[b])[1]) for a, b in edges
                                if floor(stops[a])[1] != floor(stops[b])[1])
    print("  calls from room to room: " +
          ", ".join("%s->%s %d" % (a, b, n) for (a, b), n in sorted(cross.items(), key=str)))
    for a, ra, b, rb in climbs:
        print("  climb: %s (%s) -> %s (%s)" % (a, ra, b, rb))
    for a, b in into_cli:
        print("  into a command's room: %s -> %s" % (a, b))


if __name__ == "__main__":
    main()
