"""The write layer: every change to a memory's file goes through here, with its index entry.

Saving, moving and removing a file and re-indexing it belong together: the services above
(vault, links) decide what to write, this module writes it and keeps the index in step.
Callers hold the vault lock; each file is written atomically, and only over the file the
caller read (see storage/files.py). A change that spans files is all or nothing (`all_or_nothing`),
and every file it writes frontmatter to records who made it (`updated_by`), when a caller did.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from memvault.core import clock
from memvault.core.document import Document
from memvault.core.memory import Memory
from memvault.core.records import Snapshot
from memvault.errors import Changed, Conflict, Unwritable
from memvault.index.database import Index
from memvault.storage.atomic_writes import Undo
from memvault.storage.files import VaultStore

log = logging.getLogger(__name__)

T = TypeVar("T")
# How often a read-change-write is tried again when the file changes under it.
TRIES = 20


@dataclass(frozen=True)
class Rewrite:
    """A memory as read (its document and the snapshot the write compares with) and what to
    write instead: a new body and changed frontmatter fields."""

    memory: Memory
    doc: Document
    base: Snapshot
    body: str
    fields: dict[str, object]


class Writer:
    """Writes memories to the store and indexes what it wrote."""

    def __init__(self, store: VaultStore, index: Index):
        self._store = store
        self._index = index
        self._undo: list[tuple[str, Undo]] | None = None
        self._agent: str | None = None

    @contextmanager
    def all_or_nothing(self, agent: str | None = None) -> Iterator[None]:
        """Make the writes inside one change: if any fails (a full disk, a conflict), every
        file written so far is put back as it was and re-indexed. An interrupt is left as a
        crash would leave it (the rename journal finishes the change), but the copies kept
        aside are dropped. Each file whose frontmatter the change writes records `agent` as
        its `updated_by` (None, for upkeep: left as it was)."""
        self._undo, self._agent = [], agent
        try:
            yield
        except sqlite3.OperationalError as exc:
            self._roll_back()
            if "full" in str(exc):
                raise Unwritable("disk full: cannot update the index; nothing was changed") from exc
            raise
        except Exception:
            self._roll_back()
            raise
        finally:
            for _path, undo in self._undo:
                undo.discard()
            self._undo, self._agent = None, None

    def _roll_back(self) -> None:
        """Put back every file changed in this change, last first, and index them again."""
        undone = self._undo or []
        for path, undo in reversed(undone):
            try:
                undo.undo()
            except OSError as exc:
                log.error("could not put %s back after a failed write: %s", path, exc)
        for path in dict.fromkeys(path for path, _ in undone):
            try:
                self._reindex(path)
            except (OSError, sqlite3.Error) as exc:
                log.error("could not re-index %s after a failed write: %s", path, exc)

    def _reindex(self, path: str) -> None:
        """Index a file put back, unless the index still has it as it is (its own transaction
        was rolled back): on a full disk, the less written the better."""
        info = self._store.stat(path)
        state = self._index.entries.file_state(path)
        if info is None:
            if state is not None:
                self._index.entries.remove(path)
        elif state is None or state[:2] != (info.size, info.mtime_ns):
            self._index.entries.upsert(path, self._store.read_text(path), info)

    def _did(self, path: str, undo: Undo) -> None:
        """Record how to undo a file change (or make it final at once, outside a change)."""
        if self._undo is None:
            undo.discard()
        else:
            self._undo.append((path, undo))

    def save(
        self, path: str, doc: Document, body: str, updates: dict[str, object], base: Snapshot | None
    ) -> Memory:
        """Write `body` under the document's frontmatter with `updates` applied over the file
        `base` describes (None: a new file), and index it; the appends memvault acknowledged
        that this change takes out are no longer looked for (`check`: lost appends)."""
        text, info, undo = self._store.save(path, doc, body, self._stamped(updates), base)
        self._did(path, undo)
        memory = self._index.entries.upsert(path, text, info)
        self._index.appends.forget_taken_out(memory.id, doc.body, body)
        return memory

    def date(self, path: str, stamp: str) -> Memory:
        """Give the file of the memory at `path` the modification time `stamp` (its
        `updated_at`, kept from an import's source) and index it so."""
        moment = clock.parse(stamp)
        if moment is None:
            raise ValueError(f"{stamp!r} is no time")
        info = self._store.date(path, int(moment.timestamp()) * 1_000_000_000)
        return self._index.entries.upsert(path, self._store.read_text(path), info)

    def _stamped(self, updates: dict[str, object]) -> dict[str, object]:
        """The frontmatter updates with the change's agent as `updated_by`, when the write
        changes frontmatter at all (a note without any keeps none) and a caller is known."""
        return {**updates, "updated_by": self._agent} if updates and self._agent else updates

    def touch(self, path: str, doc: Document, body: str, base: Snapshot) -> Memory:
        """Save a body change, stamping `updated_at` where the file has frontmatter we may edit."""
        stamp = doc.writable and doc.frontmatter is not None
        return self.save(path, doc, body, {"updated_at": clock.now_iso()} if stamp else {}, base)

    def edit_body(self, path: str, change: Callable[[Memory], str]) -> tuple[Memory, bool]:
        """Read a memory, change its body with `change` and save it (stamped), again while the
        file changes under it; the memory and whether it changed."""

        def attempt() -> tuple[Memory, bool]:
            """One read, change and write."""
            memory, doc, base = self._store.read_for_edit(path)
            body = change(memory)
            if body == memory.body:
                return memory, False
            return self.touch(path, doc, body, base), True

        return retrying(path, attempt)

    def move(self, change: Rewrite, new_path: str) -> Memory:
        """Save a memory's new body and fields, then move its file to `new_path` in one rename;
        the index forgets the old path and learns the new one."""
        old = change.memory.path
        _text, _info, undo = self._store.save(
            old, change.doc, change.body, self._stamped(change.fields), change.base
        )
        self._did(old, undo)
        self._did(new_path, self._store.move(old, new_path))
        self._index.entries.remove(old)
        memory = self._index.entries.upsert(
            new_path, self._store.read_text(new_path), self._store.info(new_path)
        )
        self._index.appends.forget_taken_out(memory.id, change.memory.body, change.body)
        return memory

    def remove(self, path: str) -> None:
        """Delete a memory's file and its index entry."""
        self._did(path, self._store.remove(path))
        self._index.entries.remove(path)


def retrying(path: str, attempt: Callable[[], T]) -> T:
    """Run a read-change-write `attempt` again while the file it read changes before its write
    (compare before replace); a Conflict once it kept changing TRIES times."""
    for _ in range(TRIES - 1):
        try:
            return attempt()
        except Changed as exc:
            log.info("%s; reading it again", exc)
    try:
        return attempt()
    except Changed as exc:
        raise Conflict(f"{exc} (it kept changing; memvault tried {TRIES} times)") from exc
