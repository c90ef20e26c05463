"""The write layer: every change to a memory's file goes through here, with its index entry.

Saving, moving and removing a file and re-indexing it belong together: the services above
(vault, links) decide what to write, this module writes it and keeps the index in step.
Callers hold the vault lock; each file is written atomically (see store.py).
"""

from __future__ import annotations

from . import clock
from .document import Document
from .index import Index
from .model import Memory
from .store import VaultStore


class Writer:
    """Writes memories to the store and indexes what it wrote."""

    def __init__(self, store: VaultStore, index: Index):
        self._store = store
        self._index = index

    def save(self, path: str, doc: Document, body: str, updates: dict[str, object]) -> Memory:
        """Write `body` under the document's frontmatter with `updates` applied, and index it."""
        text, info = self._store.save(path, doc, body, updates)
        return self._index.upsert(path, text, info)

    def touch(self, path: str, doc: Document, body: str) -> Memory:
        """Save a body change, stamping `updated_at` where the file has frontmatter we may edit."""
        stamp = doc.writable and doc.frontmatter is not None
        return self.save(path, doc, body, {"updated_at": clock.now_iso()} if stamp else {})

    def move(
        self, memory: Memory, doc: Document, body: str, fields: dict[str, object], new_path: str
    ) -> Memory:
        """Save a memory's new body and fields, then move its file to `new_path` in one rename;
        the index forgets the old path and learns the new one."""
        self._store.save(memory.path, doc, body, fields)
        self._store.move(memory.path, new_path)
        self._index.remove(memory.path)
        return self._index.upsert(
            new_path, self._store.read_text(new_path), self._store.info(new_path)
        )

    def remove(self, path: str) -> None:
        """Delete a memory's file and its index entry."""
        self._store.remove(path)
        self._index.remove(path)
