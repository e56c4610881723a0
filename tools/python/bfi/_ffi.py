"""_ffi.py - libbfi loaded through ctypes: its structures, its calls, errors,
and the helpers every part of the package uses."""

import array
import ctypes
import ctypes.util
import errno as _errno
import os


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


_FORM_AUTO, _FORM_KEY, _FORM_PROTEIN = 0, 1, 7  # BFI_FORM_* (bfi.h)
_MANY_SEQUENCES, _MANY_TEXTS, _MANY_QUERIES = 1, 2, 3  # BFI_MANY_* (bfi.h)


def _kmer_k(k):
    """k as the k-mer calls take it: 1..255, or 0 for the snapshot's own."""
    if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k <= 255:
        raise ValueError(f"bfi: k is 1..255, or 0 for the snapshot's own, not {k!r}")
    return k


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
_expr_protein = _fn("bfi_expr_protein", ctypes.c_int, _P, ctypes.c_char_p, _SZ, ctypes.c_uint,
                    _PP)
_expr_keys = _fn("bfi_expr_keys", _SZ, _P)
_expr_set_errors = _fn("bfi_expr_set_errors", ctypes.c_int, _P, ctypes.c_uint, ctypes.c_uint)
_query_whole = _fn("bfi_query_whole", ctypes.c_int, _P, ctypes.c_uint, ctypes.c_char_p, _SZ,
                   ctypes.c_uint, ctypes.c_double, _P, ctypes.POINTER(_SZ))
_query_findere = _fn("bfi_query_findere", ctypes.c_int, _P, ctypes.c_uint, ctypes.c_char_p, _SZ,
                     ctypes.c_uint, ctypes.c_uint, ctypes.c_double, _P, ctypes.POINTER(_SZ))
_expr_need = _fn("bfi_expr_need", ctypes.c_uint32, _P, ctypes.c_double)
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


