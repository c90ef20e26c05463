"""Near-duplicate memories: pairs whose texts are mostly the same, for a person to merge.

Each of the most recently updated notes asks the full-text index for the notes holding its
longest words, and only those candidates are compared (similarity.content_similarity), so a
vault of 10k notes costs a few thousand small queries, not fifty million comparisons.
"""

from __future__ import annotations

from memvault.core.reports import DuplicatePair
from memvault.index.database import Index
from memvault.index.search_sql import ARCHIVED
from memvault.search import similarity
from memvault.storage.files import VaultStore

# Two texts at least this alike (0..1) are shown as a pair; writes refuse NEAR_IDENTICAL.
NEAR_DUPLICATE = 0.7
# The most recently updated notes looked at, and the candidates each one asks for.
SCANNED = 2000
CANDIDATES = 5
WORDS = 6


def near_duplicates(index: Index, store: VaultStore, limit: int) -> list[DuplicatePair]:
    """Up to `limit` pairs of live (not archived) notes whose texts are near duplicates, most
    alike first; each pair once."""
    rows = index.pool.query(
        f"SELECT path FROM notes WHERE NOT {ARCHIVED} ORDER BY updated_at DESC LIMIT ?",
        (SCANNED,),
    )
    bodies: dict[str, str] = {}
    pairs: dict[tuple[str, str], DuplicatePair] = {}
    for (path,) in rows:
        body = _body(store, bodies, path)
        words = similarity.longest_words(body, WORDS)
        for other in index.names.with_all_words(words, CANDIDATES, similarity.largest_alike(body)):
            key = (min(path, other), max(path, other))
            if other == path or key in pairs:
                continue
            score = similarity.content_similarity(body, _body(store, bodies, other))
            if score >= NEAR_DUPLICATE:
                pairs[key] = DuplicatePair(key[0], key[1], round(score, 2))
    return sorted(pairs.values(), key=lambda p: (-p.score, p.first, p.second))[:limit]


def _body(store: VaultStore, seen: dict[str, str], path: str) -> str:
    """A note's body, read once per pass ('' when it went or cannot be read meanwhile)."""
    if path not in seen:
        memory = store.read_if_readable(path)
        seen[path] = "" if memory is None else memory.body
    return seen[path]
