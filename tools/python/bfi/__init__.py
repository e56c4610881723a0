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
(name, score) pairs, best first; threshold=0 answers every set with its
score, none held included. With NumPy installed, key arrays are
accepted and as_array=True returns ordinals as numpy.uint32 arrays.

Errors raise bfi.Error, whose code is the library's BFI_E_* value (or a
negated errno) and name its symbol.

The library is found through, in order: the BFI_LIBRARY environment
variable, the path `ninja install` recorded beside this module, the
system's linker path (libbfi.so.3).
"""

from ._ffi import LAYOUTS, Error, ScanWarning, _CODES, memory_limits, version
from .builder import build
from .join import compact, merge
from .remote import Client, RemoteError, RemoteSnapshot
from .snapshot import Snapshot, open

__all__ = ["open", "Snapshot", "Error", "version", "build", "merge", "compact", "Client",
           "LAYOUTS"]
