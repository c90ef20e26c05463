"""Atomic writes of a vault's files: a temp file fsynced and renamed over, only if the file is
still the one the edit read (compare before replace), the old file kept aside until the change
is final, folders fsynced once a change ends, and the errors of a full disk said plainly."""

from __future__ import annotations

import errno
import logging
import os
import secrets
import stat as stat_mode
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from glob import escape as glob_escape
from pathlib import Path

if sys.platform == "linux":
    pass

from memvault.core.records import Snapshot
from memvault.errors import (
    Changed,
    Invalid,
    Unwritable,
)
from memvault.storage.stable_reads import moment, snapshot

log = logging.getLogger(__name__)

TEMP_SUFFIX = ".memvault-tmp"


LEFTOVER_AGE = 60.0


_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


# The folders this thread's change has renamed into or out of, to fsync when it ends.
_UNSYNCED = threading.local()


def prune(root: Path, folder: Path) -> None:
    """Remove `folder` and its parents up to `root` while they are empty."""
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def remove_leftover(temp: Path) -> None:
    try:
        if time.time() - temp.stat().st_mtime > LEFTOVER_AGE:
            temp.unlink()
            log.info("removed %s, left by an interrupted write", temp)
    except OSError:
        pass


@dataclass
class Undo:
    """How to take back one file change until it is final: the file it replaced or removed
    is kept aside (a hard link under a temp name: no space needed to put it back), or, where
    hard links cannot be made, its old text is kept to write again."""

    full: Path
    kept: Path | None = None
    created: bool = False
    moved_to: Path | None = None
    root: Path | None = None
    old_text: str | None = None

    def undo(self) -> None:
        """Put the file back as it was before the change."""
        if self.moved_to is not None:
            self.full.parent.mkdir(parents=True, exist_ok=True)
            os.rename(self.moved_to, self.full)
        elif self.kept is not None:
            self.full.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self.kept, self.full)
            self.kept = None
        elif self.old_text is not None:
            atomic_write(self.full, self.old_text)
        elif self.created:
            self.full.unlink(missing_ok=True)
        fsync_folder(self.full.parent)

    def discard(self) -> None:
        """The change is final: drop the copy kept aside (and its folder, if it was all that
        kept a moved or deleted file's folder)."""
        if self.kept is not None:
            self.kept.unlink(missing_ok=True)
            if self.root is not None:
                prune(self.root, self.kept.parent)


def atomic_write(
    full: Path, text: str, check: Callable[[], os.stat_result | None] = lambda: None
) -> Undo:
    """Write `text` to a temp file, fsync it, run `check` (it raises if the file must not be
    replaced; it returns the current file's stat, None for no file to keep), keep the old file
    aside and rename over."""
    temp = aside(full)
    kept: Path | None = None
    try:
        with open(temp, "xb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        current = check()
        if current is not None:
            _keep_owner(temp, current)
            kept = _link_aside(full)
            _same_stat(full, current)
        os.replace(temp, full)
    except BaseException:
        temp.unlink(missing_ok=True)
        if kept is not None:
            kept.unlink(missing_ok=True)
        raise
    fsync_folder(full.parent)
    return Undo(full=full, kept=kept, created=current is None)


def _drop_kept_links(full: Path, current: os.stat_result) -> bool:
    """Delete copies of `full` that an interrupted memvault kept aside (same file, memvault's
    temp name; the caller holds the vault lock, so no live writer owns them); whether any went."""
    dropped = False
    for kept in full.parent.glob(f".{glob_escape(full.name)}.*{TEMP_SUFFIX}"):
        with suppress(OSError):
            found = os.stat(kept, follow_symlinks=False)
            if (found.st_ino, found.st_dev) == (current.st_ino, current.st_dev):
                kept.unlink()
                dropped = True
    return dropped


def _same_stat(full: Path, checked: os.stat_result) -> None:
    """Changed if the file's stat moved since `checked` (the last look, a stat apart from the
    rename: the window an editor's save could still slip into is that short)."""
    now = os.stat(full)
    if (now.st_ino, now.st_size, now.st_mtime_ns) != (
        checked.st_ino,
        checked.st_size,
        checked.st_mtime_ns,
    ):
        raise Changed(f"{full.name} changed on disk just before memvault's write; nothing written")


def _link_aside(full: Path) -> Path | None:
    """A hard link to `full` under a temp name, to put it back from; None on a file system
    without hard links (FAT, some network shares): the undo then rewrites the old text."""
    kept = aside(full)
    try:
        if os.link in os.supports_follow_symlinks:
            os.link(full, kept, follow_symlinks=False)
        else:
            os.link(full, kept)
    except OSError as exc:
        if exc.errno in _FULL:
            raise
        return None
    return kept


def aside(full: Path) -> Path:
    """A fresh temp name next to `full` (a dot-file: walks skip it, upkeep sweeps it)."""
    return full.parent / f".{full.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}"


def _keep_owner(temp: Path, current: os.stat_result) -> None:
    """Give the new file the mode and owner of the one it replaces (owner only where allowed:
    as root, or a group the writer is in)."""
    os.chmod(temp, stat_mode.S_IMODE(current.st_mode))
    mine = temp.stat()
    if (mine.st_uid, mine.st_gid) != (current.st_uid, current.st_gid) and hasattr(os, "chown"):
        with suppress(PermissionError):
            os.chown(temp, current.st_uid, current.st_gid)


def unchanged(path: str, full: Path, inside: str, base: Snapshot | None) -> os.stat_result | None:
    """The file's stat if it is still the one `base` describes (None: still absent); else
    Changed, naming what changed. A file with other hard links is refused: replacing it would
    split them."""
    try:
        current = os.stat(full)
    except FileNotFoundError:
        if base is None:
            return None
        raise Changed(
            f"{path} was deleted while memvault was editing it; nothing was written"
        ) from None
    if base is None:
        raise Changed(f"{path} was created by another program meanwhile; nothing was written")
    if current.st_nlink > 1 and _drop_kept_links(full, current):
        current = os.stat(full)
    if current.st_nlink > 1:
        raise Invalid(
            f"{path} has {current.st_nlink} hard links; memvault will not replace it (that "
            "would split them). Edit it by hand, or make it a single file first"
        )
    now = snapshot(path, full, inside)[0]
    if (now.size, now.mtime_ns, now.digest) != (base.size, base.mtime_ns, base.digest):
        raise Changed(
            f"{path} changed on disk while memvault was editing it ({base.size} -> {now.size} "
            f"bytes, modified {moment(now.mtime_ns)}); nothing was written"
        )
    return current


@contextmanager
def write_errors(path: str) -> Iterator[None]:
    """An OSError while changing a file becomes one clear line; a full disk says so."""
    try:
        yield
    except OSError as exc:
        if exc.errno in _FULL:
            raise Unwritable(
                f"disk full: cannot write {path}; nothing was changed. Free some space and retry"
            ) from exc
        raise Unwritable(f"cannot write {path}: {exc.strerror or exc}") from exc


def same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


@contextmanager
def folders_synced_at_end() -> Iterator[None]:
    """Within: a folder whose entries change (a rename into it, a file kept aside) is fsynced
    when the block ends, once, not at each change. A write holds the vault lock inside this
    block, so its folders are made durable after the lock is released (an fsync is about 4 ms
    on this disk, as long as the rest of a write) and before the write is acknowledged. The
    outermost block syncs."""
    if getattr(_UNSYNCED, "folders", None) is not None:
        yield
        return
    folders: dict[Path, None] = {}
    _UNSYNCED.folders = folders
    try:
        yield
    finally:
        _UNSYNCED.folders = None
        for folder in folders:
            _sync_folder(folder)


def fsync_folder(folder: Path) -> None:
    """Make a folder's entries durable: now, or when `folders_synced_at_end` ends."""
    pending: dict[Path, None] | None = getattr(_UNSYNCED, "folders", None)
    if pending is None:
        _sync_folder(folder)
    else:
        pending[folder] = None


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
