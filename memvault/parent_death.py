"""A child process's life tied to its parent's: when the parent dies, the child gets a signal.

On Linux the kernel sends it (PR_SET_PDEATHSIG); elsewhere a thread in the child watches for
the parent to go and sends it. A SIGKILLed `reindex` once left its workers running for good.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

# prctl(2): send this process a signal when its parent dies.
PR_SET_PDEATHSIG = 1
# How often a child without prctl looks whether its parent is still there, in seconds.
PARENT_CHECK = 1.0


def end_with_parent(parent: int, signum: signal.Signals) -> None:
    """Have this process (a child of `parent`) get `signum` when its parent dies; exit at once
    if the parent is already gone."""
    if not _signalled_by_kernel(signum):
        threading.Thread(target=_watch_parent, args=(parent, signum), daemon=True).start()
    if os.getppid() != parent:
        os._exit(1)


def _signalled_by_kernel(signum: signal.Signals) -> bool:
    """Ask Linux to send `signum` to this process when its parent dies; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int, signum: signal.Signals) -> None:
    """Signal this process once its parent is gone (it then has another parent)."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK)
    os.kill(os.getpid(), signum)
