"""One ranking from two: full-text (bm25) and semantic (cosine) results fused.

Each side's scores are scaled by that query's own spread (distribution-based score fusion, as
Qdrant names it: the mean plus and minus three standard deviations maps to 0..1), and the
scaled scores are summed, each side weighed by how far the other side backs its first hits
(`backing`). A side whose first notes the other side also ranks high is likely right; one whose
first notes the other side does not rank at all is likely matching the wrong thing: a page
that holds the question's common words ("library", "install") but not its meaning, or a note
near in meaning that never names the person asked about. No weight is fitted to a corpus:
both follow from this one query's two lists. Measured with `make bench-quality` on chat logs
(bm25 strong, embeddings weak) and on documentation asked in paraphrase (the other way
round); see the README.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean, pstdev

Ranked = Sequence[tuple[int, float]]

SPREAD = 3.0
# A side's first hits, whose backing by the other side weighs that side: the first page of
# results a question is judged by.
FIRST = 5
# How deep in the other side's list a note still backs: a note at rank r (from 0) of it counts
# 1 - r / DEPTH. The candidate lists' usual length (vault.CANDIDATES), fixed so that a deeper
# list for a later page weighs the sides as the first page did.
DEPTH = 50


def fuse(keyword: Ranked, semantic: Ranked) -> list[tuple[int, float]]:
    """(note, fused score) best first, from each side's (note, score) best first; a note on
    one side only gets that side's part. Ties keep the keyword side's order."""
    fused: dict[int, float] = {}
    for side, other in ((keyword, semantic), (semantic, keyword)):
        weight = backing(side, other)
        for note, scaled in _scaled(side):
            fused[note] = fused.get(note, 0.0) + weight * scaled
    order = {note: rank for rank, (note, _) in enumerate([*keyword, *semantic])}
    return sorted(fused.items(), key=lambda item: (-item[1], order[item[0]]))


def backing(side: Ranked, other: Ranked) -> float:
    """How far `other` backs the FIRST notes of `side`, in 1/(FIRST + 1)..1: each counts
    1 - its rank in `other` / DEPTH (0 when `other` does not rank it that high), plus one
    unbacked count, so that one lucky or unlucky note does not silence a side (add-one
    smoothing of an estimate from five notes)."""
    rank = {note: position for position, (note, _) in enumerate(other[:DEPTH])}
    backed = sum(1 - rank[note] / DEPTH for note, _ in side[:FIRST] if note in rank)
    return (1 + backed) / (FIRST + 1)


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
