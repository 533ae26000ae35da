"""Keep the memory of freed large tensors for the next pass (glibc's malloc, Linux only).

Every pass allocates and frees the same few vocabulary-sized tensors (logits, the softcap's and the
softmax's temporaries: 2 MiB each on the built-in model, 64 slots x 8,192 tokens x 4 bytes). glibc
serves allocations above its mmap threshold with fresh mappings and unmaps them on free, so each pass
page-faults its temporaries in again. Raising the threshold to its maximum (32 MiB on 64-bit) and the
trim threshold with it keeps those blocks in the heap for reuse: the per-pass cost drops (README,
Performance) at the price of the process keeping its peak working set. Tensors above 32 MiB (a large
model's logits) are mapped as before.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

# mallopt(3) parameters and glibc's ceiling for the mmap threshold on 64-bit (4 * 1024 * 1024 * sizeof(long)).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_MAX = 32 * 1024 * 1024
TRIM_THRESHOLD = 4 * MMAP_THRESHOLD_MAX

_applied: bool | None = None


def keep_freed_memory() -> bool:
    """Tune glibc's malloc as the module docstring says, once per process; whether it took effect."""
    global _applied
    if _applied is None:
        _applied = _tune()
    return _applied


def _tune() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and other C libraries have no mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
