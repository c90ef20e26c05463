"""A server's threads share two malloc arenas (arenas.py), unless MALLOC_ARENA_MAX says."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc", reason="malloc arenas are glibc's"
)

# Eight threads allocate while all alive, then glibc's malloc_stats lists the arenas on stderr.
PROBE = textwrap.dedent(
    """
    import ctypes, sys, threading
    from memvault.arenas import fewer_arenas
    print(fewer_arenas() if sys.argv[1] == "limit" else "-")
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    barrier = threading.Barrier(8)
    def allocate():
        libc.malloc(1000)
        barrier.wait()
    threads = [threading.Thread(target=allocate) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    libc.malloc_stats()
    """
)


def arenas(how: str, environ: dict[str, str]) -> tuple[str, int]:
    """What fewer_arenas said in a fresh process (`how`: limit or not), and how many arenas
    its eight threads used."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, how], capture_output=True, text=True, env=environ, check=True
    )
    return done.stdout.strip(), done.stderr.count("Arena ")


def test_threads_share_two_arenas() -> None:
    environ = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    assert arenas("limit", environ) == ("True", 2)
    assert arenas("none", environ)[1] > 2


def test_a_persons_malloc_arena_max_stands() -> None:
    said, count = arenas("limit", {**os.environ, "MALLOC_ARENA_MAX": "3"})
    assert said == "False"
    assert count == 3
