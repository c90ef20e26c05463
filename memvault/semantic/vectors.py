"""The chunk vectors of one model in memory, searched by brute force.

One int8 matrix holds a row per chunk (each row scaled by its largest value, kept beside it),
and a parallel array names each row's note. A question is one matrix-vector product, and a
note's score is its best chunk's. The product's cost is reading the matrix: int8 is a quarter
of float32 (109 MB for 100k generated notes' 283k chunks, not 436), and numkong's int8 kernels
ran that product in 5 ms where numpy's float32 one took 18, with cosines within 0.003 of
float32's. A filter that lets few notes through has only their rows multiplied. Rows are
appended; a note that changes or goes leaves its old rows as holes (note -1), and the matrix
is compacted when holes pass a quarter of it, so a write never copies the whole matrix. Each
note's first chunk is also kept in a table of its own, for the duplicate guard (`within`).
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numkong
import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]
    Quantised = npt.NDArray[np.int8]

_HOLE = -1
# Spare rows kept past the last one (a share of the rows): the matrix grows by this much, and a
# server's start loads it with this room, so a note embedded later seldom copies the matrix.
ROOM = 1 / 8
# A filter letting through more than this share of the rows gets the full product (one pass
# over the matrix), fewer get only their rows gathered and multiplied, a block at a time (so a
# block is multiplied while it is in the cache). Measured at 570k int8 rows (100k generated
# notes), a random tenth of the notes: 0.4 of the full product's time, a fifth 0.6-0.8, a
# quarter 0.7-1.0, 0.3 0.8-1.0, 0.35 1.0-1.2 (at 283k rows the crossing was at a fifth).
GATHER_SHARE = 0.25
GATHER_BLOCK = 4096
# `within`'s product over at least this many first chunks is cut in two, the halves multiplied
# at once on two cores (numkong lets go of the GIL): reading the matrix is its cost, and a
# writer waits for it alone. 100k first chunks (38 MB), out of the cache as after the model's
# run: 3.7 ms on one core, 2.4 on two (p50 in a short write at 100k notes: 4.1 against 3.6).
SPLIT_ROWS = 1 << 15
# A note's score as a whole (`nearest`): its best chunk's cosine, a SECOND_SHARE of the way to
# its second best chunk's, less LENGTH_COST per natural log of its number of chunks. Scored by
# its best chunk alone, a long note wins by having many chances: on the quality sets (issue
# 36) wrong hits in semantic search's first five rose 1.9 times from notes of 3-5 chunks to
# notes of 12-14, right ones 1.6 times. Replayed from every chunk's cosine (recall@5 / MRR of
# semantic search, best chunk -> this score): LoCoMo 0.758 / 0.621 -> 0.767 / 0.630, npm's
# docs 0.758 / 0.578 -> 0.823 / 0.627, man pages 0.920 / 0.700 -> 0.920 / 0.713; shares of
# 0.1-0.35 and costs of 0.01-0.03 all lifted every set.
SECOND_SHARE = 0.25
LENGTH_COST = 0.02
# The largest int8 value: a row's largest magnitude becomes this.
_STEPS = 127


@dataclass(frozen=True)
class Near:
    """A note close to a query: its best chunk's cosine, which chunk that is, and the note's
    score as a whole, which ranks it (`note_score`; the best cosine when not given)."""

    note: int
    score: float
    chunk: int
    note_score: float | None = None

    @property
    def rank(self) -> float:
        """What orders the notes: the note's score as a whole."""
        return self.score if self.note_score is None else self.note_score


class VectorTable:
    """Chunk vectors by note; safe to search from many threads while one thread writes."""

    def __init__(self, dimensions: int, split: bool = False, firsts: bool = True) -> None:
        """`split`: a second core may multiply half of a big `within` product (SPLIT_ROWS)."""
        self._lock = threading.Lock()
        # Each note's first chunk again (`within` reads only those), unless this is that table,
        # which serves `within` only and so weighs no row for `related`.
        self._firsts = VectorTable(dimensions, split, firsts=False) if firsts else None
        # The thread that multiplies the first half of `within`'s product (that table's only).
        self._halves = ThreadPoolExecutor(1, "memvault-within") if split and not firsts else None
        self._matrix = np.zeros((0, dimensions), dtype=np.int8)
        self._scales = np.zeros(0, dtype=np.float32)
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
            quantised, scales = quantise(vectors)
            self._matrix[start : start + len(vectors)] = quantised
            self._scales[start : start + len(vectors)] = scales
            self._notes[start : start + len(vectors)] = note
            self._seqs[start : start + len(vectors)] = np.arange(len(vectors))
            if self._firsts is not None:
                weight = _mean_weight(_restored(quantised, scales))
                self._weights[start : start + len(vectors)] = weight
            self._size += len(vectors)
            self._rows[note] = list(range(start, self._size))
        if self._firsts is not None:
            self._firsts.put(note, vectors[:1])

    def load(self, notes: npt.NDArray[np.int64], matrix: Quantised, scales: Vectors) -> None:
        """Every note's chunk vectors at once (a server's start), replacing what the table
        held: `notes` names the note of each of the matrix's first rows, a note's rows
        together and in chunk order, as `quantise` made them; the matrix's other rows are room
        for later notes."""
        size = len(notes)
        starts = np.flatnonzero(np.diff(notes, prepend=_HOLE - 1))
        counts = np.diff(starts, append=size)
        seqs = np.zeros(len(matrix), dtype=np.int32)
        seqs[:size] = np.arange(size) - np.repeat(starts, counts)
        weights = np.zeros(len(matrix), dtype=np.float32)
        if self._firsts is not None:
            filled = matrix[:size], scales[:size], seqs[:size]
            weights[:size] = _mean_weights(*filled, starts, counts)
        rows = {
            int(notes[start]): list(range(start, start + count))
            for start, count in zip(starts.tolist(), counts.tolist(), strict=True)
        }
        padded = np.full(len(matrix), _HOLE, dtype=np.int64)
        padded[:size] = notes
        with self._lock:
            self._matrix, self._scales, self._notes = matrix, scales, padded
            self._seqs, self._weights = seqs, weights
            self._rows, self._size, self._holes = rows, size, 0
        if self._firsts is not None:
            self._firsts.load(notes[starts], matrix[starts], scales[starts])

    def remove(self, note: int) -> None:
        """Forget a note's vectors (it was deleted or changed)."""
        with self._lock:
            self._drop(note)
            if self._holes > max(self._size // 4, 1024):
                self._compact()
        if self._firsts is not None:
            self._firsts.remove(note)

    def nearest(
        self,
        query: Vectors,
        limit: int,
        among: Collection[int] | None = None,
        leaving_out: Collection[int] = (),
    ) -> list[Near]:
        """The `limit` notes closest to `query` as a whole (their note score, best first: see
        SECOND_SHARE), only notes in `among` when it is given, never those in `leaving_out`.
        A note's score is at most its best chunk's cosine, so the notes are scored among the
        best by their best chunk, as many more as it takes for none left out to rank higher."""
        matrix, scales, notes, seqs = self._view()
        if not len(matrix) or limit <= 0:
            return []
        rows = _admitted(notes, among, leaving_out)
        scores = _product(matrix, scales, rows, query)
        taken = 2 * limit + 16
        wanted = max(taken * 8, 64)
        while True:
            best = _best_notes(rows, scores, notes, seqs, taken, wanted)
            if len(best) < taken and wanted < len(rows):
                wanted *= 4  # the best rows belong to fewer notes: look at more rows
                continue
            ranked = _as_wholes(best, rows, scores, notes)[:limit]
            if len(best) < taken or best[-1].score <= ranked[-1].rank:
                return ranked  # every note, or none left out can rank higher
            taken *= 4
            wanted = max(wanted, taken * 8)

    def within(self, query: Vectors, at_least: float) -> list[Near]:
        """Every note whose first chunk (its title in front) is at least `at_least` close to
        `query` (cosine), best first, however many: one product over the first chunks, kept in
        a table of their own (100k generated notes have 570k chunks: 2 ms against 12)."""
        table = self if self._firsts is None else self._firsts
        matrix, scales, notes, seqs = table._view()
        rows = _admitted(notes, None, ())
        scores = _product(matrix, scales, rows, query, table._halves)
        close = scores >= at_least
        count = len(np.unique(notes[rows[close]]))
        return _best_notes(rows, scores, notes, seqs, count, int(close.sum())) if count else []

    def _view(self) -> tuple[Quantised, Vectors, npt.NDArray[np.int64], npt.NDArray[np.int32]]:
        """The filled rows of the matrix, with each row's scale, note and chunk number."""
        with self._lock:
            size = self._size
            return self._matrix[:size], self._scales[:size], self._notes[:size], self._seqs[:size]

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
            mean = _restored(self._matrix[own], self._scales[own]).mean(axis=0)
            matrix, scales = self._matrix[:size], self._scales[:size]
            notes, weights = self._notes[:size], self._weights[:size]
        if limit <= 0:
            return []
        query = mean / max(float(np.linalg.norm(mean)), 1e-12)
        rows = _admitted(notes, among, [*leaving_out, note])
        if not len(rows):
            return []
        scores = np.bincount(
            notes[rows], weights=_product(matrix, scales, rows, query) * weights[rows]
        )
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
        capacity = max(size, len(self._notes) + int(len(self._notes) * ROOM), 1024)
        matrix = np.zeros((capacity, self._matrix.shape[1]), dtype=np.int8)
        scales = np.zeros(capacity, dtype=np.float32)
        notes = np.full(capacity, _HOLE, dtype=np.int64)
        seqs = np.zeros(capacity, dtype=np.int32)
        weights = np.zeros(capacity, dtype=np.float32)
        matrix[: self._size] = self._matrix[: self._size]
        scales[: self._size] = self._scales[: self._size]
        notes[: self._size] = self._notes[: self._size]
        seqs[: self._size] = self._seqs[: self._size]
        weights[: self._size] = self._weights[: self._size]
        self._matrix, self._scales, self._notes = matrix, scales, notes
        self._seqs, self._weights = seqs, weights

    def _compact(self) -> None:
        live = np.flatnonzero(self._notes[: self._size] != _HOLE)
        self._matrix = np.ascontiguousarray(self._matrix[live])
        self._scales = self._scales[live].copy()
        self._notes = self._notes[live].copy()
        self._seqs = self._seqs[live].copy()
        self._weights = self._weights[live].copy()
        self._size, self._holes = len(live), 0
        self._rows = {}
        for row, note in enumerate(self._notes.tolist()):
            self._rows.setdefault(note, []).append(row)


def _admitted(
    notes: npt.NDArray[np.int64], among: Collection[int] | None, leaving_out: Collection[int]
) -> npt.NDArray[np.intp]:
    """The rows of the notes a filter lets through (only `among` when given, never
    `leaving_out`), holes left out: one lookup in a table of note ids, not a sort."""
    keep = notes != _HOLE
    top = int(notes.max(initial=0))
    for chosen, wanted in ((among, True), (leaving_out or None, False)):
        if chosen is None:
            continue
        ids = _array(chosen)
        flags = np.full(top + 1, not wanted)
        flags[ids[(ids >= 0) & (ids <= top)]] = wanted
        keep &= flags[np.maximum(notes, 0)]
    return np.flatnonzero(keep)


def quantise(vectors: Vectors) -> tuple[Quantised, Vectors]:
    """Rows as int8, each divided by its own scale (its largest magnitude over 127, returned
    beside them): a row times its scale is the row again, to within half a step."""
    scales = np.maximum(np.abs(vectors).max(axis=1, initial=0.0), 1e-12) / _STEPS
    return np.rint(vectors / scales[:, None]).astype(np.int8), scales.astype(np.float32)


def _restored(matrix: Quantised, scales: Vectors) -> Vectors:
    """Quantised rows as float32 again."""
    restored: Vectors = matrix.astype(np.float32) * scales[:, None]
    return restored


def _product(
    matrix: Quantised,
    scales: Vectors,
    rows: npt.NDArray[np.intp],
    query: Vectors,
    halves: ThreadPoolExecutor | None = None,
) -> Vectors:
    """The cosines of `rows` with `query`, in the order of `rows`: only those rows multiplied
    when they are few, else the whole matrix (reading it once costs less than gathering most
    of it; in two halves at once when `halves` lends a thread). The query is quantised as the
    rows are, and the int8 products scaled back."""
    if not len(rows):
        return np.zeros(0, dtype=np.float32)
    asked, step = quantise(query[None, :])
    if len(rows) > GATHER_SHARE * len(matrix):
        return (_dots(matrix, asked, halves) * scales * step)[rows]
    scores = np.empty(len(rows), dtype=np.float32)
    for start in range(0, len(rows), GATHER_BLOCK):
        block = rows[start : start + GATHER_BLOCK]
        scores[start : start + GATHER_BLOCK] = (
            _dots(np.take(matrix, block, axis=0), asked) * scales[block]
        )
    return scores * step


def _dots(matrix: Quantised, asked: Quantised, halves: ThreadPoolExecutor | None = None) -> Vectors:
    """Each row's int8 dot product with the one row of `asked`, exact, as float32; a matrix of
    SPLIT_ROWS or more in two halves at once when `halves` lends a thread for the first."""
    if halves is not None and len(matrix) >= SPLIT_ROWS:
        middle = len(matrix) // 2
        first = halves.submit(_dots, matrix[:middle], asked)
        rest = _dots(matrix[middle:], asked)
        return np.concatenate([first.result(), rest])
    dots = numkong.cdist(asked, matrix, metric="dot", out_dtype="float32")
    return np.asarray(dots, dtype=np.float32).reshape(-1)


def _as_wholes(
    best: list[Near],
    rows: npt.NDArray[np.intp],
    scores: Vectors,
    notes: npt.NDArray[np.int64],
) -> list[Near]:
    """`best` (found by their best chunk) with their note scores, best first: each note's
    second best chunk and its number of chunks read from all its rows, in one pass."""
    if not best:
        return []
    wanted = np.array([near.note for near in best], dtype=np.int64)
    of_rows = notes[rows]
    flags = np.zeros(int(max(of_rows.max(initial=0), wanted.max())) + 1, dtype=bool)
    flags[wanted] = True
    mine = np.flatnonzero(flags[of_rows])
    owners, cosines = of_rows[mine], scores[mine]
    order = np.lexsort((-cosines, owners))
    owners, cosines = owners[order], cosines[order]
    starts = np.flatnonzero(np.diff(owners, prepend=-2))
    counts = np.diff(starts, append=len(owners))
    seconds = np.where(
        counts > 1, cosines[np.minimum(starts + 1, len(cosines) - 1)], cosines[starts]
    )
    whole = (
        (1 - SECOND_SHARE) * cosines[starts] + SECOND_SHARE * seconds - LENGTH_COST * np.log(counts)
    )
    by_note = dict(zip(owners[starts].tolist(), whole.tolist(), strict=True))
    scored = [Near(n.note, n.score, n.chunk, by_note[n.note]) for n in best]
    return sorted(scored, key=lambda near: -near.rank)


def _best_notes(
    rows: npt.NDArray[np.intp],
    scores: Vectors,
    notes: npt.NDArray[np.int64],
    seqs: npt.NDArray[np.int32],
    limit: int,
    wanted: int,
) -> list[Near]:
    """The best `limit` distinct notes among the `wanted` best rows (fewer when those rows
    belong to fewer notes; `scores` are the rows' own): the `wanted`-th best score found by a
    partial sort of the scores alone (half the time of a partial sort of their positions),
    then only the rows at least that good sorted."""
    order = np.arange(len(rows))
    if wanted < len(rows):
        cut = len(scores) - wanted
        order = np.flatnonzero(scores >= np.partition(scores, cut)[cut])
    best: dict[int, Near] = {}
    for at in order[np.argsort(-scores[order], kind="stable")]:
        note = int(notes[rows[at]])
        if note not in best:
            best[note] = Near(note, float(scores[at]), int(seqs[rows[at]]))
            if len(best) == limit:
                break
    return list(best.values())


def _mean_weights(
    matrix: Quantised,
    scales: Vectors,
    seqs: npt.NDArray[np.int32],
    starts: npt.NDArray[np.intp],
    counts: npt.NDArray[np.intp],
) -> Vectors:
    """`_mean_weight` of every note at once, for each of its rows (a note's rows together, at
    `starts`): a block of notes at a time, their sums made chunk position by chunk position
    (a loop over notes cost 0.8 s at 100k notes; numpy's reduceat over rows, more)."""
    weights = np.zeros(len(matrix), dtype=np.float32)
    for first in range(0, len(starts), 8192):
        part, lengths = starts[first : first + 8192], counts[first : first + 8192]
        low, high = int(part[0]), int(part[-1] + lengths[-1])
        owner = np.repeat(np.arange(len(part)), lengths)
        position = seqs[low:high]
        order = np.argsort(position, kind="stable")
        bounds = np.searchsorted(position[order], np.arange(int(position.max()) + 2))
        sums = np.zeros((len(part), matrix.shape[1]), dtype=np.float32)
        block = _restored(matrix[low:high], scales[low:high])
        for seq in range(len(bounds) - 1):
            chosen = order[bounds[seq] : bounds[seq + 1]]
            sums[owner[chosen]] += block[chosen]
        norms = np.maximum(np.linalg.norm(sums / lengths[:, None], axis=1), 1e-12)
        weights[low:high] = np.repeat(1.0 / lengths / norms, lengths)
    return weights


def _mean_weight(vectors: Vectors) -> float:
    """What each of a note's rows weighs in `related`: a row's product with a query, times
    this, summed over the note, is the cosine of the note's mean vector with the query."""
    return 1.0 / len(vectors) / max(float(np.linalg.norm(vectors.mean(axis=0))), 1e-12)


def _array(notes: Collection[int]) -> npt.NDArray[np.int64]:
    return np.fromiter(notes, dtype=np.int64, count=len(notes))
