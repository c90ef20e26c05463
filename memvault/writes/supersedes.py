"""Superseded knowledge: the `supersedes` / `superseded_by` property links between a memory and
the one that replaced it, kept both ways as links are. They are set together, follow a rename
of either memory, and go with a delete (the memory a deleted one replaced surfaces again).

It only decides what to write: files are written by the write layer (writes/writer.py), and callers
hold the vault lock, as for LinkService.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from memvault.core import clock
from memvault.core.document import Document
from memvault.core.memory import Memory, string_list
from memvault.core.properties import SUCCESSION, link_target, property_link, relinked
from memvault.core.records import Succession
from memvault.errors import Invalid
from memvault.index.database import Index
from memvault.storage.files import VaultStore
from memvault.writes.writer import Writer, retrying

log = logging.getLogger(__name__)

# A change to a note's frontmatter, from its metadata: the keys to set (none: leave it alone).
Change = Callable[[dict[str, Any]], dict[str, Any]]


class SuccessionService:
    """Marks memories superseded and keeps the links between them true."""

    def __init__(self, store: VaultStore, index: Index, writer: Writer):
        self._store = store
        self._index = index
        self._writer = writer

    def mark(self, old: str, new: Memory) -> None:
        """Mark the memory at `old` as replaced by `new` (which links back with `supersedes`):
        it leaves searches and the briefing, and stays readable."""
        link = property_link(new.path)
        self._edit(old, lambda _metadata: {"superseded_by": link}, named=True)

    def of(self, memory: Memory) -> Succession:
        """The memories this one replaced and the one that replaced it, each link as written
        with the memory it names now (None when it names none, or several)."""
        supersedes, superseded_by = (self._named(memory, key) for key in SUCCESSION)
        return Succession(supersedes, superseded_by)

    def _named(self, memory: Memory, key: str) -> list[tuple[str, Memory | None]]:
        found: list[tuple[str, Memory | None]] = []
        for raw in string_list(memory.metadata.get(key)):
            target = link_target(raw)
            paths = self._index.names.resolve(target) if target else []
            found.append((raw, self._store.read(paths[0])[0] if len(paths) == 1 else None))
        return found

    def follow_move(self, old_path: str, new_path: str) -> None:
        """After a rename, point the succession links to the memory at its new file name."""
        before, after = property_link(old_path), property_link(new_path)
        if before != after:
            self._relink(before, after)

    def forget(self, path: str) -> None:
        """Before a delete, take the links to the memory at `path` out of the memories that
        hold them: one it had superseded is no longer superseded."""
        self._relink(property_link(path), None)

    def _relink(self, before: str, after: str | None) -> None:
        """Replace (or, for None, remove) the succession link `before` wherever it is held."""
        for path, key in self._index.names.holding(SUCCESSION, before):
            self._edit(path, partial(relinked, key=key, before=before, after=after))

    def _edit(self, path: str, change: Change, named: bool = False) -> None:
        """Apply a frontmatter change to the note at `path`, stamped (the writer records the
        change's agent), again while the file changes under it. A note whose frontmatter
        cannot be parsed is refused when a caller `named` it, else left alone with a warning."""

        def attempt() -> None:
            """One read, change and write."""
            memory, doc, base = self._store.read_for_edit(path)
            if not doc.writable:
                if not named:
                    log.warning("%s: succession link not updated (%s)", path, doc.error)
                    return
                raise Invalid(doc.refusal(path))
            fields = change(memory.metadata)
            if not fields:
                return
            fields = {**_identity(memory, doc), **fields, "updated_at": clock.now_iso()}
            self._writer.save(path, doc, memory.body, fields, base)

        retrying(path, attempt)


def _identity(memory: Memory, doc: Document) -> dict[str, Any]:
    """The id (and, for a note without frontmatter, the title) a write puts into a file that
    lacks them, so the memory keeps its identity through a later rename."""
    if not memory.has_frontmatter:
        return {"id": memory.id, "title": memory.title}
    if memory.metadata.get("id") in (None, ""):
        return {"id": memory.id}
    return {}
