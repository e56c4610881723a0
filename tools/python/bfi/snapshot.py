"""snapshot.py - bfi.open and the Snapshot it returns: queries, names,
facts and scans of a snapshot or collection opened in this process."""

import ctypes
import functools
import gc
import itertools
import os
import threading

from .sequences import THETA_EVERY, _Sequences, _theta  # noqa: F401 (THETA_EVERY: public)
from ._ffi import (Error, LAYOUTS, ScanWarning, _BATCH, _CODES, _FORM_AUTO, _FORM_KEY,
                   _FORM_PROTEIN, _Form, _MANY_QUERIES, _MANY_TEXTS, _expr_protein, _kmer_k,
                   _Info, _KeyHash, _LayoutInfo, _LayoutUnion, _NAMES_LISTED, _NOT_FOUND,
                   _NO_CATALOG, _OPEN_FLAGS, _OPEN_SCAN, _SYNTAX, _SZ, _Segment, _SetStats, _bytes,
                   _catalog_meta, _check, _close, _expr_free, _expr_keys, _expr_kmers,
                   _expr_parse,
                   _expr_path, _expr_query, _expr_text, _hash_keys, _held, _info, _layout,
                   _layout_info, _open, _query_compiled, _query_expr, _query_form,
                   _query_key_layout, _query_keys, _query_many, _query_text, _query_threshold,
                   _result_count, _result_create, _result_destroy, _result_ordinals,
                   _result_scores, _scan_many_at, _segment, _set_find, _set_name, _set_seen,
                   _set_stats, _u32, memory_limits)


def open(path, *, trusted=False, no_catalog=False, small_pages=False, warm=False, scan=None,
         memory=None):
    """Open the snapshot or collection at path (a directory), or a pack of
    either. Use as a context manager, or call close(). Raises Error. scan
    and memory: see Snapshot."""
    return Snapshot(path, trusted=trusted, no_catalog=no_catalog, small_pages=small_pages,
                    warm=warm, scan=scan, memory=memory)


def _layouts(snap, flags):
    """Each layout's facts (bfi_layout_info) of one snapshot, by name."""
    out = {}
    for name, flag in LAYOUTS.items():
        if not flags & flag:
            continue
        li = _LayoutInfo()
        _check(_layout_info(snap, flag, ctypes.byref(li)), name)
        ld = {"sets": li.n_sets, "hashes": li.hashes, "bits": li.bits, "offset": li.offset,
              "size": li.size}
        # the layout's own facts: the union's member of its name, field for field (a C int a flag)
        own = getattr(li.u, name, None) if name in dict(_LayoutUnion._fields_) else None
        for field, ftype in (own._fields_ if own is not None else []):
            v = getattr(own, field)
            ld[field] = bool(v) if ftype is ctypes.c_int else v
        out[name] = ld
    return out


class _Expr:
    """A compiled query (bfi_expr), freed with the object."""

    __slots__ = ("p",)

    def __init__(self):
        self.p = ctypes.c_void_p()

    def __del__(self):
        if self.p:
            _expr_free(ctypes.byref(self.p))


_MANY = 1024  # sequences or texts a call into bfi_query_many, at most


def _threads(threads):
    """threads as a count: 0 is one per online core."""
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 0:
        raise ValueError(f"bfi: threads is 0 (one per online core) or more, not {threads!r}")
    if threads == 0:
        threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else (os.cpu_count() or 1)
    return threads


class Snapshot(_Sequences):
    """An open snapshot or collection: read-only, queried in place.

    A Snapshot may be shared by threads for reading; each call uses its
    own scratch result. Close it (or leave the with block) to unmap it;
    answers already returned stay valid, being Python objects. close()
    may be called while other threads query: their calls in progress end
    normally, the snapshot is unmapped when the last of them returns, and
    every call after close() raises ValueError.

    An index larger than memory (bytes; default memory_limits()["query"],
    three quarters of what the process may hold) is scanned: a ScanWarning says so once, and
    lists of queries are answered in passes over it (bfi_scan_many), in
    batches within memory, with the mapped path's answers. scan=False maps
    it anyway; scan=True scans one that fits. A pack so scanned is read in
    place and answers lists only (other calls raise BFI_E_SCAN_ONLY).
    """

    def __init__(self, path, *, trusted=False, no_catalog=False, small_pages=False,
                 warm=False, scan=None, memory=None):
        self.path = os.fspath(path)
        bpath = os.fsencode(self.path)
        if b"\0" in bpath:
            raise ValueError("bfi: embedded null byte in the path")
        if memory is not None and (not isinstance(memory, int) or isinstance(memory, bool)
                                   or memory <= 0):
            raise ValueError(f"bfi: memory is a positive number of bytes, not {memory!r}")
        flags = 0
        for k, v in (("trusted", trusted), ("no_catalog", no_catalog),
                     ("small_pages", small_pages), ("warm", warm)):
            if v:
                flags |= _OPEN_FLAGS[k]
        self._p = ctypes.c_void_p()
        self._results = []  # each thread's scratch result, freed at close
        self._lock = threading.Lock()
        self._local = threading.local()
        self._users = 0  # calls running on the snapshot (_enter, _leave)
        self._closing = False
        # memory bounds a scan's batches; by default three quarters of what the process may hold
        self.memory = memory or memory_limits()["query"]
        # a pack is opened to be scanned until its index's size says whether it fits
        pack = scan is not False and os.path.isfile(self.path)
        _check(_open(bpath, flags | (_OPEN_SCAN if pack else 0), ctypes.byref(self._p)),
               self.path)
        i = _Info()
        _info(self._p, ctypes.byref(i))
        self.scan = bool(scan) if scan is not None else i.file_size > self.memory
        if scan is None and self.scan:
            import warnings

            warnings.warn(f"bfi: {self.path}: the index ({i.file_size >> 20} MiB) is larger "
                          f"than the {self.memory >> 20} MiB this process may hold: lists of "
                          "queries are answered in passes over it (scan=False maps it instead)",
                          ScanWarning, stacklevel=2)
        if pack and not self.scan:  # a pack that fits: read into memory, for the mapped path
            _close(ctypes.byref(self._p))
            _check(_open(bpath, flags, ctypes.byref(self._p)), self.path)
            _info(self._p, ctypes.byref(i))
        self._ordinals = i.ordinals
        self._names = [None] * i.ordinals if i.ordinals <= _NAMES_LISTED else {}
        self._form = None  # whether queries are formed by the catalog's rules (_formed)

    # -- life --

    def close(self):
        """Unmap the snapshot and free its scratch results: at once, or, if
        other threads are in calls on it, when the last of those returns.
        Further calls raise ValueError."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            now = self._users == 0
        if now:
            self._release()

    def _release(self):
        if self._p:
            _close(ctypes.byref(self._p))
        with self._lock:
            for r in self._results:
                _result_destroy(ctypes.byref(r))
            self._results = []
        self._local = threading.local()
        self._names = []

    def _enter(self):
        with self._lock:
            if self._closing or not self._p:
                raise ValueError("bfi: the snapshot is closed")
            self._users += 1

    def _leave(self):
        with self._lock:
            self._users -= 1
            last = self._closing and self._users == 0
        if last:  # close() came while this call ran: it was the last
            self._release()

    def _res(self):
        """This thread's scratch result (bfi_result), made on first use."""
        r = getattr(self._local, "r", None)
        if r is None:
            r = ctypes.c_void_p()
            _check(_result_create(ctypes.byref(r)))
            with self._lock:
                self._results.append(r)
            self._local.r = r
        return r

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        if getattr(self, "_p", None) is not None and hasattr(self, "_closing"):
            self.close()

    def __repr__(self):
        state = "open" if self._p else "closed"
        return f"<bfi.Snapshot {self.path!r} {state}>"

    def _snap(self):
        if not self._p or (self._closing and not self._users):
            raise ValueError("bfi: the snapshot is closed")
        return self._p

    # -- what it holds --

    @_held
    def info(self):
        """What the snapshot holds, as a dict: format, sizes, sets, layouts
        (each with its own facts), and for a collection its segments."""
        s = self._snap()
        i = _Info()
        _info(s, ctypes.byref(i))
        d = {
            "format": f"{i.major}.{i.minor}",
            "file_size": i.file_size,
            "catalog_size": i.catalog_size,
            "snapshot_id": bytes(i.snapshot_id).hex(),
            "sets": i.n_sets,
            "bits": i.bits,
            "hashes": i.hashes,
            "sections": i.n_sections,
            "has_catalog": bool(i.has_catalog),
        }
        segs = []
        for n in range(i.segments):
            sg = _Segment()
            _check(_segment(s, n, ctypes.byref(sg)), "segment")
            segs.append((sg, _layouts(sg.snap, i.layouts)))
        if i.segments:  # a collection: each layout's facts are its segments'
            d["layouts"] = {name: {"segments": [ls[name] for _, ls in segs]}
                            for name in segs[0][1]}
        else:
            d["layouts"] = _layouts(s, i.layouts)
        if i.segments:
            d["generation"] = i.generation
            d["ordinals"] = i.ordinals
            d["segments"] = [{"name": sg.name.decode(), "first": sg.first, "sets": sg.n_sets,
                              "live": sg.live} for sg, _ in segs]
        for key in ("writer", "fpr", "kmer", "input"):
            v = self.meta(key)
            if v is not None:
                d.setdefault("meta", {})[key] = v
        return d

    @_held
    def meta(self, key):
        """A catalog metadata value (such as "fpr" or "kmer") as str, or None."""
        if not isinstance(key, str) or "\0" in key:
            raise ValueError("bfi: a meta key is a str without NUL")
        v, n = ctypes.c_void_p(), _SZ()
        rc = _catalog_meta(self._snap(), key.encode(), ctypes.byref(v), ctypes.byref(n))
        if rc in (_NOT_FOUND, _NO_CATALOG):
            return None
        _check(rc, key)
        return ctypes.string_at(v, n.value).decode("utf-8", "surrogateescape")

    @_held
    def __len__(self):
        i = _Info()
        _info(self._snap(), ctypes.byref(i))
        return i.n_sets

    @_held
    def name(self, ordinal):
        """The name of set ordinal. Raises Error (BFI_E_NOT_FOUND) for none."""
        if not isinstance(ordinal, int) or isinstance(ordinal, bool):
            raise TypeError(f"an ordinal is an int, not {type(ordinal).__name__}")
        if not 0 <= ordinal < self._ordinals:  # past what C's uint32_t holds, too
            raise Error(_NOT_FOUND, f"set {ordinal}")
        names = self._names
        listed = isinstance(names, list)
        n = (names[ordinal] if 0 <= ordinal < len(names) else None) if listed \
            else names.get(ordinal)
        if n is None:
            p, ln = ctypes.c_void_p(), _SZ()
            _check(_set_name(self._snap(), ordinal, ctypes.byref(p), ctypes.byref(ln)),
                   f"set {ordinal}")
            n = ctypes.string_at(p, ln.value).decode("utf-8", "surrogateescape")
            names[ordinal] = n
        return n

    def _named(self, ords):
        """The names of ordinals ords (looked up once each, then kept)."""
        names, name = self._names, self.name
        if isinstance(names, list):
            return [names[o] or name(o) for o in ords]
        return [names.get(o) or name(o) for o in ords]

    @_held
    def ordinal(self, name):
        """The ordinal of the set called name. Raises Error (BFI_E_NOT_FOUND)."""
        b = _bytes(name)
        o = ctypes.c_uint32()
        _check(_set_find(self._snap(), b, len(b), ctypes.byref(o)), repr(name))
        return o.value

    @_held
    def sets(self):
        """Every live set: a list of dicts with its ordinal, name, distinct
        keys, filter bits, bits set and fill ratio (bits set / bits); for a
        build with min_count, also "seen", the distinct keys its files gave
        (keys of them were kept, the rest dropped)."""
        s = self._snap()
        out = []
        st = _SetStats()
        seen = ctypes.c_uint64()
        for o in range(self._ordinals):
            rc = _set_stats(s, o, ctypes.byref(st))
            if rc == _NOT_FOUND:  # a removed set's hole in a collection
                continue
            _check(rc, f"set {o}")
            out.append({"ordinal": o, "name": self.name(o), "keys": st.distinct_keys,
                        "bits": st.bits, "bits_set": st.bits_set,
                        "fill": st.bits_set / st.bits if st.bits else 0.0})
            rc = _set_seen(s, o, ctypes.byref(seen))
            if rc != _NOT_FOUND:
                _check(rc, f"set {o}")
                out[-1]["seen"] = seen.value
        return out

    # -- answers --

    def _answer(self, r, ordinals, as_array, scored=False):
        """What result r holds (None: nothing): names, ordinals or an array;
        with scored, (set, score) pairs (or a pair of arrays)."""
        n = _result_count(r) if r else 0
        addrs = [_result_ordinals(r) if n else None]
        if scored:
            addrs.append(_result_scores(r) if n else None)
        if as_array:
            import numpy

            arrs = [numpy.frombuffer(ctypes.string_at(a, 4 * n), dtype=numpy.uint32) if n
                    else numpy.zeros(0, dtype=numpy.uint32) for a in addrs]
            return tuple(arrs) if scored else arrs[0]
        ords = _u32(addrs[0], n)
        sets = ords if ordinals else self._named(ords)
        if scored:
            return list(zip(sets, _u32(addrs[1], n)))
        return sets

    def _many(self, what, items, k, theta, layout, ordinals, as_array, threads, label,
              scored=None):
        """The answers of items (bytes), in order, through bfi_query_many:
        a call a chunk, on threads threads. Python's lock is released for
        the length of each call, so the library's work of one chunk runs
        beside the Python work (names, lists) of another; chunks are
        answered in order, and the first chunk that fails raises its error,
        as one thread would."""
        threads = _threads(threads)
        n = len(items)
        if n == 0:
            return []
        s = self._snap()
        scored = theta != 0 if scored is None else scored
        size = max(1, min(_MANY, -(-n // (threads * 4))))
        call = _query_many
        if self.scan:  # one call: the library cuts the batches by memory, each a pass
            threads, size = 1, n
            call = functools.partial(_scan_many_at, self.memory)
        chunks = [(i, items[i:i + size]) for i in range(0, n, size)]
        spare, made = [], []  # results of this call, one per thread at most

        def run(chunk):
            start, part = chunk
            try:
                r = spare.pop()
            except IndexError:
                r = ctypes.c_void_p()
                _check(_result_create(ctypes.byref(r)))
                made.append(r)
            try:
                buf = b"".join(part)
                ends = (_SZ * len(part))(*itertools.accumulate(map(len, part)))
                aends, done = (_SZ * len(part))(), _SZ()
                rc = call(s, layout, what, k, theta, buf, ends, len(part), r, aends,
                          ctypes.byref(done))
                if rc:
                    raise Error(rc, f"{label} {start + done.value}")
                total = aends[len(part) - 1]
                if as_array:
                    import numpy

                    def arr(a):
                        return numpy.frombuffer(ctypes.string_at(a, 4 * total),
                                                dtype=numpy.uint32) if total \
                            else numpy.zeros(0, dtype=numpy.uint32)
                    o = arr(_result_ordinals(r))
                    sc = arr(_result_scores(r)) if scored else None
                else:
                    o = _u32(_result_ordinals(r), total)
                    sc = _u32(_result_scores(r), total) if scored else None
                    if not ordinals:
                        o = self._named(o)
                out, at = [], 0
                for e in aends:
                    if as_array:
                        out.append((o[at:e], sc[at:e]) if scored else o[at:e])
                    else:
                        out.append(list(zip(o[at:e], sc[at:e])) if scored else o[at:e])
                    at = e
                return out
            finally:
                spare.append(r)

        try:
            if threads == 1 or len(chunks) == 1:
                parts = [run(c) for c in chunks]
            else:
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(max_workers=min(threads, len(chunks))) as pool:
                    # map yields in submission order and raises a chunk's failure
                    parts = list(pool.map(run, chunks))
        finally:
            for r in made:
                _result_destroy(ctypes.byref(r))
        return [a for p in parts for a in p]

    def _run(self, e, layout, theta, ordinals, as_array):
        """Answer one compiled expression (None: matches nothing)."""
        s, r = self._snap(), self._res()
        # no terms (a sequence shorter than k, text of stop words): no set can score
        if e is None or (theta is not None and _expr_keys(e.p) == 0):
            return self._answer(None, ordinals, as_array, scored=theta is not None)
        if theta is None:
            _check(_query_expr(s, layout, e.p, r))
        else:
            _check(_query_threshold(s, layout, e.p, theta, r))
        return self._answer(r, ordinals, as_array, scored=theta is not None)

    def _text(self, text, how):
        """text compiled as the snapshot's documents were split (how:
        0 all terms, 1 a term list); None when no term is left."""
        b = _bytes(text)
        e = _Expr()
        _check(_expr_text(self._snap(), b, len(b), how, ctypes.byref(e.p)), "text")
        return e if e.p else None

    def _kmers(self, seq, k):
        """A sequence compiled to the term list of its k-mers (amino acids'
        on a snapshot of proteins)."""
        _kmer_k(k)
        b = _bytes(seq)
        e = _Expr()
        # a snapshot of proteins splits a sequence into amino-acid k-mers
        f = _Form()
        protein = _query_form(self._snap(), _FORM_AUTO, 0, 0.0, ctypes.byref(f)) == 0 and \
            f.form == _FORM_PROTEIN
        compile_ = _expr_protein if protein else _expr_kmers
        _check(compile_(self._snap(), b, len(b), k, ctypes.byref(e.p)), "sequence")
        return e

    @_held
    def query(self, keys, *, layout=None, ordinals=False, as_array=False):
        """Which sets may contain each key?

        keys: one key (str or bytes), answered with a list of set names; or
        an iterable of keys (a list, a NumPy array of str or bytes), answered
        with a list of such lists, in batches through bfi_query_keys. On a
        snapshot of text, sequences or paths, a key is formed as `bfi query`
        forms it with no options, by the catalog's rules (bfi_query_text):
        a text's terms, all of them; a sequence's k-mers, all of them; a
        path. No set holding a key is ever missing; a few may be false
        positives.
        ordinals=True gives ordinals instead of names; as_array=True (NumPy)
        numpy.uint32 arrays of ordinals. layout: "flat", "tree", "rambo",
        "plain", or None for the best the snapshot holds.
        """
        if isinstance(keys, (str, bytes)):
            b, r = _bytes(keys), self._res()
            if self._formed():
                _check(_query_text(self._snap(), _layout(layout), b, len(b), 0.0, r), "query")
            else:
                _check(_query_key_layout(self._snap(), _layout(layout), b, len(b), r))
            return self._answer(r, ordinals, as_array)
        return [a for _, a in self.iter_query(keys, layout=layout, ordinals=ordinals,
                                              as_array=as_array)]

    def iter_query(self, keys, *, layout=None, ordinals=False, as_array=False,
                   batch_size=_BATCH):
        """query() over any iterable of keys, lazily: yields (key, answer)
        pairs, answering batch_size keys a call into the library."""
        if isinstance(keys, (str, bytes)):
            raise TypeError("iter_query takes an iterable of keys; query() takes one")
        chunk = []
        for k in keys:
            chunk.append(k)
            if len(chunk) == batch_size:
                yield from zip(chunk, self._keys([_bytes(x) for x in chunk], layout, ordinals,
                                                 as_array))
                chunk = []
        if chunk:
            yield from zip(chunk, self._keys([_bytes(x) for x in chunk], layout, ordinals,
                                             as_array))

    def _formed(self):
        """Does the catalog form a query other than as one key (a text's terms,
        a sequence's k-mers, a path: bfi_query_form), so that queries go
        through bfi_query_text, not taken whole?"""
        if self._form is None:
            f = _Form()
            _check(_query_form(self._snap(), _FORM_AUTO, 0, 0.0, ctypes.byref(f)), "query")
            self._form = f.form != _FORM_KEY
        return self._form

    @_held
    def _keys(self, bkeys, layout, ordinals, as_array):
        if self._formed() or self.scan:  # a scan compiles each key as the catalog says
            return self._many(_MANY_QUERIES, bkeys, 0, 0.0, _layout(layout), ordinals, as_array,
                              1, "query", scored=False)
        s, r = self._snap(), self._res()
        n = len(bkeys)
        ends = (_SZ * n)()
        at = 0
        for i, k in enumerate(bkeys):
            at += len(k)
            ends[i] = at
        hashes = (_KeyHash * n)()
        _check(_hash_keys(b"".join(bkeys), ends, n, hashes))
        _check(_query_keys(s, _layout(layout), hashes, n, r, ends))
        total = _result_count(r)
        if as_array:
            import numpy

            flat = numpy.frombuffer(ctypes.string_at(_result_ordinals(r), 4 * total),
                                    dtype=numpy.uint32) if total else \
                numpy.zeros(0, dtype=numpy.uint32)
            cut = numpy.frombuffer(ends, dtype=numpy.uintp)
            return numpy.split(flat, cut[:-1].astype(numpy.intp))
        # every answer's ints (or names) made at once in C, then cut by reference;
        # lists of ints and str hold no cycles, so the cycle collector, which would
        # walk every one of them again and again as they are made, waits till the end
        paused = gc.isenabled()
        gc.disable()
        try:
            allo = _u32(_result_ordinals(r), total)
            if not ordinals:
                allo = self._named(allo)
            out, a = [], 0
            for e in ends:
                out.append(allo[a:e])
                a = e
        finally:
            if paused:
                gc.enable()
        return out

    @_held
    def query_expr(self, expr, *, layout=None, ordinals=False, as_array=False):
        """Which sets may satisfy an expression of keys combined with AND,
        OR and parentheses ("a AND (b OR c)"; keys side by side are ANDed)?
        A list of expressions gives a list of answers. Raises Error
        (BFI_E_SYNTAX, with the byte offset in the message) if one does not
        parse."""
        if not isinstance(expr, (str, bytes)):
            return [self.query_expr(x, layout=layout, ordinals=ordinals, as_array=as_array)
                    for x in expr]
        b = _bytes(expr)
        e, at = _Expr(), _SZ()
        rc = _expr_parse(b, len(b), ctypes.byref(e.p), ctypes.byref(at))
        _check(rc, f"{expr!r} at byte {at.value}" if rc == _SYNTAX else repr(expr))
        return self._run(e, _layout(layout), None, ordinals, as_array)

    @_held
    def query_path(self, path, *, layout=None, ordinals=False, as_array=False):
        """Which documents may hold a path ("/a/b" from the root, "a/b"
        anywhere, "*" for one or more elements)? For snapshots of JSON or
        XML documents. A list of paths gives a list of answers."""
        if not isinstance(path, (str, bytes)):
            return [self.query_path(x, layout=layout, ordinals=ordinals, as_array=as_array)
                    for x in path]
        b = _bytes(path)
        e = _Expr()
        _check(_expr_path(self._snap(), b, len(b), ctypes.byref(e.p)), repr(path))
        return self._run(e, _layout(layout), None, ordinals, as_array)

    @_held
    def query_text(self, text, *, threshold=None, layout=None, ordinals=False,
                   as_array=False, threads=1):
        """Which documents may hold every term of text (split as the
        snapshot's catalog says: term limit, stop words)? With threshold
        in (0, 1], those holding at least that share of its terms instead,
        as (name, score) pairs, best first. A list of texts gives a list of
        answers, in order, on threads threads (0: one per online core), as
        query_sequences."""
        theta = _theta(threshold)
        if not isinstance(text, (str, bytes)):
            return self._many(_MANY_TEXTS, [_bytes(x) for x in text], 0,
                              0.0 if theta is None else theta, _layout(layout),
                              ordinals, as_array, threads, "text")
        how = 0 if theta is None else 1  # BFI_TEXT_ALL, BFI_TEXT_TERMS
        return self._run(self._text(text, how), _layout(layout), theta, ordinals, as_array)

    @_held
    def matrix(self, queries, *, threshold=None, layout=None):
        """Queries (formed as query() forms them: the catalog's rules) against
        every live set, as bfi query --format matrix: (set names, a NumPy
        float64 array of queries x sets), each cell the share of the query's
        terms the set holds (a term list's; 1 or 0 for a key, a path or an
        expression). threshold in [0, 1] asks for term lists, as bfi query
        -t does: a set below it has NaN, its ratio not computed (the CLI's
        "-"); at 0 every set answers, and every cell is its ratio."""
        import numpy

        if isinstance(queries, (str, bytes)):
            queries = [queries]
        live = [x["ordinal"] for x in self.sets()]
        col = {o: c for c, o in enumerate(live)}
        out = numpy.zeros((len(queries), len(live)), dtype=numpy.float64)
        for i, q in enumerate(queries):
            hits, terms, scored = self._scored(q, threshold, layout, "matrix")
            if scored:
                out[i, :] = numpy.nan
            for o, v in hits:
                out[i, col[o]] = v / terms
        return [self.name(o) for o in live], out

    def _scored(self, q, threshold, layout, what):
        """One query, formed by the catalog's rules: its answers as
        [(ordinal, score)], its terms, and whether it was a term list; a
        key, a path or an expression scores 1 of 1 term."""
        s, r = self._snap(), self._res()
        theta = _theta(threshold)
        theta = 0.0 if theta is None else theta
        b = _bytes(q)
        e = _Expr()
        _check(_expr_query(s, b, len(b), theta, ctypes.byref(e.p)), what)
        _check(_query_compiled(s, _layout(layout), e.p, theta, r), what)
        n = _result_count(r)
        ords = _u32(_result_ordinals(r), n) if n else []
        sc = _result_scores(r)
        if sc:
            return list(zip(ords, _u32(sc, n))) if n else [], _expr_keys(e.p) or 1, True
        return [(o, 1) for o in ords], 1, theta != 0

    @_held
    def table(self, queries, *, threshold=None, layout=None):
        """Queries (formed as query() forms them) as bfi query --format tsv's
        rows: a list of (query, set, score, ratio) tuples, each query's
        matching sets best first (score, then name), and a query matching
        none as one row (query, None, 0, 0.0). score is the terms held (1
        for a key, a path or an expression), ratio its share of the query's
        terms. A query may be an (id, query) pair, named by its id.
        csv.writer(f, delimiter="\\t") writes the rows as the CLI's table."""
        if isinstance(queries, (str, bytes)):
            queries = [queries]
        rows = []
        for q in queries:
            qid, q = q if isinstance(q, tuple) else (q, q)
            if isinstance(qid, bytes):
                qid = qid.decode("utf-8", "surrogateescape")
            scored, terms, _ = self._scored(q, threshold, layout, "table")
            hits = sorted(((v, self.name(o)) for o, v in scored),
                          key=lambda x: (-x[0], x[1].encode("utf-8", "surrogateescape")))
            rows += [(qid, name, v, v / terms) for v, name in hits] or [(qid, None, 0, 0.0)]
        return rows

    @_held
    def terms(self, text=None, *, sequence=None, k=0):
        """How many distinct terms a text (or k-mers a sequence) compiles
        to: the denominator of a threshold query's scores."""
        e = self._kmers(sequence, k) if sequence is not None else self._text(text, 1)
        return _expr_keys(e.p) if e else 0


