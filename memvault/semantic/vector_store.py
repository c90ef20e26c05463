"""Chunk maps and vectors in the index: what semantic search keeps between runs.

A note's chunks are stored by the hash of its file's content and how it was cut (`chunk_maps`:
the chunker names the model, whose word-pieces a chunk's budget counts, and chunks.RECIPE), a
chunk's vector by the hash of its text and the model (`embeddings`). Both are kept through
rebuilds and follow content, not paths: a rename, a `memvault reindex` or a copied vault finds
its vectors again, and only text no model run has seen is embedded. Vectors are float16 (half
the size of float32, and the cosine changes in the fourth decimal); a server holds them as int8
(semantic/vectors.py).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from memvault.index.database import Index
from memvault.semantic.vectors import quantise

if TYPE_CHECKING:
    import numpy.typing as npt


@dataclass(frozen=True)
class ChunkRow:
    """One chunk of a note: its place in the note, its text's hash and its span of the body."""

    seq: int
    hash: bytes
    start: int
    end: int


@dataclass(frozen=True)
class StoredVectors:
    """Every complete note's chunk vectors: `notes` names each row's note (a note's rows
    together, in chunk order), `hashes` each note's content hash, and `matrix` holds the rows,
    quantised with their `scales` (vectors.quantise), first and spare rows after them."""

    notes: npt.NDArray[np.int64]
    hashes: dict[int, str]
    matrix: npt.NDArray[np.int8]
    scales: npt.NDArray[np.float32]


class VectorStore:
    """The semantic tables of one index."""

    def __init__(self, index: Index, model: str, chunker: str) -> None:
        self._index = index
        self.model = model
        self.chunker = chunker

    def notes(self, only: Collection[int] | None = None) -> dict[int, str]:
        """Every note's rowid and content hash (or those of the notes `only` names that are
        still there): what the vectors in memory must follow."""
        if only is None:
            rows = self._index.pool.query("SELECT rowid, hash FROM notes")
        else:
            rows = self._index.pool.query(
                "SELECT rowid, hash FROM notes WHERE rowid IN (SELECT value FROM json_each(?))",
                [json.dumps(sorted(only))],
            )
        return {int(r[0]): str(r[1]) for r in rows}

    def embedded(self) -> dict[int, str]:
        """Every note whose chunks all have this model's vectors, with its content hash: what
        `memvault embed` and its count need to know. A note's chunk map is saved with its
        vectors, in one transaction (`save`), so a note with a first chunk under this chunker
        is embedded: found without the vectors' table (joining it, a read of 450 MB at 100k
        notes, ran past the index's 10 s limit)."""
        rows = self._index.pool.query(
            "SELECT n.rowid, n.hash FROM notes n"
            " CROSS JOIN chunk_maps c ON c.chunker = ? AND c.note_hash = n.hash AND c.seq = 0",
            [self.chunker],
        )
        return {int(r[0]): str(r[1]) for r in rows}

    def note_path(self, rowid: int) -> tuple[str, str] | None:
        """The path and content hash of a note, None once it is gone."""
        rows = self._index.pool.query("SELECT path, hash FROM notes WHERE rowid = ?", [rowid])
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    def chunks(self, note_hash: str) -> list[ChunkRow]:
        """The chunks recorded for this content, in order; empty when it was never chunked."""
        rows = self._index.pool.query(
            "SELECT seq, chunk_hash, start, end FROM chunk_maps"
            " WHERE chunker = ? AND note_hash = ? ORDER BY seq",
            [self.chunker, note_hash],
        )
        return [ChunkRow(int(r[0]), bytes(r[1]), int(r[2]), int(r[3])) for r in rows]

    def vectors(self, hashes: Iterable[bytes]) -> dict[bytes, np.ndarray]:
        """The vectors this model made of these chunk texts (those it has made)."""
        wanted = list(dict.fromkeys(hashes))
        found: dict[bytes, np.ndarray] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ", ".join("?" for _ in part)
            for row in self._index.pool.query(
                f"SELECT hash, vector FROM embeddings WHERE model = ? AND hash IN ({marks})",
                [self.model, *part],
            ):
                found[bytes(row[0])] = _decode(row[1])
        return found

    def save(
        self, note_hash: str, chunks: list[ChunkRow], vectors: dict[bytes, np.ndarray]
    ) -> None:
        """Record a content's chunks and their vectors, in one transaction: those found in the
        index too, which a prune (semantic/prune.py) since they were read may have dropped
        (written again only if missing), so no chunk map is ever left without its vectors."""
        with self._index.pool.transaction() as db:
            db.execute(
                "DELETE FROM chunk_maps WHERE chunker = ? AND note_hash = ?",
                (self.chunker, note_hash),
            )
            db.executemany(
                "INSERT INTO chunk_maps (chunker, note_hash, seq, chunk_hash, start, end)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [(self.chunker, note_hash, c.seq, c.hash, c.start, c.end) for c in chunks],
            )
            db.executemany(
                "INSERT OR IGNORE INTO embeddings (model, hash, vector) VALUES (?, ?, ?)",
                [(self.model, h, v.astype(np.float16).tobytes()) for h, v in vectors.items()],
            )

    def every_vector(self, dimensions: int, room: float) -> StoredVectors:
        """Every note whose chunks all have this model's vectors, as a server loads them: one
        read of the tables, each batch of blobs joined, decoded and quantised at once into a
        matrix with `room` (a share of its rows) to spare for the notes embedded later."""
        join = " FROM notes n CROSS JOIN chunk_maps c ON c.chunker = ? AND c.note_hash = n.hash"
        total = int(self._index.pool.query(f"SELECT count(*){join}", [self.chunker])[0][0])
        matrix = np.zeros((total + int(total * room) + 1, dimensions), dtype=np.int8)
        scales = np.zeros(len(matrix), dtype=np.float32)
        notes: list[int] = []
        hashes: dict[int, str] = {}
        incomplete: set[int] = set()
        for batch in self._index.pool.stream(
            f"SELECT n.rowid, n.hash, e.vector{join}"
            " LEFT JOIN embeddings e ON e.model = ? AND e.hash = c.chunk_hash"
            " ORDER BY n.rowid, c.seq",
            [self.chunker, self.model],
        ):
            present = [row for row in batch if row[2] is not None]
            incomplete.update(row[0] for row in batch if row[2] is None)
            if len(notes) + len(present) > len(matrix):  # notes embedded since the count
                matrix = np.resize(matrix, (2 * (len(notes) + len(present)), dimensions))
                scales = np.resize(scales, len(matrix))
            blobs = b"".join(row[2] for row in present)
            block = np.frombuffer(blobs, dtype=np.float16).reshape(-1, dimensions)
            at = slice(len(notes), len(notes) + len(block))
            matrix[at], scales[at] = quantise(block.astype(np.float32))
            notes += [row[0] for row in present]
            hashes.update((row[0], row[1]) for row in present)
        rows = np.array(notes, dtype=np.int64)
        if incomplete:
            keep = np.flatnonzero(~np.isin(rows, list(incomplete)))
            matrix[: len(keep)], scales[: len(keep)] = matrix[keep], scales[keep]
            rows = rows[keep]
            hashes = {note: hashes[note] for note in hashes if note not in incomplete}
        return StoredVectors(rows, hashes, matrix, scales)


def as_stored(vectors: np.ndarray) -> np.ndarray:
    """Vectors as the index keeps and gives them back (float16): what a process holds in
    memory is then what a restart loads, and ranks alike."""
    return vectors.astype(np.float16).astype(np.float32)


def _decode(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float16).astype(np.float32)
