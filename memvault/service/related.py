"""Memories related to one (`similar_mem`), and a new memory's reworded twin (the duplicate
guard): by meaning when the vault's notes have vectors, else by the memory's key words."""

from __future__ import annotations

from concurrent.futures import Future
from typing import TYPE_CHECKING

from memvault.core.memory import Memory
from memvault.core.records import Filter, Related, SearchHit
from memvault.index.database import Index
from memvault.index.searching import Match
from memvault.search.similarity import key_words
from memvault.semantic.engine import Semantic
from memvault.semantic.model import Unavailable

if TYPE_CHECKING:
    from memvault.semantic.vectors import Near

# A new memory whose first chunk is at least this close (cosine) to an existing note's first
# chunk says the same thing in other words: measured on benchmarks/quality/duplicates.json
# (benchmarks/duplicates.py), between the paraphrased pairs and the merely related ones. Like is
# compared with like, each title in front of its text: a long note one paragraph of which says
# what a short memory says holds more than that memory, and the short one may stand alone.
SAME_MEANING = 0.75
# The guard compares by meaning only memories this short (title and text, in words): a short
# gotcha reworded slips past the comparison of texts, and a short embedding costs 4-12 ms
# (15-50 words) where a full chunk costs 25 ms on the write's path.
SHORT_WORDS = 60


def similar(index: Index, semantic: Semantic, memory: Memory, limit: int, where: Filter) -> Related:
    """The memories under `where` most like `memory`, never itself: by meaning when it has
    vectors (the cosine of the notes' mean chunk vectors), else by a search of its key words."""
    rowid = index.names.rowid(memory.path)
    if rowid is not None and semantic.has_vectors():
        among, leaving_out = index.search.admitted(where)
        try:
            near = semantic.related(rowid, limit, among, leaving_out)
        except Unavailable:  # the model will not run: by words, as without vectors
            near = None
        if near is not None:
            matches = [Match(n.note, -n.score, "", n.score) for n in near]
            return Related(memory.id, "meaning", index.search.hits(matches, ""))
    query = " ".join(key_words(memory.title, memory.body))
    page = index.search.page(query, limit + 1, 0, where)
    return Related(memory.id, "words", [h for h in page.results if h.id != memory.id][:limit])


def twins_soon(semantic: Semantic, title: str, content: str) -> Future[list[Near]]:
    """Every note whose first chunk a new short memory's is SAME_MEANING close to, nearest
    first, found in a thread (`Semantic.within_soon`); none for a memory over SHORT_WORDS words,
    or when the vault has no vectors (the model is off or nothing is embedded). A write waits
    for them before it takes the vault lock, so neither the model's run nor the product over
    the first chunks holds up other writers."""
    if len(f"{title} {content}".split()) > SHORT_WORDS or not semantic.has_vectors():
        none: Future[list[Near]] = Future()
        none.set_result([])
        return none
    return semantic.within_soon(title, content, SAME_MEANING)


def reworded(index: Index, twins: list[Near]) -> list[SearchHit]:
    """The notes `twins` found, as hits (relevance: the cosine), those still indexed."""
    return index.search.hits([Match(n.note, -n.score, "", n.score) for n in twins], "")
