"""The chunk vectors a process holds in memory, which its searches by meaning read.

They are loaded from the index once, in one read (a server loads them in its background thread
while full-text search answers), then kept in step as notes are embedded, changed or deleted,
with the content hash each note's vectors follow. numpy is imported at their first need: a
command that never searches by meaning does not pay for it.
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from functools import cached_property
from typing import TYPE_CHECKING

from memvault import workers
from memvault.index.database import Index
from memvault.semantic.model import Model, Unavailable

if TYPE_CHECKING:
    import numpy as np

    from memvault.semantic.vector_store import VectorStore
    from memvault.semantic.vectors import VectorTable


class LoadedVectors:
    """One model's vectors of a vault's notes in memory, and the content each note's follow."""

    def __init__(self, index: Index, model: Model) -> None:
        self._index = index
        self._model = model
        self._lock = threading.Lock()
        self._known: dict[int, str] = {}
        self._table: VectorTable | None = None

    @cached_property
    def store(self) -> VectorStore:
        """The index's tables of chunks and vectors for this model: where the vectors are
        loaded from and saved to."""
        from memvault.semantic.vector_store import VectorStore

        spec = self._model.spec
        if spec is None:
            raise Unavailable(self._model.reason)
        return VectorStore(self._index, spec.key, spec.chunker)

    @property
    def loaded(self) -> bool:
        """Whether the vectors are in memory (`table` has loaded them)."""
        return self._table is not None

    def table(self) -> VectorTable:
        """The vectors the index holds, loaded once, in one read of the index; Unavailable
        when the model is off or will not run."""
        if self._model.spec is None:
            raise Unavailable(self._model.reason)
        with self._lock:
            if self._table is None:
                from memvault.semantic.vectors import ROOM, VectorTable

                embedder, store = self._model.embedder, self.store
                table = VectorTable(embedder.dimensions, split=workers.parallelism() > 1)
                stored = store.every_vector(embedder.dimensions, ROOM)
                table.load(stored.notes, stored.matrix, stored.scales)
                self._known.update(stored.hashes)
                self._table = table
            return self._table

    def embedded(self) -> int:
        """How many notes have vectors: those held in memory once loaded, else counted in the
        index."""
        return len(self._table) if self._table is not None else len(self.store.embedded())

    def follow_index(self) -> None:
        """Take the notes the index holds embedded as those whose vectors are known, for a
        process that embeds without loading the vectors (`memvault embed`: 436 MB at 100k
        notes)."""
        with self._lock:
            self._known = self.store.embedded()

    def stale(self, notes: dict[int, str], looked: Collection[int] | None) -> dict[int, str]:
        """The notes among `notes` (rowid: content hash) whose vectors are missing or follow
        other content. The notes among `looked` (None: every note known) that are not in
        `notes` are gone from the index: they are forgotten first, their rows dropped."""
        with self._lock:
            looked = set(self._known) if looked is None else looked
            for rowid in [r for r in looked if r in self._known and r not in notes]:
                if self._table is not None:
                    self._table.remove(rowid)
                del self._known[rowid]
            return {r: h for r, h in notes.items() if self._known.get(r) != h}

    def put(self, rowid: int, note_hash: str, vectors: list[np.ndarray]) -> None:
        """A note's chunk vectors, in chunk order, into the vectors in memory (when they are
        loaded), and its content hash into what those vectors follow."""
        import numpy as np

        with self._lock:
            if self._table is not None:
                self._table.put(rowid, np.stack(vectors))
            self._known[rowid] = note_hash
