"""bfi: which sets may contain a key? Python access to bfi snapshots.

A thin layer over libbfi.so through ctypes: no compiler at install time
and nothing beyond the standard library. Every query goes through the
library's own query compiler, so an answer here is the answer `bfi query`
gives on the same snapshot.

    import bfi
    with bfi.open("fruit.snap") as snap:
        snap.query("apple")                # ['fruit'], the sets' names
        snap.query(["apple", "kale"])      # [['fruit'], ['veg']], one batch
        snap.query_expr("apple OR kale")   # ['fruit', 'veg']

Answers are lists of set names, or of ordinals with ordinals=True.
Threshold queries (query_text with threshold=, query_sequences) answer
(name, score) pairs, best first. With NumPy installed, key arrays are
accepted and as_array=True returns ordinals as numpy.uint32 arrays.

Errors raise bfi.Error, whose code is the library's BFI_E_* value (or a
negated errno) and name its symbol.

The library is found through, in order: the BFI_LIBRARY environment
variable, the path `ninja install` recorded beside this module, the
system's linker path (libbfi.so.3).
"""

import array
import ctypes
import ctypes.util
import errno as _errno
import functools
import gc
import itertools
import os
import threading

__all__ = ["open", "Snapshot", "Error", "version", "build", "merge", "compact", "Client",
           "LAYOUTS"]

# ---- the library ----


def _load():
    tried = []
    env = os.environ.get("BFI_LIBRARY")
    cands = [env] if env else []
    # the wheel's own copy, beside this file (pip install ./tools/python bundles it)
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libbfi.so.3")
    if os.path.isfile(here):
        cands.append(here)
    try:
        from . import _libpath  # written by `ninja install`

        cands.append(_libpath.LIBRARY)
    except ImportError:
        pass
    cands += ["libbfi.so.3", ctypes.util.find_library("bfi")]
    for c in cands:
        if not c:
            continue
        try:
            return ctypes.CDLL(c)
        except OSError as e:
            tried.append(f"{c}: {e}")
    raise ImportError(
        "bfi: libbfi.so not found; install bfi (ninja install) or set BFI_LIBRARY "
        "to the library's path. Tried: " + "; ".join(tried)
    )


_lib = _load()


class _KeyHash(ctypes.Structure):
    _c_ = "bfi_keyhash"  # mirrored: tests/python_check.py checks it against offsetof
    _fields_ = [("h1", ctypes.c_uint64), ("h2", ctypes.c_uint64)]


class _Info(ctypes.Structure):
    _c_ = "struct bfi_info"  # mirrored: tests/python_check.py checks it against offsetof
    _fields_ = [
        ("major", ctypes.c_uint16),
        ("minor", ctypes.c_uint16),
        ("compat_flags", ctypes.c_uint64),
        ("file_size", ctypes.c_uint64),
        ("catalog_size", ctypes.c_uint64),
        ("snapshot_id", ctypes.c_uint8 * 16),
        ("catalog_digest", ctypes.c_uint8 * 16),
        ("n_sets", ctypes.c_uint64),
        ("bits", ctypes.c_uint64),
        ("hashes", ctypes.c_uint32),
        ("n_sections", ctypes.c_uint32),
        ("layouts", ctypes.c_uint),
        ("has_catalog", ctypes.c_int),
        ("segments", ctypes.c_uint32),
        ("generation", ctypes.c_uint64),
        ("ordinals", ctypes.c_uint64),
    ]


class _FlatInfo(ctypes.Structure):
    _c_ = "struct bfi_flat_info"  # mirrored: tests/python_check.py checks it against offsetof
    _fields_ = [("blocks", ctypes.c_uint32), ("size_ordered", ctypes.c_int),
                ("line_prefilters", ctypes.c_int)]


class _RamboInfo(ctypes.Structure):
    _c_ = "struct bfi_rambo_info"  # mirrored: tests/python_check.py checks it against offsetof
    _fields_ = [("reps", ctypes.c_uint32), ("cells", ctypes.c_uint64),
                ("shards", ctypes.c_uint32), ("shared_probes", ctypes.c_int)]


class _TreeInfo(ctypes.Structure):
    _c_ = "struct bfi_tree_info"  # mirrored: tests/python_check.py checks it against offsetof
    _fields_ = [("levels", ctypes.c_uint32), ("fanout", ctypes.c_uint32),
                ("prefilter_bits", ctypes.c_uint64), ("explicit_groups", ctypes.c_int),
                ("dropped_levels", ctypes.c_uint32), ("dropped_nodes", ctypes.c_uint64)]


class _LayoutUnion(ctypes.Union):
    _fields_ = [("flat", _FlatInfo), ("rambo", _RamboInfo), ("tree", _TreeInfo),
                ("reserved", ctypes.c_uint64 * 16)]


class _LayoutInfo(ctypes.Structure):
    _c_ = "struct bfi_layout_info"  # mirrored: tests/python_check.py checks it against offsetof
    _fields_ = [
        ("layout", ctypes.c_uint),
        ("name", ctypes.c_char_p),
        ("n_sets", ctypes.c_uint64),
        ("hashes", ctypes.c_uint32),
        ("bits", ctypes.c_uint64),
        ("offset", ctypes.c_uint64),
        ("size", ctypes.c_uint64),
        ("u", _LayoutUnion),
    ]


class _SetStats(ctypes.Structure):
    _c_ = "struct bfi_set_stats"  # mirrored: tests/python_check.py checks it against offsetof
    _fields_ = [("distinct_keys", ctypes.c_uint64), ("bits_set", ctypes.c_uint64),
                ("bits", ctypes.c_uint64)]


class _Segment(ctypes.Structure):
    _c_ = "struct bfi_segment_info"  # mirrored: tests/python_check.py checks it against offsetof
    _fields_ = [("snap", ctypes.c_void_p), ("first", ctypes.c_uint64),
                ("n_sets", ctypes.c_uint64), ("live", ctypes.c_uint64),
                ("name", ctypes.c_char * 40)]


_P = ctypes.c_void_p
_PP = ctypes.POINTER(ctypes.c_void_p)
_SZ = ctypes.c_size_t


def _fn(name, res, *args):
    f = getattr(_lib, name)
    f.restype = res
    f.argtypes = list(args)
    return f


_open = _fn("bfi_open", ctypes.c_int, ctypes.c_char_p, ctypes.c_uint, _PP)
_close = _fn("bfi_close", None, _PP)
_strerror = _fn("bfi_strerror", ctypes.c_char_p, ctypes.c_int)
_version = _fn("bfi_version", ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint),
               ctypes.POINTER(ctypes.c_uint))
_info = _fn("bfi_info", None, _P, ctypes.POINTER(_Info))
_layout_info = _fn("bfi_layout_info", ctypes.c_int, _P, ctypes.c_uint,
                   ctypes.POINTER(_LayoutInfo))
_segment = _fn("bfi_segment", ctypes.c_int, _P, ctypes.c_uint32, ctypes.POINTER(_Segment))
_result_create = _fn("bfi_result_create", ctypes.c_int, _PP)
_result_destroy = _fn("bfi_result_destroy", None, _PP)
_result_count = _fn("bfi_result_count", _SZ, _P)
_result_ordinals = _fn("bfi_result_ordinals", ctypes.c_void_p, _P)
_result_scores = _fn("bfi_result_scores", ctypes.c_void_p, _P)
_query_key_layout = _fn("bfi_query_key_layout", ctypes.c_int, _P, ctypes.c_uint,
                        ctypes.c_char_p, _SZ, _P)
_hash_keys = _fn("bfi_hash_keys", ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(_SZ), _SZ,
                 ctypes.POINTER(_KeyHash))
_query_keys = _fn("bfi_query_keys", ctypes.c_int, _P, ctypes.c_uint,
                  ctypes.POINTER(_KeyHash), _SZ, _P, ctypes.POINTER(_SZ))
_query_expr = _fn("bfi_query_expr", ctypes.c_int, _P, ctypes.c_uint, _P, _P)
_query_text = _fn("bfi_query_text", ctypes.c_int, _P, ctypes.c_uint, ctypes.c_char_p, _SZ,
                  ctypes.c_double, _P)


class _Form(ctypes.Structure):  # struct bfi_form (bfi.h)
    _c_ = "struct bfi_form"  # mirrored: tests/python_check.py checks it against offsetof
    _fields_ = [("form", ctypes.c_int), ("k", ctypes.c_uint), ("theta", ctypes.c_double)]


_FORM_AUTO, _FORM_KEY = 0, 1  # BFI_FORM_* (bfi.h)
_query_form = _fn("bfi_query_form", ctypes.c_int, _P, ctypes.c_int, ctypes.c_uint,
                  ctypes.c_double, ctypes.POINTER(_Form))
_query_threshold = _fn("bfi_query_threshold", ctypes.c_int, _P, ctypes.c_uint, _P,
                       ctypes.c_double, _P)
_expr_parse = _fn("bfi_expr_parse", ctypes.c_int, ctypes.c_char_p, _SZ, _PP,
                  ctypes.POINTER(_SZ))
_expr_path = _fn("bfi_expr_path", ctypes.c_int, _P, ctypes.c_char_p, _SZ, _PP)
_expr_text = _fn("bfi_expr_text", ctypes.c_int, _P, ctypes.c_char_p, _SZ, ctypes.c_int, _PP)
_expr_kmers = _fn("bfi_expr_kmers", ctypes.c_int, _P, ctypes.c_char_p, _SZ, ctypes.c_uint,
                  _PP)
_expr_keys = _fn("bfi_expr_keys", _SZ, _P)
_expr_query = _fn("bfi_expr_query", ctypes.c_int, _P, ctypes.c_char_p, _SZ, ctypes.c_double,
                  _PP)
_query_compiled = _fn("bfi_query_compiled", ctypes.c_int, _P, ctypes.c_uint, _P,
                      ctypes.c_double, _P)
_query_many = _fn("bfi_query_many", ctypes.c_int, _P, ctypes.c_uint, ctypes.c_int, ctypes.c_uint,
                  ctypes.c_double, ctypes.c_char_p, ctypes.POINTER(_SZ), _SZ, _P,
                  ctypes.POINTER(_SZ), ctypes.POINTER(_SZ))
_scan_many = _fn("bfi_scan_many", ctypes.c_int, _P, ctypes.c_uint, ctypes.c_int, ctypes.c_uint,
                  ctypes.c_double, ctypes.c_char_p, ctypes.POINTER(_SZ), _SZ, _P,
                  ctypes.POINTER(_SZ), ctypes.POINTER(_SZ), ctypes.c_uint64)


def _scan_many_at(memory, *args):
    """bfi_scan_many with memory last, as _query_many is called."""
    return _scan_many(*args, memory)


class _MemoryLimits(ctypes.Structure):  # struct bfi_memory_limits (bfi_memory.h)
    _c_ = "struct bfi_memory_limits"  # mirrored: tests/python_check.py checks it against offsetof
    _fields_ = [("physical", ctypes.c_uint64), ("available", ctypes.c_uint64),
                ("cgroup", ctypes.c_uint64), ("address", ctypes.c_uint64),
                ("usable", ctypes.c_uint64), ("bound", ctypes.c_int), ("query", ctypes.c_uint64)]


_memory_limits = _fn("bfi_memory_limits", None, ctypes.POINTER(_MemoryLimits))
_memory_bound_name = _fn("bfi_memory_bound_name", ctypes.c_char_p, ctypes.c_int)
_expr_free = _fn("bfi_expr_free", None, _PP)
_set_name = _fn("bfi_set_name", ctypes.c_int, _P, ctypes.c_uint32, _PP, ctypes.POINTER(_SZ))
_set_find = _fn("bfi_set_find", ctypes.c_int, _P, ctypes.c_char_p, _SZ,
                ctypes.POINTER(ctypes.c_uint32))
_set_stats = _fn("bfi_set_stats", ctypes.c_int, _P, ctypes.c_uint32,
                 ctypes.POINTER(_SetStats))
_set_seen = _fn("bfi_set_seen", ctypes.c_int, _P, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint64))
_catalog_meta = _fn("bfi_catalog_meta", ctypes.c_int, _P, ctypes.c_char_p, _PP,
                    ctypes.POINTER(_SZ))

# ---- errors ----

# bfi_error.h's codes by name; tests/python.sh checks this table against the header.
_CODES = {
    "BFI_E_INVALID": -31999, "BFI_E_LIMIT": -31998, "BFI_E_NOT_FOUND": -31997,
    "BFI_E_SYNTAX": -31996, "BFI_E_KEY_FORM": -31995, "BFI_E_TIMEOUT": -31994,
    "BFI_E_TRUNCATED": -31899, "BFI_E_BAD_MAGIC": -31898,
    "BFI_E_BAD_TRAILER": -31897, "BFI_E_VERSION": -31896, "BFI_E_INCOMPAT": -31895,
    "BFI_E_RESERVED": -31894, "BFI_E_HEADER_CHECKSUM": -31893,
    "BFI_E_TABLE_CHECKSUM": -31892, "BFI_E_BAD_SECTION": -31891, "BFI_E_ENCODING": -31890,
    "BFI_E_BAD_LAYOUT": -31889, "BFI_E_NO_LAYOUT": -31888, "BFI_E_DATA_CHECKSUM": -31887,
    "BFI_E_SIZE": -31886, "BFI_E_UNKNOWN_SECTION": -31885, "BFI_E_NOT_REGULAR": -31884,
    "BFI_E_CHANGED": -31883, "BFI_E_MANIFEST": -31882, "BFI_E_PACK": -31881,
    "BFI_E_PACK_TRUNCATED": -31880, "BFI_E_PACK_FRAME": -31879, "BFI_E_SCAN_ONLY": -31878, "BFI_E_CATALOG_MISMATCH": -31799,
    "BFI_E_CATALOG": -31798, "BFI_E_NO_CATALOG": -31797, "BFI_E_LMDB": -31796,
    "BFI_E_INPUT": -31699, "BFI_E_NO_SETS": -31698, "BFI_E_DUP_SET": -31697,
    "BFI_E_EXISTS": -31696, "BFI_E_FILTER_MISMATCH": -31695, "BFI_E_BUSY": -31694,
    "BFI_E_JOIN": -31693,
}
_NAMES = {v: k for k, v in _CODES.items()}
globals().update({k[4:]: v for k, v in _CODES.items()})  # bfi.E_NOT_FOUND, ...
_NOT_FOUND, _NO_CATALOG, _SYNTAX = (_CODES["BFI_E_NOT_FOUND"], _CODES["BFI_E_NO_CATALOG"],
                                    _CODES["BFI_E_SYNTAX"])


class Error(Exception):
    """A failed bfi call.

    code: the library's return value, a BFI_E_* code or a negated errno.
    name: "BFI_E_NOT_FOUND" and so on, or the errno's symbol ("ENOENT").
    message: the library's description of the code (bfi_strerror).
    """

    def __init__(self, code, what=""):
        self.code = code
        self.name = _NAMES.get(code) or _errno.errorcode.get(-code, str(code))
        self.message = _strerror(code).decode("utf-8", "replace")
        super().__init__(f"{what}: {self.message}" if what else self.message)


def _check(rc, what=""):
    if rc != 0:
        raise Error(rc, what)


def version():
    """The library's version and the index format it reads: ("0.1.0", (major, minor))."""
    a, b = ctypes.c_uint(), ctypes.c_uint()
    v = _version(ctypes.byref(a), ctypes.byref(b))
    return v.decode(), (a.value, b.value)


# ---- snapshots ----

_layout_at = _fn("bfi_layout_at", ctypes.c_uint, ctypes.c_uint)
_layout_name = _fn("bfi_layout_name", ctypes.c_char_p, ctypes.c_uint)


def _library_layouts():
    """The layouts the library knows, by name: their BFI_LAYOUT_* flags, in its order."""
    out, i = {}, 0
    while _layout_at(i):
        out[_layout_name(_layout_at(i)).decode()] = _layout_at(i)
        i += 1
    return out


LAYOUTS = _library_layouts()
_OPEN_FLAGS = {"trusted": 1, "no_catalog": 2, "small_pages": 4, "warm": 8}
_OPEN_SCAN = 16  # BFI_OPEN_SCAN (bfi.h): a pack's index left in the pack, for a scan


def memory_limits():
    """What this process may hold, as bfi query sizes its default --memory:
    a dict of physical, available (MemAvailable), cgroup (its memory
    cgroup's limit, v1 or v2), address (ulimit -v less what is mapped) and
    usable (the least of those known), in bytes (0: none or unknown),
    bound, which of them usable is, and query, three quarters of usable:
    what a snapshot may take before it is scanned, by default."""
    m = _MemoryLimits()
    _memory_limits(ctypes.byref(m))
    out = {k: getattr(m, k) for k in ("physical", "available", "cgroup", "address", "usable",
                                      "query")}
    out["bound"] = _memory_bound_name(m.bound).decode()
    return out


class ScanWarning(UserWarning):
    """A snapshot larger than the memory given is answered by scans."""
_BATCH = 4096  # keys a call into the library
_NAMES_LISTED = 1 << 22  # up to this many ordinals, names are kept in a list, else a dict
if array.array("I").itemsize != 4:
    raise ImportError("bfi: this platform's array('I') is not 32 bits")


def _u32(addr, n):
    """n uint32 values at addr as a list of ints, copied in C."""
    if not n:
        return []
    return array.array("I", ctypes.string_at(addr, 4 * n)).tolist()


def _bytes(k):
    if isinstance(k, bytes):
        return k
    if isinstance(k, str):
        return k.encode("utf-8", "surrogateescape")
    if isinstance(k, (bytearray, memoryview)):
        return bytes(k)
    try:  # numpy scalars
        import numpy

        if isinstance(k, numpy.bytes_):
            return bytes(k)
        if isinstance(k, numpy.str_):
            return str(k).encode("utf-8", "surrogateescape")
    except ImportError:
        pass
    raise TypeError(f"a key is str or bytes, not {type(k).__name__}")


def _layout(layout):
    if layout is None:
        return 0
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {list(LAYOUTS)}, not {layout!r}")
    return LAYOUTS[layout]


def _held(method):
    """Run method with a hold on the snapshot: close() in another thread
    waits for no one, but the snapshot is unmapped only once the last
    method holding it has returned (Snapshot._enter, _leave)."""
    def run(self, *args, **kwargs):
        self._enter()
        try:
            return method(self, *args, **kwargs)
        finally:
            self._leave()
    run.__name__, run.__doc__, run.__qualname__ = (method.__name__, method.__doc__,
                                                   method.__qualname__)
    return run


def open(path, *, trusted=False, no_catalog=False, small_pages=False, warm=False, scan=None,
         memory=None):
    """Open the snapshot or collection at path (a directory), or a pack of
    either. Use as a context manager, or call close(). Raises Error. scan
    and memory: see Snapshot."""
    return Snapshot(path, trusted=trusted, no_catalog=no_catalog, small_pages=small_pages,
                    warm=warm, scan=scan, memory=memory)


# ---- joins: bfi merge and bfi compact, through the library ----

_NOTE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


class _JoinOptions(ctypes.Structure):
    _c_ = "struct bfi_join_options"  # mirrored: tests/python_check.py checks it against offsetof
    _fields_ = [("size", ctypes.c_size_t), ("memory", ctypes.c_uint64), ("full", ctypes.c_int),
                ("wait", ctypes.c_int), ("progress", ctypes.c_void_p),
                ("progress_ctx", ctypes.c_void_p), ("note", _NOTE), ("note_ctx", ctypes.c_void_p)]


_join_options_init = _fn("bfi_join_options_init", None, ctypes.POINTER(_JoinOptions))
_merge = _fn("bfi_merge", ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), _SZ, ctypes.c_char_p,
             ctypes.POINTER(_JoinOptions), ctypes.POINTER(ctypes.c_uint64), ctypes.c_char_p, _SZ)
_compact = _fn("bfi_compact", ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(_JoinOptions),
               ctypes.POINTER(ctypes.c_uint), ctypes.c_char_p, _SZ)


def _join_options(memory, full=False, wait=False):
    o = _JoinOptions()
    _join_options_init(ctypes.byref(o))
    o.memory, o.full, o.wait = memory or 0, int(full), int(wait)
    notes = []
    o.note = _NOTE(lambda ctx, line: notes.append(line.decode("utf-8", "surrogateescape")))
    return o, notes


def _join_error(rc, err):
    e = Error(rc)
    if err.value:
        e.args = (err.value.decode("utf-8", "surrogateescape"),)
    raise e


def merge(paths, out, *, memory=None):
    """Join the snapshots and collections at paths into one snapshot at out,
    without their keys, as `bfi merge` does: every live set keeps its filter
    bit for bit. Returns (sets written, notes: the layouts not kept and
    why). Raises Error (BFI_E_JOIN when they cannot be joined, with why)."""
    paths = [_bytes(os.fspath(p)) for p in paths]
    arr = (ctypes.c_char_p * len(paths))(*paths)
    o, notes = _join_options(memory)
    n = ctypes.c_uint64()
    err = ctypes.create_string_buffer(4600)
    rc = _merge(arr, len(paths), _bytes(os.fspath(out)), ctypes.byref(o), ctypes.byref(n), err,
                len(err))
    if rc:
        _join_error(rc, err)
    return n.value, notes


def compact(coll, *, full=False, wait=False, memory=None):
    """Compact the collection at coll as `bfi compact` does: runs of segments
    joined by the size-tiered policy (every one with full=True), removed sets
    dropped, each run one commit. Returns (runs joined, notes). Raises Error."""
    o, notes = _join_options(memory, full, wait)
    joins = ctypes.c_uint()
    err = ctypes.create_string_buffer(4600)
    rc = _compact(_bytes(os.fspath(coll)), ctypes.byref(o), ctypes.byref(joins), err, len(err))
    if rc:
        _join_error(rc, err)
    return joins.value, notes


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
_MANY_SEQUENCES, _MANY_TEXTS, _MANY_QUERIES = 1, 2, 3  # BFI_MANY_* (bfi.h)


def _threads(threads):
    """threads as a count: 0 is one per online core."""
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 0:
        raise ValueError(f"bfi: threads is 0 (one per online core) or more, not {threads!r}")
    if threads == 0:
        threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else (os.cpu_count() or 1)
    return threads


class Snapshot:
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
        """A DNA sequence compiled to the term list of its k-mers."""
        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k <= 255:
            raise ValueError(f"bfi: k is 1..255, or 0 for the snapshot's own, not {k!r}")
        b = _bytes(seq)
        e = _Expr()
        _check(_expr_kmers(self._snap(), b, len(b), k, ctypes.byref(e.p)), "sequence")
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
        if not isinstance(text, (str, bytes)):
            if threshold is not None and not 0 < threshold <= 1:
                raise Error(_CODES["BFI_E_INVALID"], f"threshold {threshold!r}")
            return self._many(_MANY_TEXTS, [_bytes(x) for x in text], 0,
                              0.0 if threshold is None else threshold, _layout(layout),
                              ordinals, as_array, threads, "text")
        how = 0 if threshold is None else 1  # BFI_TEXT_ALL, BFI_TEXT_TERMS
        return self._run(self._text(text, how), _layout(layout), threshold, ordinals, as_array)

    @_held
    def query_sequences(self, seqs, *, threshold, k=0, layout=None, ordinals=False,
                        as_array=False, threads=1):
        """Which genomes may hold at least threshold (0, 1] of a DNA
        sequence's k-mers (k: the snapshot's own, unless given)? seqs is
        one sequence (str or bytes), answered with a list of (name, score)
        pairs, best first, the score being the k-mers found; or an iterable
        of sequences or (id, sequence) pairs, answered with a list of such
        lists, in order, on threads threads (0: one per online core): up
        to 1,024 reads a call into the library (bfi_query_many), which
        runs outside Python's lock, so threads answer reads side by side."""
        if isinstance(seqs, (str, bytes)):
            return self._run(self._kmers(seqs, k), _layout(layout), threshold, ordinals,
                             as_array)

        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k <= 255:
            raise ValueError(f"bfi: k is 1..255, or 0 for the snapshot's own, not {k!r}")
        items = [_bytes(x[1] if isinstance(x, tuple) else x) for x in seqs]
        return self._many(_MANY_SEQUENCES, items, k, 0.0 if threshold is None else threshold,
                          _layout(layout), ordinals, as_array, threads, "sequence")

    @_held
    def matrix(self, queries, *, threshold=None, layout=None):
        """Queries (formed as query() forms them: the catalog's rules) against
        every live set, as bfi query --format matrix: (set names, a NumPy
        float64 array of queries x sets), each cell the share of the query's
        terms the set holds (a term list's; 1 or 0 for a key, a path or an
        expression), 0 for a set that does not answer. threshold in (0, 1]
        asks for term lists (0 below it), as bfi query -t does."""
        import numpy

        if isinstance(queries, (str, bytes)):
            queries = [queries]
        live = [x["ordinal"] for x in self.sets()]
        col = {o: c for c, o in enumerate(live)}
        out = numpy.zeros((len(queries), len(live)), dtype=numpy.float64)
        for i, q in enumerate(queries):
            hits, terms = self._scored(q, threshold, layout, "matrix")
            for o, v in hits:
                out[i, col[o]] = v / terms
        return [self.name(o) for o in live], out

    def _scored(self, q, threshold, layout, what):
        """One query, formed by the catalog's rules: its answers as
        [(ordinal, score)] and its terms; a key, a path or an expression
        scores 1 of 1 term."""
        s, r = self._snap(), self._res()
        theta = 0.0 if threshold is None else threshold
        b = _bytes(q)
        e = _Expr()
        _check(_expr_query(s, b, len(b), theta, ctypes.byref(e.p)), what)
        _check(_query_compiled(s, _layout(layout), e.p, theta, r), what)
        n = _result_count(r)
        ords = _u32(_result_ordinals(r), n) if n else []
        sc = _result_scores(r)
        if sc and n:
            return list(zip(ords, _u32(sc, n))), _expr_keys(e.p) or 1
        return [(o, 1) for o in ords], 1

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
            scored, terms = self._scored(q, threshold, layout, "table")
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


# ---- a bfi serve, asked as a snapshot is ----

class Client:
    """A `bfi serve` at url (http://HOST:PORT), asked over HTTP with the
    standard library alone. Client(url).open(name) gives a RemoteSnapshot
    whose query calls answer as a local Snapshot's do, with the same types:
    lists of set names (or ordinals), and for thresholds (name, score)
    pairs, best first. Errors the server gives raise bfi.Error with its
    code ("bad_form", "not_found", ...) as name and its words as message."""

    def __init__(self, url, *, timeout=30.0):
        self.url = url.rstrip("/")
        self.timeout = timeout

    def _call(self, path, body=None, raw=False):
        import json
        import urllib.error
        import urllib.request

        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data,
                                     headers={"Content-Type": "application/json"} if data else {})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                got = r.read().decode("utf-8", "surrogateescape" if raw else "surrogatepass")
                return got if raw else json.loads(got)
        except urllib.error.HTTPError as e:
            try:
                err = json.loads(e.read().decode("utf-8", "surrogatepass"))
            except ValueError:
                err = {"code": str(e.code), "error": e.reason}
            raise RemoteError(e.code, err.get("code", ""), err.get("error", "")) from None

    def names(self):
        """The names the server serves."""
        return self._call("/v1")["snapshots"]

    def open(self, name):
        """The snapshot served as name."""
        return RemoteSnapshot(self, name)


class RemoteError(Error):
    """An error a bfi serve answered: status the HTTP status, name its code."""

    def __init__(self, status, code, message):  # pylint: disable=super-init-not-called
        self.status, self.code, self.name, self.message = status, code, code, message
        Exception.__init__(self, f"{status} {code}: {message}")


class RemoteSnapshot:
    """A snapshot served by bfi serve: query, query_text, query_sequences,
    query_expr, query_path, table and info, as Snapshot's (Client)."""

    def __init__(self, client, name):
        self.client, self.name = client, name

    @staticmethod
    def _body(kind, qs, threshold, fmt):
        """A query request's body: the queries as text, and what is asked of them."""
        body = {kind: [q.decode("utf-8", "surrogateescape") if isinstance(q, bytes) else q
                       for q in qs]}
        if threshold is not None:
            body["threshold"] = threshold
        if fmt:
            body["format"] = fmt
        return body

    def _ask(self, kind, items, threshold=None, ordinals=False):
        one = isinstance(items, (str, bytes))
        qs = [items] if one else list(items)
        body = self._body(kind, qs, threshold, "ordinals" if ordinals else None)
        res = self.client._call(f"/v1/{self.name}/query", body)["results"]
        out = [list(zip(r["matches"], r["scores"])) if "scores" in r else r["matches"]
               for r in res]
        return out[0] if one else out

    def query(self, keys, *, ordinals=False):
        """Which sets may contain each key? Formed as the snapshot's keys
        were made, as Snapshot.query does (the server's "queries")."""
        return self._ask("queries", keys, ordinals=ordinals)

    def query_text(self, text, *, threshold=None, ordinals=False):
        return self._ask("text", text, threshold, ordinals)

    def query_sequences(self, seqs, *, threshold, ordinals=False):
        if isinstance(seqs, (str, bytes)):
            items, one = [seqs], True
        else:
            items, one = [x[1] if isinstance(x, tuple) else x for x in seqs], False
        items = [{"seq": s.decode() if isinstance(s, bytes) else s} for s in items]
        body = self._body("sequences", items, None, "ordinals" if ordinals else None)
        body["threshold"] = threshold
        res = self.client._call(f"/v1/{self.name}/query", body)["results"]
        out = [list(zip(r["matches"], r["scores"])) for r in res]
        return out[0] if one else out

    def query_expr(self, expr, *, ordinals=False):
        return self._ask("expr", expr, ordinals=ordinals)

    def query_path(self, path, *, ordinals=False):
        return self._ask("path", path, ordinals=ordinals)

    def table(self, queries, *, threshold=None):
        """The server's "format": "tsv" table as Snapshot.table's rows:
        (query, set, score, ratio) tuples, None for no set."""
        qs = [queries] if isinstance(queries, (str, bytes)) else list(queries)
        ids = [q[0] if isinstance(q, tuple) else q for q in qs]
        body = self._body("queries", [q[1] if isinstance(q, tuple) else q for q in qs], threshold,
                          "tsv")
        qs = body["queries"]
        text = self.client._call(f"/v1/{self.name}/query", body, raw=True)
        rows, at, seen = [], -1, set()
        for line in text.splitlines()[1:]:  # after the header
            q, name, score, ratio = line.split("\t")
            # the next query's rows, in order: another query, a set named
            # again (the same query twice), or after a query's empty row
            if at < 0 or q != qs[at] or name in seen or rows[-1][1] is None:
                at, seen = at + 1, set()
            seen.add(name)
            qid = ids[at] if at < len(ids) else q
            if isinstance(qid, bytes):
                qid = qid.decode("utf-8", "surrogateescape")
            rows.append((qid, name or None, int(score), float(ratio)))
        return rows

    def info(self):
        """What bfi inspect --json says of it."""
        return self.client._call(f"/v1/{self.name}")


# ---- building ----

_PROGRESS = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64,
                             ctypes.c_uint64)


class _BuildOptions(ctypes.Structure):
    _c_ = "struct bfi_build_options"  # mirrored: tests/python_check.py checks it against offsetof
    _fields_ = [("size", ctypes.c_size_t), ("fpr", ctypes.c_double), ("bits", ctypes.c_uint64),
                ("hashes", ctypes.c_uint32), ("expected_keys", ctypes.c_uint64),
                ("layouts", ctypes.c_uint), ("keep_order", ctypes.c_int),
                ("cluster", ctypes.c_int), ("fixed_width", ctypes.c_int),
                ("block_cost", ctypes.c_uint64), ("prefilter", ctypes.c_int),
                ("cells", ctypes.c_uint64), ("reps", ctypes.c_uint32),
                ("shards", ctypes.c_uint32), ("route_shard", ctypes.c_uint32),
                ("route_shards", ctypes.c_uint32), ("fanout", ctypes.c_uint32),
                ("all_levels", ctypes.c_int), ("bloofi_incremental", ctypes.c_int),
                ("memory", ctypes.c_uint64), ("threads", ctypes.c_uint),
                ("progress", _PROGRESS), ("progress_ctx", ctypes.c_void_p),
                ("max_block_sets", ctypes.c_uint32), ("classic_prefilters", ctypes.c_int),
                ("min_count", ctypes.c_uint32)]


_build_options_init = _fn("bfi_build_options_init", None, ctypes.POINTER(_BuildOptions))
_writer_create = _fn("bfi_writer_create", ctypes.c_int, ctypes.POINTER(_BuildOptions), _PP)
_writer_destroy = _fn("bfi_writer_destroy", None, _PP)
_writer_set = _fn("bfi_writer_set", ctypes.c_int, _P, ctypes.c_char_p, _SZ,
                  ctypes.POINTER(ctypes.c_uint32))
_writer_key = _fn("bfi_writer_key", ctypes.c_int, _P, ctypes.c_uint32, ctypes.c_char_p, _SZ)
_writer_add_dir = _fn("bfi_writer_add_dir", ctypes.c_int, _P, ctypes.c_char_p)
_writer_add_fasta = _fn("bfi_writer_add_fasta", ctypes.c_int, _P, ctypes.c_char_p,
                        ctypes.c_uint, ctypes.c_int)
_writer_add_group = _fn("bfi_writer_add_group", ctypes.c_int, _P, ctypes.c_char_p, _SZ,
                        ctypes.POINTER(ctypes.c_char_p), _SZ, ctypes.c_char_p, ctypes.c_uint)
_writer_finish = _fn("bfi_writer_finish", ctypes.c_int, _P, ctypes.c_char_p, ctypes.c_void_p)
_writer_counted = _fn("bfi_writer_counted", ctypes.c_int, _P, ctypes.c_uint64,
                      ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_size_t),
                      ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64))
_writer_errmsg = _fn("bfi_writer_errmsg", ctypes.c_char_p, _P)


def build(out, sets=None, *, keys_dir=None, fasta=None, groups=None, kmer=None, fpr=0.01,
          layouts=None, memory=0, threads=0, keep_order=False, expected_keys=0, bits=0,
          hashes=0, min_count=1, counts=None):
    """Build a snapshot at out, as bfi build does (published atomically).

    sets: a mapping of set name to an iterable of keys (str or bytes), or an
    iterable of (name, keys) pairs; keys_dir: a directory of key files, a
    set each (bfi build DIR); fasta: FASTA/FASTQ files or directories, a
    set a file, by their k-mers of length kmer (bfi build --input fasta);
    groups: a mapping of set name to its several files (bfi build --fof),
    FASTA/FASTQ with kmer, else key files. fpr, layouts (names, as
    --layout; None: bfi build's default, flat or the tree by the sets),
    memory, threads, keep_order, expected_keys, bits, hashes and
    min_count are bfi build's options. counts: with min_count above 1, a
    dict filled with each set's name (str) and its (seen, kept) distinct
    keys: those its files gave and those seen min_count times or more,
    the rest dropped (bfi build --stats). Raises Error, whose message is
    the writer's."""
    o = _BuildOptions()
    _build_options_init(ctypes.byref(o))
    o.fpr, o.memory, o.threads, o.keep_order = fpr, memory, threads, int(keep_order)
    o.expected_keys, o.bits, o.hashes, o.min_count = expected_keys, bits, hashes, min_count
    if layouts is not None:  # else the library's default choice
        o.layouts = 0
        for name in ([layouts] if isinstance(layouts, str) else layouts):
            o.layouts |= _layout(name)
    if fasta is not None and not kmer:
        raise ValueError("bfi: fasta needs kmer")
    w = ctypes.c_void_p()
    _check(_writer_create(ctypes.byref(o), ctypes.byref(w)), "build")
    try:
        def fail(rc):
            msg = _writer_errmsg(w)
            e = Error(rc)
            if msg:
                e.args = (msg.decode("utf-8", "replace"),)
            raise e

        pairs = sets.items() if hasattr(sets, "items") else (sets or [])
        for name, keys in pairs:
            nb, ord_ = _bytes(name), ctypes.c_uint32()
            rc = _writer_set(w, nb, len(nb), ctypes.byref(ord_))
            if rc:
                fail(rc)
            for k in ([keys] if isinstance(keys, (str, bytes)) else keys):
                kb = _bytes(k)
                rc = _writer_key(w, ord_.value, kb, len(kb))
                if rc:
                    fail(rc)
        if keys_dir is not None:
            rc = _writer_add_dir(w, _bytes(os.fspath(keys_dir)))
            if rc:
                fail(rc)
        for p in ([fasta] if isinstance(fasta, (str, bytes, os.PathLike)) else (fasta or [])):
            rc = _writer_add_fasta(w, _bytes(os.fspath(p)), kmer, 0)
            if rc:
                fail(rc)
        for name, files in (groups.items() if hasattr(groups, "items") else (groups or [])):
            nb = _bytes(name)
            paths = [_bytes(os.fspath(f)) for f in files]
            arr = (ctypes.c_char_p * max(len(paths), 1))(*paths)
            rc = _writer_add_group(w, nb, len(nb), arr, len(paths),
                                   b"fasta" if kmer else b"keys", kmer or 0)
            if rc:
                fail(rc)
        rc = _writer_finish(w, _bytes(os.fspath(out)), None)
        if rc:
            fail(rc)
        if counts is not None and min_count > 1:
            name, nlen = ctypes.c_char_p(), ctypes.c_size_t()
            seen, kept = ctypes.c_uint64(), ctypes.c_uint64()
            i = 0
            while _writer_counted(w, i, ctypes.byref(name), ctypes.byref(nlen), ctypes.byref(seen),
                                  ctypes.byref(kept)) == 0:
                nm = ctypes.string_at(name, nlen.value).decode("utf-8", "replace")
                counts[nm] = (seen.value, kept.value)
                i += 1
    finally:
        _writer_destroy(ctypes.byref(w))
    return out
