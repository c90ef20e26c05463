"""One ranking from two: full-text (bm25) and semantic (cosine) results fused.

Distribution-based score fusion (as Qdrant names it): each side's scores are scaled by that
query's own spread (the mean plus and minus three standard deviations maps to 0..1) and the
scaled scores are summed. No weight is fitted to a corpus, and the scaling follows how the
scores of this one query fall: a side whose best hit stands far above its others lifts it a
long way, a flat side moves little. Measured with `make bench-quality`, it held on both kinds
of vault where a fixed blend did not: chat logs (where bm25 is strong and embeddings weak) and
documentation asked in paraphrase (the other way round); see the README.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean, pstdev

Ranked = Sequence[tuple[int, float]]

SPREAD = 3.0


def fuse(keyword: Ranked, semantic: Ranked) -> list[tuple[int, float]]:
    """(note, fused score) best first, from each side's (note, score) best first; a note on
    one side only gets that side's part. Ties keep the keyword side's order."""
    fused: dict[int, float] = {}
    for side in (keyword, semantic):
        for note, scaled in _scaled(side):
            fused[note] = fused.get(note, 0.0) + scaled
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
