"""A memory's update time, from the file's own record: its frontmatter's `updated_at`, unless
its content changed since the index last saw it while that stamp stayed (an edit made in an
editor), when the file's modification time says when.

A clone, a copy or a restore gives every file a new mtime, so the mtime alone would make every
memory "updated just now" there: the content tells a change from a copy. The index keeps each
file's content hash with the time it recorded (`Seen`); with no index (a fresh clone) the
frontmatter is all there is, and a note without a stamp has only its file's time.
"""

from __future__ import annotations

import time

# memvault stamps updated_at just before writing; an mtime later than that by more than this
# many seconds means someone else changed the file since (see `update_time`).
WRITE_SLACK = 2

# What the index recorded of a path before: its content hash and the update time it gave it.
Seen = tuple[str, str | None]


def update_time(
    stamp: str | None, mtime_ns: int | None, digest: str, seen: Seen | None
) -> str | None:
    """The update time of a file whose frontmatter says `stamp` and whose content hashes to
    `digest`, modified at `mtime_ns`, given what the index `seen` of its path (None: nothing,
    as in a fresh clone or for a new file)."""
    if seen is None:
        return stamp or _file_time(mtime_ns)
    known_hash, known = seen
    if known_hash == digest and known:
        return known  # the same content: copied, touched or restored, not changed
    if stamp and stamp != known:
        # The change carries its own stamp: memvault's write (here or elsewhere), an import
        # dated by its source (earlier, then), or a person who set it by hand.
        return stamp
    return _later(stamp, mtime_ns)


def _file_time(mtime_ns: int | None, slack: int = 0) -> str | None:
    """A file's modification time (less `slack` seconds) as memvault writes timestamps."""
    if mtime_ns is None:
        return None
    seconds = mtime_ns // 1_000_000_000 - slack
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _later(stamp: str | None, mtime_ns: int | None) -> str | None:
    """The file's mtime if it is later than `stamp` by more than the write itself takes."""
    modified = _file_time(mtime_ns)
    if stamp is None or modified is None:
        return modified or stamp
    written = _file_time(mtime_ns, WRITE_SLACK)
    return modified if written is not None and written > stamp else stamp
