"""Vectors and chunk maps no note uses any more, dropped: the index keeps them by content
(semantic/vector_store.py), so each edit of a note leaves its old content's chunk map behind,
and the vectors of the chunks it changed. Plain SQL: `memvault reindex` prunes without the semantic
extra (numpy) installed. A server prunes on a schedule (`PruneSchedule`), after its embedding."""

from __future__ import annotations

import sqlite3
import time

from memvault.index.database import Index
from memvault.semantic.chunks import RECIPE
from memvault.semantic.model import default_fingerprint, retired

# A prune that frees more chunks than this looks up every vector's text rather than the
# freed ones (and stays under SQLite's limit of parameters).
PRUNE_NAMED = 500
# How often a server drops the vectors and chunk maps no note uses any more (notes edited or
# deleted since), after embedding what changed: at most this often, the first time this long
# after its start (not while a session's first requests come in).
PRUNE_SECONDS = 3600.0
PRUNE_FIRST_SECONDS = 600.0


def prune(index: Index, thorough: bool) -> int:
    """Drop what no note uses any more, in one transaction, and say how many vectors went: the
    chunk maps of content no note has now (a note edited, deleted) or cut by an older recipe
    (chunks.RECIPE), and the vectors of the chunks only those maps named; and every vector and
    map of a copy of the default model an older version made, by another recipe or from the
    weights of another release of its package (`model.retired`: at 100k notes about 440 MB
    no search reads). `thorough` also drops every other vector no chunk map
    names (left by a kept-state migration, or by a version that never pruned): a lookup of
    every vector's text among the maps' (0.5 s in all at 570k chunks), for `memvault
    reindex`. Vectors of another model stay while a current note's map names them: a switch
    back to it embeds nothing again."""
    suffix = f"/{RECIPE}"
    installed = default_fingerprint()
    with index.pool.transaction() as db:
        gone = 0
        for model in [m for m in _models(db) if retired(m, installed)]:
            db.execute("DELETE FROM chunk_maps WHERE chunker = ?", (f"{model}{suffix}",))
            gone += db.execute("DELETE FROM embeddings WHERE model = ?", (model,)).rowcount
        # `chunker > ''` walks the maps in their key's order, a note's together, rather than
        # in the order of the texts they name (the index chunk_maps_chunk): 0.33 s against 0.58
        # at 570k maps.
        freed = {
            bytes(row[0])
            for row in db.execute(
                "DELETE FROM chunk_maps WHERE chunker > '' AND (substr(chunker, -?) <> ?"
                " OR note_hash NOT IN (SELECT hash FROM notes)) RETURNING chunk_hash",
                (len(suffix), suffix),
            )
        }
        unused = "hash NOT IN (SELECT chunk_hash FROM chunk_maps)"
        if thorough or len(freed) > PRUNE_NAMED:
            return gone + db.execute(f"DELETE FROM embeddings WHERE {unused}").rowcount
        if freed:
            marks = ", ".join("?" for _ in freed)
            gone += db.execute(
                f"DELETE FROM embeddings WHERE hash IN ({marks}) AND {unused}", list(freed)
            ).rowcount
        return gone


class PruneSchedule:
    """When a server prunes (not thorough): PRUNE_FIRST_SECONDS after it starts, then
    PRUNE_SECONDS after the last prune."""

    def __init__(self, index: Index) -> None:
        self._index = index
        self._next = time.monotonic() + PRUNE_FIRST_SECONDS

    def prune_if_due(self) -> int:
        """`prune` once it is due; how many vectors went (none when it was not due)."""
        if time.monotonic() < self._next:
            return 0
        self._next = time.monotonic() + PRUNE_SECONDS
        return prune(self._index, thorough=False)


def _models(db: sqlite3.Connection) -> list[str]:
    """The models the vectors were made by: one seek of the table's key a model, not a read of
    every vector."""
    models: list[str] = []
    while row := db.execute(
        "SELECT model FROM embeddings WHERE model > ? ORDER BY model LIMIT 1",
        (models[-1] if models else "",),
    ).fetchone():
        models.append(row[0])
    return models
