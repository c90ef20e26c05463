"""Reads of a vault's files that an edit can start from: never a half-written file (read again
until stable while another program writes it), always a regular file inside the vault, and
UTF-8 text or a clear error."""

from __future__ import annotations

import errno
import os
import signal
import sys
import time
from codecs import getincrementaldecoder
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

if sys.platform == "linux":
    import fcntl

from memvault.core.ages import Seen
from memvault.core.document import Document, parse_document
from memvault.core.memory import (
    Memory,
    content_hash,
    memory_from,
)
from memvault.core.records import Snapshot
from memvault.errors import (
    NotFound,
    Unreadable,
)
from memvault.storage.regular_files import open_regular

# The rest of a file read only in part is hashed in pieces of this many bytes: never held whole.
PIECE = 1 << 20


# A file an edit starts from is read until it is stable: at once when no other process has it
# open for writing (Linux file leases tell); else, or where leases cannot tell, a file changed
# within SETTLED_NS is read again every STABLE_PAUSE seconds until two reads agree (size, mtime,
# hash), or HELD_OPEN_READS in a row while another process holds it open for writing (an editor
# mid-write), up to STABLE_TRIES reads.
SETTLED_NS = 1_000_000_000


STABLE_PAUSE = 0.01


HELD_OPEN_READS = 50


STABLE_TRIES = 300


def parsed(
    path: str, snapshot: Snapshot, seen: Seen | None = None
) -> tuple[Memory, Document, Snapshot]:
    """The memory and document a snapshot holds, dated by what the index `seen` of the file
    (core/ages.py), with the snapshot."""
    doc = parse_document(snapshot.text)
    return memory_from(path, doc, snapshot.mtime_ns, snapshot.digest, seen), doc, snapshot


def snapshot(
    path: str, full: Path, inside: str, probe: bool = False
) -> tuple[Snapshot, bool | None]:
    """One read of a file with the stat of what was read; with `probe`, also whether another
    process has it open for writing (None: cannot tell)."""
    data, mtime_ns, writing = read_bytes(path, full, inside, probe)
    return snapshot_of(path, data, mtime_ns), writing


def snapshot_of(path: str, data: bytes, mtime_ns: int) -> Snapshot:
    """A file's bytes as the snapshot of it an edit or a read starts from."""
    text = decoded(path, data)
    return Snapshot(text, len(data), mtime_ns, content_hash(text))


def read_bytes(
    path: str, full: Path, inside: str, probe: bool = False
) -> tuple[bytes, int, bool | None]:
    """A file's bytes and its mtime, and with `probe` whether another process has it open for
    writing (True too if it changed while read); NotFound or Unreadable with the reason (a
    regular file inside the vault `inside` only: regular_files)."""
    with read_errors(path), os.fdopen(open_regular(str(full), inside), "rb") as handle:
        before = os.fstat(handle.fileno())
        data = handle.read()
        writing = _open_for_writing(handle.fileno()) if probe else None
        after = os.fstat(handle.fileno())
    moved = (before.st_size, before.st_mtime_ns) != (after.st_size, after.st_mtime_ns)
    if probe and (moved or len(data) != after.st_size):
        writing = True
    return data, after.st_mtime_ns, writing


def _open_for_writing(fd: int) -> bool | None:
    """Whether another process has this file open for writing: Linux refuses a read lease
    then. None where that cannot be told (another system, a file system without leases, a
    file of another owner). The lease is dropped at once; a writer opening the file meanwhile
    signals SIGURG, which is ignored, not SIGIO, which would end the process."""
    if sys.platform != "linux":
        return None
    try:
        fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGURG)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except OSError as exc:
        return True if exc.errno == errno.EAGAIN else None
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    return False


@contextmanager
def read_errors(path: str) -> Iterator[None]:
    """A failed read of a file as NotFound or Unreadable with the reason (regular_files says
    why a file that is no regular file of the vault is not read)."""
    try:
        yield
    except FileNotFoundError as exc:
        raise NotFound(f"no file {path!r} in the vault") from exc
    except OSError as exc:
        raise Unreadable(f"cannot read {path!r}: {exc.strerror}") from exc


def decoded(path: str, data: bytes, whole: bool = True) -> str:
    """A file's bytes as text (unless `whole`, only its first bytes: a character they cut in
    two is left out); Unreadable if they are not UTF-8."""
    try:
        return data.decode("utf-8") if whole else getincrementaldecoder("utf-8")().decode(data)
    except UnicodeDecodeError as exc:
        raise Unreadable(f"{path!r} is not UTF-8 text") from exc


def moment(mtime_ns: int) -> str:
    """An mtime as UTC time of day to the millisecond, to name a change."""
    seconds, nanos = divmod(mtime_ns, 1_000_000_000)
    return time.strftime("%H:%M:%S", time.gmtime(seconds)) + f".{nanos // 1_000_000:03d}Z"
