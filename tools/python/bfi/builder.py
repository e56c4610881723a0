"""builder.py - bfi.build, a snapshot written through the library's writer."""

import ctypes
import os

from ._ffi import Error, _P, _PP, _SZ, _bytes, _check, _fn, _layout


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
                ("min_count", ctypes.c_uint32), ("layout_options", ctypes.c_char_p)]


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
