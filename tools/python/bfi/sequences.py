"""sequences.py - a Snapshot's queries of sequences beyond one threshold:
each read's need by the k-mer lemma (errors=), findere's (k+z)-mers, and a
whole file of records as one query. Snapshot takes them from _Sequences."""

import ctypes

from ._ffi import (Error, _CODES, _MANY_SEQUENCES, _SZ, _bytes, _check, _expr_need,
                   _expr_set_errors, _held, _kmer_k, _layout, _query_findere, _query_whole)


THETA_EVERY = -1.0  # bfi.h's BFI_THETA_EVERY: every set, with its score


def _theta(threshold):
    """A threshold as the library takes it: None stays None (no threshold),
    0 asks for every set with its score (BFI_THETA_EVERY), else (0, 1]."""
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or \
            not 0 <= threshold <= 1:
        raise Error(_CODES["BFI_E_INVALID"], f"threshold {threshold!r}: must be in [0, 1]")
    return THETA_EVERY if threshold == 0 else float(threshold)


class _Sequences:
    """The sequence queries of Snapshot (snapshot.py), which supplies _snap,
    _res, _kmers, _run, _many and _answer."""

    @_held
    def query_sequences(self, seqs, *, threshold=None, errors=None, findere=None, k=0,
                        layout=None, ordinals=False, as_array=False, threads=1):
        """Which genomes may hold at least threshold [0, 1] of a DNA
        sequence's k-mers (k: the snapshot's own, unless given)? Or, with
        errors=E instead, all of its distinct k-mers but E x k, the k-mer
        lemma's bound for a read of E errors (every genome when that
        leaves none; needed() gives the count). seqs is one sequence (str
        or bytes), answered with a list of (name, score) pairs, best first,
        the score being the k-mers found; or an iterable of sequences or
        (id, sequence) pairs, answered with a list of such lists, in order,
        on threads threads (0: one per online core): up to 1,024 reads a
        call into the library (bfi_query_many), which runs outside
        Python's lock, so threads answer reads side by side. findere=z
        (with threshold=) takes a read's distinct (k+z)-mers as its
        terms, each found where all z+1 of its k-mers are (bfi query
        --findere); the scores are then (k+z)-mers."""
        theta, errors = self._read_threshold(threshold, errors)
        if findere is not None:
            return self._findere(seqs, findere, theta, errors, k, _layout(layout), ordinals,
                                 as_array)
        if isinstance(seqs, (str, bytes)):
            e = self._kmers(seqs, k)
            if errors is not None and e.p:
                _check(_expr_set_errors(e.p, 0, errors), "errors")
            return self._run(e, _layout(layout), theta, ordinals, as_array)

        _kmer_k(k)
        items = [_bytes(x[1] if isinstance(x, tuple) else x) for x in seqs]
        what = _MANY_SEQUENCES | ((errors or 0) << 8)  # BFI_MANY_ERRORS(E)
        return self._many(what, items, k, theta, _layout(layout), ordinals, as_array, threads,
                          "sequence", scored=True)

    @_held
    def query_whole(self, seqs, *, threshold, k=0, layout=None, ordinals=False, as_array=False):
        """Which genomes may hold at least threshold [0, 1] of all the
        distinct k-mers of seqs together (an assembly's records, a sample's
        reads; str, bytes, or an iterable of them or of (id, sequence)
        pairs), however many: one answer of (name, score) pairs, best first,
        as bfi query --whole gives it. k-mers do not span two sequences."""
        theta, _ = self._read_threshold(threshold, None)
        if isinstance(seqs, (str, bytes)):
            seqs = [seqs]
        b = b"\n".join(_bytes(x[1] if isinstance(x, tuple) else x) for x in seqs)
        _kmer_k(k)
        terms = _SZ()
        r = self._res()
        _check(_query_whole(self._snap(), _layout(layout), b, len(b), k, theta, r,
                            ctypes.byref(terms)), "sequences")
        return self._answer(r, ordinals, as_array, scored=True)

    def _findere(self, seqs, z, theta, errors, k, layout, ordinals, as_array):
        """query_sequences with findere=z: a read a call (bfi_query_findere)."""
        if isinstance(z, bool) or not isinstance(z, int) or not 0 <= z <= 64:
            raise ValueError(f"bfi: findere is 0 to 64, not {z!r}")
        if errors is not None:
            raise ValueError("bfi: findere= takes threshold=, not errors=")
        _kmer_k(k)
        one = isinstance(seqs, (str, bytes))
        out = []
        s, r = self._snap(), self._res()
        for x in [seqs] if one else seqs:
            b = _bytes(x[1] if isinstance(x, tuple) else x)
            terms = _SZ()
            _check(_query_findere(s, layout, b, len(b), k, z, theta, r, ctypes.byref(terms)),
                   "sequence")
            out.append(self._answer(r, ordinals, as_array, scored=True))
        return out[0] if one else out

    @staticmethod
    def _read_threshold(threshold, errors):
        """A read's threshold: (theta, errors) for the library, from exactly
        one of threshold= and errors=."""
        if (threshold is None) == (errors is None):
            raise ValueError("bfi: give threshold= or errors= (one of them)")
        if errors is not None:
            if isinstance(errors, bool) or not isinstance(errors, int) or not 0 <= errors <= 1000:
                raise ValueError(f"bfi: errors is a count, 0 to 1000, not {errors!r}")
            return 1.0, errors  # the read's own need; theta unused
        return _theta(threshold), None

    @_held
    def needed(self, seq, *, errors, k=0):
        """The k-mers of seq a genome must hold to answer it with errors=E:
        its distinct k-mers less E x k, or 0 (every genome)."""
        theta, errors = self._read_threshold(None, errors)
        e = self._kmers(seq, k)
        if not e.p:
            return 0
        _check(_expr_set_errors(e.p, 0, errors), "errors")
        return _expr_need(e.p, theta)
