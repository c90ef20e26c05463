"""Chunk maps and vectors in the index: what semantic search keeps between runs.

A note's chunks are stored by the hash of its file's content (`chunk_maps`), a chunk's vector
by the hash of its text and the model (`embeddings`). Both are kept through rebuilds and follow
content, not paths: a rename, a `memvault reindex` or a copied vault finds its vectors again,
and only text no model run has seen is embedded. Vectors are float16 (half the size of float32,
and the cosine changes in the fourth decimal).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import groupby

import numpy as np

from .index import Index


@dataclass(frozen=True)
class ChunkRow:
    """One chunk of a note: its place in the note, its text's hash and its span of the body."""

    seq: int
    hash: bytes
    start: int
    end: int


class VectorStore:
    """The semantic tables of one index."""

    def __init__(self, index: Index, model: str) -> None:
        self._index = index
        self.model = model

    def notes(self) -> dict[int, str]:
        """Every note's rowid and content hash: what the vectors in memory must follow."""
        return {int(r[0]): str(r[1]) for r in self._index.query("SELECT rowid, hash FROM notes")}

    def note_path(self, rowid: int) -> tuple[str, str] | None:
        """The path and content hash of a note, None once it is gone."""
        rows = self._index.query("SELECT path, hash FROM notes WHERE rowid = ?", [rowid])
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    def chunks(self, note_hash: str) -> list[ChunkRow]:
        """The chunks recorded for this content, in order; empty when it was never chunked."""
        rows = self._index.query(
            "SELECT seq, chunk_hash, start, end FROM chunk_maps WHERE note_hash = ? ORDER BY seq",
            [note_hash],
        )
        return [ChunkRow(int(r[0]), bytes(r[1]), int(r[2]), int(r[3])) for r in rows]

    def vectors(self, hashes: Iterable[bytes]) -> dict[bytes, np.ndarray]:
        """The vectors this model made of these chunk texts (those it has made)."""
        wanted = list(dict.fromkeys(hashes))
        found: dict[bytes, np.ndarray] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ", ".join("?" for _ in part)
            for row in self._index.query(
                f"SELECT hash, vector FROM embeddings WHERE model = ? AND hash IN ({marks})",
                [self.model, *part],
            ):
                found[bytes(row[0])] = _decode(row[1])
        return found

    def save(
        self, note_hash: str, chunks: list[ChunkRow], vectors: dict[bytes, np.ndarray]
    ) -> None:
        """Record a content's chunks and new vectors, in one transaction."""
        with self._index.transaction() as db:
            db.execute("DELETE FROM chunk_maps WHERE note_hash = ?", (note_hash,))
            db.executemany(
                "INSERT INTO chunk_maps (note_hash, seq, chunk_hash, start, end)"
                " VALUES (?, ?, ?, ?, ?)",
                [(note_hash, c.seq, c.hash, c.start, c.end) for c in chunks],
            )
            db.executemany(
                "INSERT OR REPLACE INTO embeddings (model, hash, vector) VALUES (?, ?, ?)",
                [(self.model, h, v.astype(np.float16).tobytes()) for h, v in vectors.items()],
            )

    def every_vector(self) -> Iterator[tuple[int, str, np.ndarray]]:
        """(rowid, content hash, its chunk vectors in order) of every note whose chunks all
        have this model's vectors: what a server loads at start."""
        rows = self._index.query(
            "SELECT n.rowid, n.hash, e.vector FROM notes n"
            " JOIN chunk_maps c ON c.note_hash = n.hash"
            " LEFT JOIN embeddings e ON e.model = ? AND e.hash = c.chunk_hash"
            " ORDER BY n.rowid, c.seq",
            [self.model],
        )
        for (rowid, note_hash), group in groupby(rows, key=lambda r: (int(r[0]), str(r[1]))):
            blobs = [r[2] for r in group]
            if all(blob is not None for blob in blobs):
                yield rowid, note_hash, np.stack([_decode(blob) for blob in blobs])


def _decode(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float16).astype(np.float32)
