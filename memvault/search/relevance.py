"""A search hit's relevance (0..1, comparable across queries) and the order `prefer_recent` gives.

Relevance says how much of the question a memory answers, in every search mode:

- by words (every mode): the share of the query's words it holds (each word, "phrase",
  OR-group or CJK pair counts once; filler words are left out as the search leaves them out),
  so 1.0 means every word, 0.5 half of them, whatever the vault's size or the words' rarity
  (bm25, which ranks the hits, is neither: it is relative to the vault and to the query);
- by meaning (semantic and hybrid modes): the higher of that share and the cosine similarity of
  the query to the memory's closest chunk, below 0 taken as 0 (with the default model, about
  0.5 and up is on topic).

The relevance never reorders a search: hits stay in their ranking's order.
"""

from __future__ import annotations

from memvault.core.records import SearchHit

# Two neighbouring hits are near-tied when the lower one's score is within this share of the
# best score of their run (see prefer_recent) and they have the same relevance.
NEAR_TIE = 0.1


def relevance(held: int, wanted: int, similarity: float = 0.0) -> float:
    """A hit's relevance from the query's word groups it holds (of `wanted`) and its cosine
    `similarity` to the query (0 when the meaning side did not find it)."""
    words = held / wanted if wanted else 0.0
    return round(min(1.0, max(words, similarity, 0.0)), 4)


def prefer_recent(hits: list[SearchHit]) -> list[SearchHit]:
    """The hits with near-ties broken toward newer memories, and nothing else moved.

    The hits, best first, are cut into runs: a run starts at a hit and takes in each next hit
    whose score is at least (1 - NEAR_TIE) times the run's first score, with the same relevance
    as it. Within a run the most recently updated come first (ties keep their order); runs keep
    their order. So a hit scoring more than NEAR_TIE of the run's best above another is never
    put below it, and an older memory that answers clearly better stays ahead of newer ones.
    """
    ordered: list[SearchHit] = []
    run: list[SearchHit] = []
    for hit in hits:
        if run and not _near(run[0], hit):
            ordered += _newest_first(run)
            run = []
        run.append(hit)
    return ordered + _newest_first(run)


def _near(best: SearchHit, hit: SearchHit) -> bool:
    """Whether `hit` is near-tied with the first hit of its run."""
    margin = NEAR_TIE * abs(best.score)
    return hit.relevance == best.relevance and hit.score >= best.score - margin


def _newest_first(run: list[SearchHit]) -> list[SearchHit]:
    return sorted(run, key=lambda hit: hit.updated_at or "", reverse=True)
