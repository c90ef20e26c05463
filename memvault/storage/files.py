"""The vault folder on disk: safe paths, walking, reading memories, atomic writes and the lock."""

from __future__ import annotations

import errno
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from itertools import chain
from pathlib import Path, PurePosixPath

from filelock import FileLock, Timeout

if sys.platform == "linux":
    pass

from memvault.config import STATE_DIR
from memvault.core.ages import Seen
from memvault.core.document import Document, parse_document, render_document
from memvault.core.memory import (
    CONFLICT_COPY,
    Memory,
    conflict_copy,
    content_digest,
    is_memory_path,
    is_vault_readme,
    memory_from,
    own_readme,
    path_problem,
)
from memvault.core.records import FileInfo, Skipped, Snapshot
from memvault.errors import (
    Changed,
    Conflict,
    Invalid,
    MemvaultError,
    ReadOnly,
    Unreadable,
)
from memvault.storage.atomic_writes import (
    TEMP_SUFFIX,
    Undo,
    aside,
    atomic_write,
    fsync_folder,
    prune,
    remove_leftover,
    same_file,
    unchanged,
    write_errors,
)
from memvault.storage.regular_files import kind_problem, open_regular
from memvault.storage.stable_reads import (
    HELD_OPEN_READS,
    PIECE,
    SETTLED_NS,
    STABLE_PAUSE,
    STABLE_TRIES,
    decoded,
    parsed,
    read_bytes,
    read_errors,
    snapshot,
    snapshot_of,
)

LOCK_TIMEOUT = 30.0
# How often a writer waiting for the vault lock tries again. filelock's default (50 ms) is ten
# times a whole write here, so waiting writers slept while the lock was free: 4 servers writing
# at once managed about 125 writes/s with it and about 210/s with 2 ms (1k notes).
LOCK_POLL = 0.002
# Why a symlink to a note of the vault is not indexed: it is that note (never reported).
SAME_NOTE = "a link to a note of the vault"
# Bytes of a top-level README.md read to tell memvault's own from a person's (core/memory.py).
README_HEAD = 512


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

    def holds_vault(self) -> bool:
        """Whether the folder is a vault already: memvault's own folder is in it, or a markdown
        note (the walk stops at the first one found)."""
        if not self.root.is_dir():
            return False
        return self.state_dir.is_dir() or next(self.walk(), None) is not None

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
                    remove_leftover(Path(entry.path))
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                folders += 1
                if (folders - 1) % shares == mine:
                    kept.append((entry, True))
            elif name.lower().endswith(".md") and mine == 0 and (prefix or self.indexable(name)):
                kept.append((entry, False))
        return kept

    def _entry_info(
        self, entry: os.DirEntry[str], rel: str, skipped: list[Skipped] | None
    ) -> FileInfo | None:
        if conflict_copy(rel):
            return _reported(rel, CONFLICT_COPY, skipped)
        if entry.is_symlink():
            return self._info(Path(entry.path), skipped)
        return _reported(rel, _file_info(rel, entry.stat), skipped)

    def stat(self, path: str, skipped: list[Skipped] | None = None) -> FileInfo | None:
        """The file's size and mtime if `path` is a markdown file memvault would index, else None
        (missing, in a dot-folder, not markdown, a symlink out of the vault or to a note of its
        own); why a file there is not indexed goes to `skipped` (a symlink loop, ...)."""
        if not self.indexable(path):
            return None
        if conflict_copy(path):
            return _reported(path, CONFLICT_COPY, skipped)
        try:
            full = self.absolute(path)
        except Invalid as exc:
            if skipped is not None:
                skipped.append(Skipped(path, f"not indexed: {exc}"))
            return None
        if full.is_dir() or not full.exists():
            return None
        return self._info(full, skipped)

    def indexable(self, path: str) -> bool:
        """Whether the file at `path` is one a walk indexes: a memory's path, or a top-level
        README.md that is not memvault's own (its first bytes are read to tell)."""
        if not is_vault_readme(path):
            return is_memory_path(path)
        try:
            fd = open_regular(str(self.root / path), self._inside)
        except OSError:
            return False
        with os.fdopen(fd, "rb") as handle:
            head = handle.read(README_HEAD).decode("utf-8", "replace")
        return not own_readme(head)

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
        return decoded(path, read_bytes(path, full, self._inside)[0])

    def read(self, path: str, seen: Seen | None = None) -> tuple[Memory, Document]:
        """A memory and the parsed document it came from, in one read, dated by what the index
        `seen` of it (core/ages.py). A read only shows it; an edit starts from `read_for_edit`."""
        found = snapshot(path, self.absolute(path), self._inside)[0]
        memory, doc, _read = parsed(path, found, seen)
        return memory, doc

    def read_head(
        self, path: str, limit: int, known: tuple[int, int, str, str | None] | None
    ) -> tuple[Memory, int]:
        """A memory read from the first `limit` bytes of its file, and the file's size: a bigger
        file's body is cut there, so a huge hand-made note is shown without being read whole.
        `known` is what the index recorded of the file (size, mtime_ns, hash, updated_at), which
        dates it (core/ages.py). Its version is still the whole file's: the hash `known` records
        while the file keeps that size and mtime, else the rest hashed in pieces."""
        seen = None if known is None else (known[2], known[3])
        with (
            read_errors(path),
            os.fdopen(open_regular(str(self.absolute(path)), self._inside), "rb") as handle,
        ):
            head = handle.read(limit + 1)
            status = os.fstat(handle.fileno())
            if len(head) <= limit:
                found = snapshot_of(path, head, status.st_mtime_ns)
                return parsed(path, found, seen)[0], len(head)
            if known is not None and known[:2] == (status.st_size, status.st_mtime_ns):
                digest = known[2]
            else:
                digest = content_digest(chain([head], iter(partial(handle.read, PIECE), b"")))
        doc = parse_document(decoded(path, head[:limit], whole=False))
        return memory_from(path, doc, status.st_mtime_ns, digest, seen), status.st_size

    def read_if_readable(self, path: str) -> Memory | None:
        """The memory at `path`, or None when it went or cannot be read since it was indexed:
        for the readers that pass over such a note (the duplicate checks) rather than fail."""
        try:
            return self.read(path)[0]
        except (OSError, MemvaultError):
            return None

    def read_for_edit(
        self, path: str, seen: Seen | None = None
    ) -> tuple[Memory, Document, Snapshot]:
        """A memory (dated as `read` dates it), its document, and the snapshot its write
        compares the file with; never a half-written file (see `snapshot`)."""
        return parsed(path, self.snapshot(path), seen)

    def snapshot(self, path: str) -> Snapshot:
        """The file as it stands, once it is stable (see STABLE_PAUSE), so that an editor's
        write in progress is never the base of an edit."""
        full = self.absolute(path)
        previous: Snapshot | None = None
        agreeing = 0
        for _ in range(STABLE_TRIES):
            current, writing = snapshot(path, full, self._inside, probe=True)
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

    def date(self, path: str, mtime_ns: int) -> FileInfo:
        """Set a file's modification time (an import dates it as its source did: a later
        mtime than the frontmatter's `updated_at` reads as an edit made since)."""
        full = self.absolute(path)
        with write_errors(path):
            os.utime(full, ns=(full.stat().st_atime_ns, mtime_ns))
        return self.info(path)

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
            undo = atomic_write(full, text, lambda: unchanged(path, full, self._inside, base))
        old_text = base.text if base is not None and undo.kept is None else None
        return replace(undo, root=self.root, old_text=old_text)

    def move(self, old: str, new: str) -> Undo:
        """Rename a file within the vault in one step, creating the target folder."""
        source, target = self.absolute(old), self.absolute(new)
        with write_errors(new):
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists() and not same_file(source, target):
                raise Conflict(f"cannot move {old!r}: {new!r} already exists")
            os.rename(source, target)
            fsync_folder(target.parent)
        self._prune(source.parent)
        return Undo(full=source, moved_to=target)

    def remove(self, path: str) -> Undo:
        """Delete a file (kept aside until the change is final), and its folder if that
        leaves the folder empty."""
        full = self.absolute(path)
        with write_errors(path):
            kept = aside(full)
            os.rename(full, kept)
            fsync_folder(full.parent)
        self._prune(full.parent)
        return Undo(full=full, kept=kept, root=self.root)

    def _prune(self, folder: Path) -> None:
        prune(self.root, folder)


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
