"""The chunk vectors of one model in memory, searched by brute force with numpy.

One float32 matrix holds a row per chunk, and a parallel array names each row's note. A
question is one matrix-vector product (about 7 ms over 100k rows on 2 cores), and a note's
score is its best chunk's. Rows are appended; a note that changes or goes leaves its old rows
as holes (note -1), and the matrix is compacted when holes pass a quarter of it, so a write
never copies the whole matrix.
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

_HOLE = -1


@dataclass(frozen=True)
class Near:
    """A note close to a query: its best chunk's cosine, and which chunk that is."""

    note: int
    score: float
    chunk: int


class VectorTable:
    """Chunk vectors by note; safe to search from many threads while one thread writes."""

    def __init__(self, dimensions: int) -> None:
        self._lock = threading.Lock()
        self._matrix = np.zeros((0, dimensions), dtype=np.float32)
        self._notes = np.zeros(0, dtype=np.int64)
        self._seqs = np.zeros(0, dtype=np.int32)
        self._weights = np.zeros(0, dtype=np.float32)
        self._rows: dict[int, list[int]] = {}
        self._size = 0
        self._holes = 0

    def __len__(self) -> int:
        """How many notes have vectors."""
        return len(self._rows)

    def put(self, note: int, vectors: Vectors) -> None:
        """A note's chunk vectors, replacing any it had."""
        with self._lock:
            self._drop(note)
            start = self._size
            self._reserve(start + len(vectors))
            self._matrix[start : start + len(vectors)] = vectors
            self._notes[start : start + len(vectors)] = note
            self._seqs[start : start + len(vectors)] = np.arange(len(vectors))
            self._weights[start : start + len(vectors)] = _mean_weight(vectors)
            self._size += len(vectors)
            self._rows[note] = list(range(start, self._size))

    def remove(self, note: int) -> None:
        """Forget a note's vectors (it was deleted or changed)."""
        with self._lock:
            self._drop(note)
            if self._holes > max(self._size // 4, 1024):
                self._compact()

    def nearest(
        self,
        query: Vectors,
        limit: int,
        among: Collection[int] | None = None,
        leaving_out: Collection[int] = (),
    ) -> list[Near]:
        """The `limit` notes whose best chunk is closest to `query` (cosine, best first), only
        notes in `among` when it is given, never those in `leaving_out`."""
        with self._lock:
            size = self._size
            matrix, notes, seqs = self._matrix[:size], self._notes[:size], self._seqs[:size]
        if not size or limit <= 0:
            return []
        scores = matrix @ query
        keep = notes != _HOLE
        if among is not None:
            keep &= np.isin(notes, _array(among))
        if leaving_out:
            keep &= ~np.isin(notes, _array(leaving_out))
        rows = np.flatnonzero(keep)
        wanted = max(limit * 8, 64)
        while True:
            best = _best_notes(rows, scores, notes, seqs, limit, wanted)
            if len(best) == limit or wanted >= len(rows):
                return best
            wanted *= 4

    def related(
        self, note: int, limit: int, among: Collection[int] | None, leaving_out: Collection[int]
    ) -> list[Near] | None:
        """The `limit` notes whose mean chunk vector is closest to this note's (cosine, best
        first; `chunk` is 0), never the note itself; None when the note has no vectors. A
        note's score is the sum of its rows' products with the query times their weights
        (1 / chunks / norm of the mean), so no mean matrix is kept."""
        with self._lock:
            size = self._size
            own = self._rows.get(note)
            if own is None:
                return None
            mean = self._matrix[own].mean(axis=0)
            matrix, notes, weights = self._matrix[:size], self._notes[:size], self._weights[:size]
        if limit <= 0:
            return []
        query = mean / max(float(np.linalg.norm(mean)), 1e-12)
        keep = (notes != _HOLE) & (notes != note)
        if among is not None:
            keep &= np.isin(notes, _array(among))
        if leaving_out:
            keep &= ~np.isin(notes, _array(leaving_out))
        rows = np.flatnonzero(keep)
        if not len(rows):
            return []
        scores = np.bincount(notes[rows], weights=(matrix @ query)[rows] * weights[rows])
        present = np.unique(notes[rows])
        best = present[np.argsort(-scores[present], kind="stable")[:limit]]
        return [Near(int(n), float(scores[n]), 0) for n in best]

    def _drop(self, note: int) -> None:
        for row in self._rows.pop(note, ()):
            self._notes[row] = _HOLE
            self._holes += 1

    def _reserve(self, size: int) -> None:
        if size <= len(self._notes):
            return
        capacity = max(size, 2 * len(self._notes), 1024)
        matrix = np.zeros((capacity, self._matrix.shape[1]), dtype=np.float32)
        notes = np.full(capacity, _HOLE, dtype=np.int64)
        seqs = np.zeros(capacity, dtype=np.int32)
        weights = np.zeros(capacity, dtype=np.float32)
        matrix[: self._size] = self._matrix[: self._size]
        notes[: self._size] = self._notes[: self._size]
        seqs[: self._size] = self._seqs[: self._size]
        weights[: self._size] = self._weights[: self._size]
        self._matrix, self._notes, self._seqs, self._weights = matrix, notes, seqs, weights

    def _compact(self) -> None:
        live = np.flatnonzero(self._notes[: self._size] != _HOLE)
        self._matrix = np.ascontiguousarray(self._matrix[live])
        self._notes = self._notes[live].copy()
        self._seqs = self._seqs[live].copy()
        self._weights = self._weights[live].copy()
        self._size, self._holes = len(live), 0
        self._rows = {}
        for row, note in enumerate(self._notes.tolist()):
            self._rows.setdefault(note, []).append(row)


def _best_notes(
    rows: npt.NDArray[np.intp],
    scores: Vectors,
    notes: npt.NDArray[np.int64],
    seqs: npt.NDArray[np.int32],
    limit: int,
    wanted: int,
) -> list[Near]:
    """The best `limit` distinct notes among the `wanted` best rows (fewer when those rows
    belong to fewer notes): a partial sort, not a sort of every row."""
    if wanted < len(rows):
        rows = rows[np.argpartition(-scores[rows], wanted - 1)[:wanted]]
    best: dict[int, Near] = {}
    for row in rows[np.argsort(-scores[rows], kind="stable")]:
        note = int(notes[row])
        if note not in best:
            best[note] = Near(note, float(scores[row]), int(seqs[row]))
            if len(best) == limit:
                break
    return list(best.values())


def _mean_weight(vectors: Vectors) -> float:
    """What each of a note's rows weighs in `related`: a row's product with a query, times
    this, summed over the note, is the cosine of the note's mean vector with the query."""
    return 1.0 / len(vectors) / max(float(np.linalg.norm(vectors.mean(axis=0))), 1e-12)


def _array(notes: Collection[int]) -> npt.NDArray[np.int64]:
    return np.fromiter(notes, dtype=np.int64, count=len(notes))
