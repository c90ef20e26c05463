"""Opening a vault's file for reading: only a regular file, and only one that lies inside the
vault once opened.

A check before the open is not enough: a named pipe called `x.md` blocks a plain `open` until
a writer comes (every reindex, sync and search hung on one), and a symlink renamed over a note
between a walk's check and the open was followed out of the vault (`/etc/passwd` was indexed in
7 of 17 rebuilds). So the open never blocks (`O_NONBLOCK`), and what it opened is checked on the
descriptor itself: its kind by `fstat`, its place by the path the kernel gives it.
"""

from __future__ import annotations

import os
import stat
import sys

if sys.platform in ("linux", "darwin"):
    import fcntl

KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
)


class NotRegular(OSError):
    """The path is no regular file of the vault: `reason` says what it is instead."""

    def __init__(self, reason: str, path: str):
        super().__init__(0, reason, path)
        self.reason = reason


def open_regular(full: str, inside: str) -> int:
    """A read-only descriptor of the regular file at `full`, which must lie inside the folder
    `inside` (a resolved path) as opened; NotRegular otherwise, OSError when it cannot open."""
    fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        problem = _problem(fd, inside)
    except BaseException:
        os.close(fd)
        raise
    if problem is not None:
        os.close(fd)
        raise NotRegular(problem, full)
    return fd


def read_regular(full: str, inside: str) -> bytes:
    """The bytes of the regular file at `full` inside `inside` (see `open_regular`)."""
    with os.fdopen(open_regular(full, inside), "rb") as handle:
        return handle.read()


def kind_problem(mode: int) -> str | None:
    """Why a file of this `st_mode` is no note ("not a regular file (a named pipe)"), or None."""
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in KINDS if test(mode)), "not a file")
    return f"not a regular file ({kind})"


def _problem(fd: int, inside: str) -> str | None:
    """Why the opened file is no regular file of the folder `inside`, or None."""
    problem = kind_problem(os.fstat(fd).st_mode)
    if problem is not None:
        return problem
    where = _opened_path(fd)
    if where is not None and not where.startswith(inside.rstrip(os.sep) + os.sep):
        return "leads out of the vault (a symlink put in its place)"
    return None


def _opened_path(fd: int) -> str | None:
    """The path of what `fd` opened, as the kernel resolved it (None where it cannot tell)."""
    if sys.platform == "linux":
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return None
    if sys.platform == "darwin":
        return os.fsdecode(fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024)).rstrip(b"\0"))
    return None
