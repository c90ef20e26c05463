"""One ranking from two: full-text (bm25) and semantic (cosine) results fused.

Each side's scores are scaled by that query's own spread (distribution-based score fusion, as Qdrant
names it: the mean plus and minus three standard deviations maps to 0..1), and the scaled scores are
summed, the full-text side's weighed by the share of the question's words its best hit holds
(`held`, as a hit's relevance counts them: search/relevance.py). A question asked in the vault's own
words (a chat question naming people and things) is mostly held by the note that answers it, and
full-text counts in full; one asked in other words (how do I ... of a documentation page) shares a
word or two with many notes, and a full-text ranking built on two of seven words gives way to
meaning. No weight is fitted to a corpus: it follows from this one query. Measured with `make
bench-quality` on chat logs (bm25 strong, embeddings weak) and on two sets of documentation asked in
paraphrase (the other way round); see docs/search.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean, pstdev

Ranked = Sequence[tuple[int, float]]

SPREAD = 3.0


def fuse(keyword: Ranked, semantic: Ranked, held: float = 1.0) -> list[tuple[int, float]]:
    """(note, fused score) best first, from each side's (note, score) best first; a note on
    one side only gets that side's part. `held` (0..1) is the share of the query's words the
    keyword side's first note holds, and that side's weight. Ties keep the keyword side's
    order."""
    fused: dict[int, float] = {}
    for weight, side in ((held, keyword), (1.0, semantic)):
        for note, scaled in _scaled(side):
            fused[note] = fused.get(note, 0.0) + weight * scaled
    order = {note: rank for rank, (note, _) in enumerate([*keyword, *semantic])}
    return sorted(fused.items(), key=lambda item: (-item[1], order[item[0]]))


def _scaled(side: Ranked) -> list[tuple[int, float]]:
    """Scores mapped from mean - 3 sd .. mean + 3 sd onto 0..1. A single hit, or hits with
    equal scores, map to 1: each is that side's best (a rare word that only one note holds
    must not sink below the other side's middling hits)."""
    if not side:
        return []
    scores = [score for _, score in side]
    mean, spread = fmean(scores), pstdev(scores) * SPREAD
    if spread == 0:
        return [(note, 1.0) for note, _ in side]
    return [(note, (score - mean + spread) / (2 * spread)) for note, score in side]
