"""The vault folder on disk: safe paths, walking, reading memories, atomic writes and the lock."""

from __future__ import annotations

import errno
import logging
import os
import secrets
import signal
import stat as stat_mode
import sys
import threading
import time
from codecs import getincrementaldecoder
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from functools import partial
from glob import escape as glob_escape
from itertools import chain
from pathlib import Path, PurePosixPath

from filelock import FileLock, Timeout

if sys.platform == "linux":
    import fcntl

from memvault.config import STATE_DIR
from memvault.core.document import Document, parse_document, render_document
from memvault.core.memory import (
    VAULT_README,
    Memory,
    content_digest,
    content_hash,
    is_memory_path,
    memory_from,
    path_problem,
)
from memvault.core.records import FileInfo, Skipped, Snapshot
from memvault.errors import (
    Changed,
    Conflict,
    Invalid,
    MemvaultError,
    NotFound,
    ReadOnly,
    Unreadable,
    Unwritable,
)
from memvault.storage.regular_files import kind_problem, open_regular

log = logging.getLogger(__name__)

LOCK_TIMEOUT = 30.0
# How often a writer waiting for the vault lock tries again. filelock's default (50 ms) is ten
# times a whole write here, so waiting writers slept while the lock was free: 4 servers writing
# at once managed about 125 writes/s with it and about 210/s with 2 ms (1k notes).
LOCK_POLL = 0.002
TEMP_SUFFIX = ".memvault-tmp"
LEFTOVER_AGE = 60.0
# The rest of a file read only in part is hashed in pieces of this many bytes: never held whole.
PIECE = 1 << 20
# Why a symlink to a note of the vault is not indexed: it is that note (never reported).
SAME_NOTE = "a link to a note of the vault"
# A file an edit starts from is read until it is stable: at once when no other process has it
# open for writing (Linux file leases tell); else, or where leases cannot tell, a file changed
# within SETTLED_NS is read again every STABLE_PAUSE seconds until two reads agree (size, mtime,
# hash), or HELD_OPEN_READS in a row while another process holds it open for writing (an editor
# mid-write), up to STABLE_TRIES reads.
SETTLED_NS = 1_000_000_000
STABLE_PAUSE = 0.01
HELD_OPEN_READS = 50
STABLE_TRIES = 300
_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
# The folders this thread's change has renamed into or out of, to fsync when it ends.
_UNSYNCED = threading.local()


class VaultStore:
    """Reads and writes the markdown files of one vault; never follows a path out of it."""

    def __init__(self, root: Path):
        self.root = Path(root).expanduser().absolute()
        self._real_root = self.root.resolve()
        self._inside = str(self._real_root)
        self._lock = FileLock(str(self.state_dir / "lock"), timeout=LOCK_TIMEOUT)
        self._embedding = FileLock(str(self.state_dir / "embedding.lock"), timeout=0)

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    def ensure(self) -> None:
        """Create the vault folder if missing (a read-only vault that exists is fine)."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise Unreadable(f"cannot create the vault at {self.root}: {exc.strerror}") from exc

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the vault lock: one writer at a time across every memvault process. A vault
        memvault cannot write to (read-only media, permissions) is ReadOnly, in one line."""
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            self._lock.acquire(poll_interval=LOCK_POLL)
        except Timeout as exc:
            raise Conflict(
                f"the vault is locked by another memvault process for over {LOCK_TIMEOUT:.0f}s; "
                "try again"
            ) from exc
        except OSError as exc:
            raise ReadOnly(
                f"the vault {self.root} is read-only ({exc.strerror}); memvault can search and "
                "read it but not change it"
            ) from exc
        try:
            yield
        finally:
            self._lock.release()

    @contextmanager
    def embedding_turn(self) -> Iterator[bool]:
        """Whether this process has the vault's turn to embed (True while inside): one
        memvault process embeds at a time, the others load the vectors it saved. Four servers
        on one vault each embedding the same notes wrote half as fast. False at once while
        another process has the turn; True where the turn cannot be taken (a read-only vault)."""
        try:
            self._embedding.acquire()
        except Timeout:
            yield False
            return
        except OSError:
            yield True
            return
        try:
            yield True
        finally:
            self._embedding.release()

    def absolute(self, path: str) -> Path:
        """The absolute file for a vault-relative path, refusing anything that leaves the vault
        or lies in a dot-folder (those hold no memories: .trash, .obsidian, memvault's own)."""
        pure = PurePosixPath(path.replace("\\", "/"))
        problem = path_problem(path)
        if problem is not None:
            raise Invalid(f"path {path!r} {problem}; use a relative path like a/b.md")
        full = self.root / Path(*pure.parts)
        try:
            real = full.resolve()
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (Python < 3.13)
            raise Invalid(f"path {path!r} is a symlink loop") from exc
        if real != self._real_root and self._real_root not in real.parents:
            raise Invalid(f"path {path!r} leads out of the vault (through a symlink)")
        return full

    def exists(self, path: str) -> bool:
        return self.absolute(path).exists()

    def walk(
        self,
        skipped: list[Skipped] | None = None,
        share: tuple[int, int] = (0, 1),
        sweep: bool = False,
    ) -> Iterator[FileInfo]:
        """Every markdown file in the vault, depth first in name order, skipping dot-folders,
        symlinks out of it and symlinks to its own notes (those are one memory, the target).

        With `sweep` (upkeep only: a read never changes the vault) it deletes on the way
        memvault's own temp files that a crash left behind (older than LEFTOVER_AGE seconds; a
        live writer's temp file lives for milliseconds). `share` (i, n) walks only every n-th
        top-level folder from the i-th (the root's own files go with share 0), so that n
        processes can walk one vault together. The open folders are a stack, not a recursion,
        so a tree of any depth is walked.
        """
        if not self.root.is_dir():
            raise Unreadable(f"the vault {self.root} does not exist or is not a folder")
        folders = [(iter(self._listing(str(self.root), "", skipped, share, sweep)), "")]
        while folders:
            entries, prefix = folders[-1]
            for entry, is_dir in entries:
                if is_dir:
                    inner = f"{prefix}{entry.name}/"
                    listing = self._listing(entry.path, inner, skipped, (0, 1), sweep)
                    folders.append((iter(listing), inner))
                    break
                info = self._entry_info(entry, prefix + entry.name, skipped)
                if info is not None:
                    yield info
            else:
                folders.pop()

    def _listing(
        self,
        folder: str,
        prefix: str,
        skipped: list[Skipped] | None,
        share: tuple[int, int],
        sweep: bool,
    ) -> list[tuple[os.DirEntry[str], bool]]:
        """A folder's markdown files and subfolders (is_dir) in name order, within `share`;
        plain strings and scandir keep 100k files fast."""
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            if skipped is not None:
                skipped.append(
                    Skipped(prefix.rstrip("/") or ".", f"cannot read folder: {exc.strerror}")
                )
            return []
        mine, shares = share
        folders = 0
        kept = []
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                if sweep and name.endswith(TEMP_SUFFIX) and mine == 0:
                    _remove_leftover(Path(entry.path))
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                folders += 1
                if (folders - 1) % shares == mine:
                    kept.append((entry, True))
            elif name.lower().endswith(".md") and mine == 0 and (prefix or not _readme(name)):
                kept.append((entry, False))
        return kept

    def _entry_info(
        self, entry: os.DirEntry[str], rel: str, skipped: list[Skipped] | None
    ) -> FileInfo | None:
        if entry.is_symlink():
            return self._info(Path(entry.path), skipped)
        return _reported(rel, _file_info(rel, entry.stat), skipped)

    def stat(self, path: str, skipped: list[Skipped] | None = None) -> FileInfo | None:
        """The file's size and mtime if `path` is a markdown file memvault would index, else None
        (missing, in a dot-folder, not markdown, a symlink out of the vault or to a note of its
        own); why a file there is not indexed goes to `skipped` (a symlink loop, ...)."""
        if not is_memory_path(path):
            return None
        try:
            full = self.absolute(path)
        except Invalid as exc:
            if skipped is not None:
                skipped.append(Skipped(path, f"not indexed: {exc}"))
            return None
        if full.is_dir() or not full.exists():
            return None
        return self._info(full, skipped)

    def _info(self, full: Path, skipped: list[Skipped] | None) -> FileInfo | None:
        rel = full.relative_to(self.root).as_posix()
        problem = self._link_problem(full) if full.is_symlink() else None
        return _reported(rel, problem or _file_info(rel, full.stat), skipped)

    def _link_problem(self, link: Path) -> str | None:
        """Why a symlink is no memory of its own (None when it is one): a loop, a dangling link
        or one out of the vault is reported; one to a note of the vault is that note
        (SAME_NOTE), so the note is never indexed twice under one id."""
        try:
            real = Path(os.path.realpath(link, strict=True))
        except OSError as exc:
            return "symlink loop" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
        if self._real_root not in real.parents:
            return "symlink out of the vault"
        if is_memory_path(real.relative_to(self._real_root).as_posix()) and real.is_file():
            return SAME_NOTE
        return None

    def read_text(self, path: str) -> str:
        """A file's text, BOM and line endings kept; a clear error if it cannot be read."""
        return self._decode(path, self.absolute(path))

    def load(self, info: FileInfo) -> str:
        """The text of a file `walk` found (and so already checked to be inside the vault)."""
        return self._decode(info.path, self.root / info.path)

    def _decode(self, path: str, full: Path) -> str:
        return _text(path, _read_bytes(path, full, self._inside)[0])

    def read(self, path: str) -> tuple[Memory, Document]:
        """A memory and the parsed document it came from, in one read (a read only shows it;
        an edit starts from `read_for_edit`)."""
        memory, doc, _read = _parsed(path, _snapshot(path, self.absolute(path), self._inside)[0])
        return memory, doc

    def read_head(
        self, path: str, limit: int, known: tuple[int, int, str] | None
    ) -> tuple[Memory, int]:
        """A memory read from the first `limit` bytes of its file, and the file's size: a bigger
        file's body is cut there, so a huge hand-made note is shown without being read whole.
        Its version is still the whole file's: the hash `known` records (size, mtime_ns, hash:
        the index's) while the file keeps that size and mtime, else the rest hashed in pieces."""
        with (
            _read_errors(path),
            os.fdopen(open_regular(str(self.absolute(path)), self._inside), "rb") as handle,
        ):
            head = handle.read(limit + 1)
            status = os.fstat(handle.fileno())
            if len(head) <= limit:
                return _parsed(path, _snapshot_of(path, head, status.st_mtime_ns))[0], len(head)
            if known is not None and known[:2] == (status.st_size, status.st_mtime_ns):
                digest = known[2]
            else:
                digest = content_digest(chain([head], iter(partial(handle.read, PIECE), b"")))
        doc = parse_document(_text(path, head[:limit], whole=False))
        return memory_from(path, doc, status.st_mtime_ns, digest), status.st_size

    def read_if_readable(self, path: str) -> Memory | None:
        """The memory at `path`, or None when it went or cannot be read since it was indexed:
        for the readers that pass over such a note (the duplicate checks) rather than fail."""
        try:
            return self.read(path)[0]
        except (OSError, MemvaultError):
            return None

    def read_for_edit(self, path: str) -> tuple[Memory, Document, Snapshot]:
        """A memory, its document, and the snapshot its write compares the file with; never a
        half-written file (see `snapshot`)."""
        return _parsed(path, self.snapshot(path))

    def snapshot(self, path: str) -> Snapshot:
        """The file as it stands, once it is stable (see STABLE_PAUSE), so that an editor's
        write in progress is never the base of an edit."""
        full = self.absolute(path)
        previous: Snapshot | None = None
        agreeing = 0
        for _ in range(STABLE_TRIES):
            current, writing = _snapshot(path, full, self._inside, probe=True)
            agreeing = agreeing + 1 if current == previous else 0
            settled = time.time_ns() - current.mtime_ns > SETTLED_NS
            needed = 1 if writing is None else HELD_OPEN_READS
            if writing is False or settled or agreeing >= needed:
                return current
            previous = current
            time.sleep(STABLE_PAUSE)
        raise Changed(
            f"{path} is being written by another program (it kept changing for "
            f"{STABLE_TRIES * STABLE_PAUSE:.0f}s); try again when it is saved"
        )

    def info(self, path: str) -> FileInfo:
        """Size and modification time of a file, as a walk would report them."""
        stat = self.absolute(path).stat()
        return FileInfo(path, stat.st_size, stat.st_mtime_ns)

    def save(
        self, path: str, doc: Document, body: str, updates: dict[str, object], base: Snapshot | None
    ) -> tuple[str, FileInfo, Undo]:
        """Write `body` under the document's frontmatter with `updates` applied over the file
        `base` describes (None: a new file); return the text, its stat and how to undo it.

        Files without frontmatter, or with broken YAML, keep their head byte for byte when
        there are no updates.
        """
        text = render_document(replace(doc, body=body), updates)
        undo = self.write(path, text, base)
        return text, self.info(path), undo

    def write(self, path: str, text: str, base: Snapshot | None) -> Undo:
        """Write a file atomically (temp file in the same folder, fsync, rename over), only if
        it is still the file `base` describes (or, for None, still absent): else Changed. The
        file keeps its mode and owner; a file with several hard links is refused."""
        full = self.absolute(path)
        with write_errors(path):
            full.parent.mkdir(parents=True, exist_ok=True)
            undo = atomic_write(full, text, lambda: _unchanged(path, full, self._inside, base))
        old_text = base.text if base is not None and undo.kept is None else None
        return replace(undo, root=self.root, old_text=old_text)

    def move(self, old: str, new: str) -> Undo:
        """Rename a file within the vault in one step, creating the target folder."""
        source, target = self.absolute(old), self.absolute(new)
        with write_errors(new):
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists() and not _same_file(source, target):
                raise Conflict(f"cannot move {old!r}: {new!r} already exists")
            os.rename(source, target)
            _fsync_folder(target.parent)
        self._prune(source.parent)
        return Undo(full=source, moved_to=target)

    def remove(self, path: str) -> Undo:
        """Delete a file (kept aside until the change is final), and its folder if that
        leaves the folder empty."""
        full = self.absolute(path)
        with write_errors(path):
            kept = _aside(full)
            os.rename(full, kept)
            _fsync_folder(full.parent)
        self._prune(full.parent)
        return Undo(full=full, kept=kept, root=self.root)

    def _prune(self, folder: Path) -> None:
        _prune(self.root, folder)


def _prune(root: Path, folder: Path) -> None:
    """Remove `folder` and its parents up to `root` while they are empty."""
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _file_info(rel: str, read_stat: Callable[[], os.stat_result]) -> FileInfo | str:
    """A regular file's size and mtime, or why it has none (its stat failed; it is a pipe, a
    socket, a device: regular_files.kind_problem)."""
    try:
        stat = read_stat()
    except OSError as exc:
        return exc.strerror or str(exc)
    return kind_problem(stat.st_mode) or FileInfo(rel, stat.st_size, stat.st_mtime_ns)


def _reported(rel: str, found: FileInfo | str, skipped: list[Skipped] | None) -> FileInfo | None:
    """`found` when it is a file's info; else None, and why goes to `skipped` (a link to a note
    of the vault is that note: never reported)."""
    if isinstance(found, FileInfo):
        return found
    if skipped is not None and found != SAME_NOTE:
        skipped.append(Skipped(rel, f"not indexed: {found}"))
    return None


def _readme(name: str) -> bool:
    """Whether a file name in the vault's top folder is the vault's own README (no memory)."""
    return name.lower() == VAULT_README


def _remove_leftover(temp: Path) -> None:
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
        _fsync_folder(self.full.parent)

    def discard(self) -> None:
        """The change is final: drop the copy kept aside (and its folder, if it was all that
        kept a moved or deleted file's folder)."""
        if self.kept is not None:
            self.kept.unlink(missing_ok=True)
            if self.root is not None:
                _prune(self.root, self.kept.parent)


def atomic_write(
    full: Path, text: str, check: Callable[[], os.stat_result | None] = lambda: None
) -> Undo:
    """Write `text` to a temp file, fsync it, run `check` (it raises if the file must not be
    replaced; it returns the current file's stat, None for no file to keep), keep the old file
    aside and rename over."""
    temp = _aside(full)
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
    _fsync_folder(full.parent)
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
    kept = _aside(full)
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


def _aside(full: Path) -> Path:
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


def _unchanged(path: str, full: Path, inside: str, base: Snapshot | None) -> os.stat_result | None:
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
    now = _snapshot(path, full, inside)[0]
    if (now.size, now.mtime_ns, now.digest) != (base.size, base.mtime_ns, base.digest):
        raise Changed(
            f"{path} changed on disk while memvault was editing it ({base.size} -> {now.size} "
            f"bytes, modified {_moment(now.mtime_ns)}); nothing was written"
        )
    return current


def _parsed(path: str, snapshot: Snapshot) -> tuple[Memory, Document, Snapshot]:
    """The memory and document a snapshot holds, with the snapshot."""
    doc = parse_document(snapshot.text)
    return memory_from(path, doc, snapshot.mtime_ns, snapshot.digest), doc, snapshot


def _snapshot(
    path: str, full: Path, inside: str, probe: bool = False
) -> tuple[Snapshot, bool | None]:
    """One read of a file with the stat of what was read; with `probe`, also whether another
    process has it open for writing (None: cannot tell)."""
    data, mtime_ns, writing = _read_bytes(path, full, inside, probe)
    return _snapshot_of(path, data, mtime_ns), writing


def _snapshot_of(path: str, data: bytes, mtime_ns: int) -> Snapshot:
    """A file's bytes as the snapshot of it an edit or a read starts from."""
    text = _text(path, data)
    return Snapshot(text, len(data), mtime_ns, content_hash(text))


def _read_bytes(
    path: str, full: Path, inside: str, probe: bool = False
) -> tuple[bytes, int, bool | None]:
    """A file's bytes and its mtime, and with `probe` whether another process has it open for
    writing (True too if it changed while read); NotFound or Unreadable with the reason (a
    regular file inside the vault `inside` only: regular_files)."""
    with _read_errors(path), os.fdopen(open_regular(str(full), inside), "rb") as handle:
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
def _read_errors(path: str) -> Iterator[None]:
    """A failed read of a file as NotFound or Unreadable with the reason (regular_files says
    why a file that is no regular file of the vault is not read)."""
    try:
        yield
    except FileNotFoundError as exc:
        raise NotFound(f"no file {path!r} in the vault") from exc
    except OSError as exc:
        raise Unreadable(f"cannot read {path!r}: {exc.strerror}") from exc


def _text(path: str, data: bytes, whole: bool = True) -> str:
    """A file's bytes as text (unless `whole`, only its first bytes: a character they cut in
    two is left out); Unreadable if they are not UTF-8."""
    try:
        return data.decode("utf-8") if whole else getincrementaldecoder("utf-8")().decode(data)
    except UnicodeDecodeError as exc:
        raise Unreadable(f"{path!r} is not UTF-8 text") from exc


def _moment(mtime_ns: int) -> str:
    """An mtime as UTC time of day to the millisecond, to name a change."""
    seconds, nanos = divmod(mtime_ns, 1_000_000_000)
    return time.strftime("%H:%M:%S", time.gmtime(seconds)) + f".{nanos // 1_000_000:03d}Z"


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


def _same_file(a: Path, b: Path) -> bool:
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


def _fsync_folder(folder: Path) -> None:
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
