"""The vault folder on disk: safe paths, walking, reading memories, atomic writes and the lock."""

from __future__ import annotations

import errno
import logging
import os
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path, PurePosixPath

from filelock import FileLock, Timeout

from .config import STATE_DIR
from .document import Document, parse_document, render_document
from .errors import Conflict, Invalid, NotFound, ReadOnly, Unreadable
from .model import Memory, is_memory_path, memory_from, path_problem
from .records import FileInfo, Skipped

log = logging.getLogger(__name__)

LOCK_TIMEOUT = 30.0
# How often a writer waiting for the vault lock tries again. filelock's default (50 ms) is ten
# times a whole write here, so waiting writers slept while the lock was free: 4 servers writing
# at once managed about 125 writes/s with it and about 210/s with 2 ms (1k notes).
LOCK_POLL = 0.002
TEMP_SUFFIX = ".memvault-tmp"
LEFTOVER_AGE = 60.0
# Why a symlink to a note of the vault is not indexed: it is that note (never reported).
SAME_NOTE = "a link to a note of the vault"


class VaultStore:
    """Reads and writes the markdown files of one vault; never follows a path out of it."""

    def __init__(self, root: Path):
        self.root = Path(root).expanduser().absolute()
        self._real_root = self.root.resolve()
        self._lock = FileLock(str(self.state_dir / "lock"), timeout=LOCK_TIMEOUT)

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
            elif name.lower().endswith(".md") and mine == 0:
                kept.append((entry, False))
        return kept

    def _entry_info(
        self, entry: os.DirEntry[str], rel: str, skipped: list[Skipped] | None
    ) -> FileInfo | None:
        if entry.is_symlink():
            return self._info(Path(entry.path), skipped)
        try:
            stat = entry.stat()
        except OSError as exc:
            if skipped is not None:
                skipped.append(Skipped(rel, f"not indexed: {exc.strerror}"))
            return None
        return FileInfo(rel, stat.st_size, stat.st_mtime_ns)

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
        if not full.is_file():
            return None
        return self._info(full, skipped)

    def _info(self, full: Path, skipped: list[Skipped] | None) -> FileInfo | None:
        rel = full.relative_to(self.root).as_posix()
        reason = self._link_problem(full) if full.is_symlink() else None
        if reason is None:
            try:
                stat = full.stat()
            except OSError as exc:
                reason = exc.strerror or str(exc)
            else:
                return FileInfo(rel, stat.st_size, stat.st_mtime_ns)
        if skipped is not None and reason != SAME_NOTE:
            skipped.append(Skipped(rel, f"not indexed: {reason}"))
        return None

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
        try:
            data = full.read_bytes()
        except FileNotFoundError as exc:
            raise NotFound(f"no file {path!r} in the vault") from exc
        except OSError as exc:
            raise Unreadable(f"cannot read {path!r}: {exc.strerror}") from exc
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Unreadable(f"{path!r} is not UTF-8 text") from exc

    def read(self, path: str) -> tuple[Memory, Document]:
        """A memory and the parsed document it came from (kept for byte-exact rewrites)."""
        doc = parse_document(self.read_text(path))
        return memory_from(path, doc, self.info(path).mtime_ns), doc

    def info(self, path: str) -> FileInfo:
        """Size and modification time of a file, as a walk would report them."""
        stat = self.absolute(path).stat()
        return FileInfo(path, stat.st_size, stat.st_mtime_ns)

    def save(
        self, path: str, doc: Document, body: str, updates: dict[str, object]
    ) -> tuple[str, FileInfo]:
        """Write `body` under the document's frontmatter with `updates` applied; return the text.

        Files without frontmatter, or with broken YAML, keep their head byte for byte when
        there are no updates.
        """
        text = render_document(replace(doc, body=body), updates)
        self.write(path, text)
        return text, self.info(path)

    def write(self, path: str, text: str) -> None:
        """Write a file atomically: temp file in the same folder, fsync, then rename over."""
        full = self.absolute(path)
        full.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(full, text)

    def move(self, old: str, new: str) -> None:
        """Rename a file within the vault in one step, creating the target folder."""
        source, target = self.absolute(old), self.absolute(new)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() and not _same_file(source, target):
            raise Conflict(f"cannot move {old!r}: {new!r} already exists")
        os.rename(source, target)
        _fsync_folder(target.parent)
        self._prune(source.parent)

    def remove(self, path: str) -> None:
        """Delete a file, and its folder if that leaves the folder empty."""
        full = self.absolute(path)
        full.unlink(missing_ok=True)
        _fsync_folder(full.parent)
        self._prune(full.parent)

    def _prune(self, folder: Path) -> None:
        while folder != self.root and self.root in folder.parents:
            try:
                folder.rmdir()
            except OSError:
                return
            folder = folder.parent


def _remove_leftover(temp: Path) -> None:
    try:
        if time.time() - temp.stat().st_mtime > LEFTOVER_AGE:
            temp.unlink()
            log.info("removed %s, left by an interrupted write", temp)
    except OSError:
        pass


def atomic_write(full: Path, text: str) -> None:
    temp = full.parent / f".{full.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
    try:
        with open(temp, "xb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, full)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_folder(full.parent)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _fsync_folder(folder: Path) -> None:
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
