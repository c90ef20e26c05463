"""A note's text in chunks by heading and paragraph, each within an embedding model's budget.

Semantic search embeds chunks, not notes: a model reads a few hundred word-pieces at most, and
one vector for a long note blurs every topic in it. A note's semantic score is its best
chunk's, and its snippet comes from that chunk. Chunks follow the writer's structure: a heading
starts a new chunk, paragraphs are packed together up to the budget, and only a paragraph
longer than the budget is cut, at line and then at word boundaries. The note's title goes in
front of its first chunk, where a person reads it too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# Words per chunk: about 128 word-pieces of English for a MiniLM-sized model (a word is 1.3
# word-pieces on average), the length such models are trained on.
BUDGET_WORDS = 96
# A huge hand-made note is embedded in its first chunks only: 128 chunks hold some 12,000 words,
# and a 50 MB note would otherwise keep the embedding worker busy for an hour.
MAX_CHUNKS = 128

_HEADING = re.compile(r"^#{1,6}\s", re.MULTILINE)
_BLANK = re.compile(r"\n[ \t]*\n")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Chunk:
    """A span of a note's body (`start`..`end`, in characters) and the text embedded for it."""

    start: int
    end: int
    text: str


def chunks(
    title: str, body: str, budget: int = BUDGET_WORDS, limit: int = MAX_CHUNKS
) -> list[Chunk]:
    """The note's chunks in order, at most `limit`; a note with no body is its title alone."""
    found: list[Chunk] = []
    for start, end in _packed(body, budget):
        if len(found) == limit:
            break
        text = body[start:end].strip()
        found.append(Chunk(start, end, f"{title}\n{text}" if not found and title else text))
    if not found:
        found.append(Chunk(0, len(body), title))
    return found


def _packed(body: str, budget: int) -> Iterator[tuple[int, int]]:
    """Spans of whole pieces packed up to `budget` words; a heading always starts a new span."""
    start = end = words = 0
    for piece_start, piece_end, heading in _pieces(body, budget):
        count = _count(body, piece_start, piece_end)
        if words and (heading or words + count > budget):
            yield start, end
            words = 0
        if not words:
            start = piece_start
        end, words = piece_end, words + count
    if words:
        yield start, end


def _pieces(body: str, budget: int) -> Iterator[tuple[int, int, bool]]:
    """Paragraphs as (start, end, starts with a heading); a longer one than `budget` words comes
    in lines, and a longer line in runs of `budget` words."""
    for start, end in _spans(body, _BLANK, 0, len(body)):
        heading = _HEADING.match(body, start) is not None
        if _count(body, start, end) <= budget:
            yield start, end, heading
            continue
        for line_start, line_end in _spans(body, re.compile(r"\n"), start, end):
            heading = heading or _HEADING.match(body, line_start) is not None
            yield from _words(body, line_start, line_end, budget, heading)
            heading = False


def _spans(
    body: str, separator: re.Pattern[str], start: int, end: int
) -> Iterator[tuple[int, int]]:
    """The non-blank stretches of body[start:end] between matches of `separator`."""
    for match in separator.finditer(body, start, end):
        if body[start : match.start()].strip():
            yield start, match.start()
        start = match.end()
    if body[start:end].strip():
        yield start, end


def _words(
    body: str, start: int, end: int, budget: int, heading: bool
) -> Iterator[tuple[int, int, bool]]:
    """A line as runs of at most `budget` words (most lines are one run)."""
    words = list(_WORD.finditer(body, start, end))
    for first in range(0, len(words), budget):
        run = words[first : first + budget]
        yield run[0].start(), run[-1].end(), heading and first == 0


def _count(body: str, start: int, end: int) -> int:
    return sum(1 for _ in _WORD.finditer(body, start, end))
