"""Give the C heap's free memory back to the operating system (glibc's `malloc_trim`).

A long-lived server frees much more than it keeps at two moments: when ONNX Runtime has built a session
(the model's protobuf and the graph optimiser's copies are freed, ~60 MB on all-MiniLM-L6-v2) and when a
sync that wrote files ends (the parsed documents, their chunks and the embedder's batches). glibc keeps
such memory in its arenas, so VmRSS stays at the peak; `malloc_trim(0)` returns the free pages
(docs/benchmarks.md section 15 has the figures). A no-op where the C library is not glibc.
"""

from __future__ import annotations

import ctypes
import logging
import sys
from collections.abc import Callable
from functools import cache

log = logging.getLogger(__name__)


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)  # the process's own symbols: the C library it runs on
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # musl and others have no malloc_trim
        return None
    return trim


def trim() -> None:
    """Return the heap's free pages to the system, where the C library can (glibc); otherwise nothing."""
    fn = _malloc_trim()
    if fn is not None:
        try:
            fn(0)
        except OSError as err:  # never fail the caller over a memory hint
            log.debug("malloc_trim failed: %s", err)
