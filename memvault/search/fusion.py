"""One ranking from two: full-text (bm25) and semantic (cosine) results fused.

Each side's scores are scaled by that query's own spread (distribution-based score fusion, as Qdrant
names it: the mean plus and minus three standard deviations maps to 0..1), and the scaled scores are
summed, the full-text side's weighed by the share of the question's words its best hit holds
(`held`, as a hit's relevance counts them: search/relevance.py). A question asked in the vault's own
words (a chat question naming people and things) is mostly held by the note that answers it, and
full-text counts in full; one asked in other words (how do I ... of a documentation page) shares a
word or two with many notes, and a full-text ranking built on two of seven words gives way to
meaning. Meaning's weight grows with how much surer it is of its first note than full-text is of
its own (`SURER`): each side's lead, its first note's score over its second's in that side's
standard deviations, full-text's times `held`. No weight is fitted to a corpus: both follow from
this one query. Measured with `make bench-quality` on chat logs (bm25 strong, embeddings weak) and
on sets of documentation asked in paraphrase (the other way round); see docs/search.md.

Then each side's most confident hit keeps a place on the first page's top (`KEPT`: the words'
best note and meaning's stay within the first five), in the fused order: where one side
alone holds the answer it is mostly its first, and a sum of the two sides must not push that
below the notes both sides find middling.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

Ranked = Sequence[tuple[int, float]]

SPREAD = 3.0
# How many of each side's first notes stay within the first TOP of the fused order (words,
# meaning). Measured on the three quality sets with notes scored as a whole (2026-11-28;
# hybrid recall@5 / MRR with none kept -> each side's first kept): LoCoMo 0.863 / 0.796 ->
# 0.868 / 0.797, npm's docs 0.855 / 0.614 (unchanged), man pages 0.907 / 0.713 -> 0.920 /
# 0.713; keeping meaning's first two cost npm's docs 0.016 and the man pages 0.013.
KEPT = (1, 1)
TOP = 5
# Meaning's weight: 1 + SURER x (its lead - full-text's lead x held), when positive. Measured
# on the five quality sets (2026-11-28, hybrid MRR with 0 -> 0.2): npm's docs 0.625 -> 0.635
# (semantic alone 0.627), decisions 0.950 -> 0.955, man pages 0.7134 -> 0.7137 (0.7135), LoCoMo
# 0.796 -> 0.795 and recall@5 0.868 -> 0.867, multilingual unchanged; from 0.15 to 0.25 each
# set stays at or above its better side.
SURER = 0.2


def fuse(keyword: Ranked, semantic: Ranked, held: float = 1.0) -> list[tuple[int, float]]:
    """(note, fused score) best first, from each side's (note, score) best first; a note on
    one side only gets that side's part. `held` (0..1) is the share of the query's words the
    keyword side's first note holds, and that side's weight. Ties keep the keyword side's
    order."""
    words, meaning = _Side.of(keyword), _Side.of(semantic)
    surer = max(0.0, meaning.lead() - held * words.lead())
    fused: dict[int, float] = {}
    for weight, side in ((held, words), (1.0 + SURER * surer, meaning)):
        for note, scaled in side.scaled():
            fused[note] = fused.get(note, 0.0) + weight * scaled
    order = {note: rank for rank, (note, _) in enumerate([*keyword, *semantic])}
    ranked = sorted(fused.items(), key=lambda item: (-item[1], order[item[0]]))
    kept = {note for side, n in zip((keyword, semantic), KEPT, strict=True) for note, _ in side[:n]}
    return _in_front(ranked, kept)


def _in_front(ranked: list[tuple[int, float]], kept: set[int]) -> list[tuple[int, float]]:
    """`ranked` with every note of `kept` within its first TOP places, each keeping its fused
    order; the others that fit in the places left keep theirs."""
    head: list[tuple[int, float]] = []
    waiting = [item for item in ranked if item[0] in kept]
    for item in ranked:
        if len(head) == TOP:
            break
        if item[0] in kept or TOP - len(head) > len(waiting):
            head.append(item)
        if item[0] in kept:
            waiting.remove(item)
    shown = {note for note, _ in head}
    return head + [item for item in ranked if item[0] not in shown]


@dataclass(frozen=True)
class _Side:
    """One side's notes in its own order, each score raised to the best of those ranked after
    it (the side's order is its verdict: full-text ranks the notes that hold every word first,
    whatever their bm25; npm's docs: hybrid MRR 0.614 -> 0.625, the other sets within 0.001),
    with the scores' mean and population standard deviation, computed once."""

    hits: list[tuple[int, float]]
    mean: float = 0.0
    deviation: float = 0.0

    @classmethod
    def of(cls, side: Ranked) -> _Side:
        """The side's hits in order, with their moments, in floats: the statistics module's
        exact fractions took 1.4 ms of a hybrid search of 50 notes a side."""
        if not side:
            return cls([])
        scores = list(accumulate((score for _, score in reversed(side)), max))[::-1]
        mean = sum(scores) / len(scores)
        deviation = math.sqrt(sum((score - mean) ** 2 for score in scores) / len(scores))
        hits = [(note, score) for (note, _), score in zip(side, scores, strict=True)]
        return cls(hits, mean, deviation)

    def lead(self) -> float:
        """How sure the side is of its first note: its score's lead over the second's, in the
        side's standard deviations (0 with fewer than two notes or equal scores)."""
        if not self.deviation:
            return 0.0
        return (self.hits[0][1] - self.hits[1][1]) / self.deviation

    def scaled(self) -> list[tuple[int, float]]:
        """Scores mapped from mean - 3 sd .. mean + 3 sd onto 0..1. A single hit, or hits with
        equal scores, map to 1: each is that side's best (a rare word that only one note holds
        must not sink below the other side's middling hits)."""
        spread = self.deviation * SPREAD
        if spread == 0:
            return [(note, 1.0) for note, _ in self.hits]
        return [(note, (score - self.mean + spread) / (2 * spread)) for note, score in self.hits]
