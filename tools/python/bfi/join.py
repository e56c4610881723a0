"""join.py - bfi.merge and bfi.compact, through the library."""

import ctypes
import os

from ._ffi import Error, _SZ, _bytes, _fn


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


