"""Worker processes that run on every platform: forked where that is safe, spawned elsewhere.

A fork copies only the calling thread, with whatever locks the others held, and macOS's system
libraries are not fork-safe; Windows has no fork at all. So memvault forks only on Linux in a
process that runs no other thread, and spawns otherwise: both give the same results, the
spawned children just start slower (they import memvault afresh). `MEMVAULT_START_METHOD`
forces a method, so the tests exercise the portable path on Linux too.

A worker ends with the process that started it (parent_death.py).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import TYPE_CHECKING

from memvault.errors import Invalid
from memvault.parent_death import end_with_parent

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

START_METHOD_ENV = "MEMVAULT_START_METHOD"
# Workers yield the cores to the main process, which is the critical path: they parse ahead.
NICE = 10


def start_method() -> str:
    """'fork' where it is safe, else 'spawn'; MEMVAULT_START_METHOD overrides either."""
    import multiprocessing  # here, not at the top: a hook's start need not pay for it

    forced = os.environ.get(START_METHOD_ENV, "").strip()
    if forced:
        if forced not in multiprocessing.get_all_start_methods():
            raise Invalid(
                f"{START_METHOD_ENV}={forced!r} is not a start method here; use one of "
                + ", ".join(multiprocessing.get_all_start_methods())
            )
        return forced
    safe = sys.platform.startswith("linux") and threading.active_count() == 1
    return "fork" if safe else "spawn"


def forks() -> bool:
    """Whether new workers are forked: cheap enough to start for a fraction of a second's work."""
    return start_method() == "fork"


def pool(workers: int, low_priority: bool = False) -> ProcessPoolExecutor:
    """A process pool of `workers`, at a lower priority than this process if asked (where the
    platform has one)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context(start_method())
    return ProcessPoolExecutor(workers, context, _start_worker, (os.getpid(), low_priority))


def parallelism() -> int:
    """Processes that parse files while the main one writes; 0 on a single core."""
    count = os.cpu_count() or 1
    return count if count > 1 else 0


def _start_worker(parent: int, low_priority: bool) -> None:
    """What each worker does first: tie its life to its parent's, and yield the cores to the
    parent if asked (where the platform has priorities)."""
    end_with_parent(parent, signal.SIGKILL)
    if low_priority and hasattr(os, "nice"):
        os.nice(NICE)
