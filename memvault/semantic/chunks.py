"""A note's text in chunks by heading and paragraph, each within an embedding model's budget.

Semantic search embeds chunks, not notes: a model reads a few hundred word-pieces at most, and
one vector for a long note blurs every topic in it. A note's semantic score is its best
chunk's, and its snippet comes from that chunk. Chunks follow the writer's structure: a heading
starts a new chunk, paragraphs are packed together up to the budget, and only a paragraph
longer than the budget is cut, at lines, then at spaces, then (a run with no spaces: Chinese,
a long identifier) between word-pieces. The budget counts the model's own word-pieces, so a
chunk is never cut short by the model: English runs 1.3 pieces a word, Chinese a piece a
character, identifiers and made-up words three or more. The note's title goes in front of its
first chunk, where a person reads it too, and of every other chunk when it is made of words (a
chunk of a long note, a heading and a line, says little without it); a title that is an id or
a date (`locomo-c05-s03`, `Session 2026-11-28 10:00`) only goes in front of the first.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

# Word-pieces a chunk holds at most: the length MiniLM-sized models are trained on.
BUDGET = 128
# A huge hand-made note is embedded in its first chunks only: 128 chunks hold some 12,000 words,
# and a 50 MB note would otherwise keep the embedding worker busy for an hour.
MAX_CHUNKS = 128
# How a note is cut, named in the index beside its chunks: a change to the rules above changes
# it, so that every note is cut again (a chunk whose text is unchanged keeps its vector).
RECIPE = f"pieces{BUDGET}-titled"
# Characters of a note read for its chunks: more than MAX_CHUNKS full chunks of any text but
# whitespace, so a 50 MB note is not tokenized whole for the few chunks it is embedded in.
_READ = MAX_CHUNKS * BUDGET * 8

_HEADING = re.compile(r"^#{1,6}\s", re.MULTILINE)
_LETTERS = re.compile(r"[^\W\d_]")
_DIGITS = re.compile(r"\d")
_BLANK = re.compile(r"\n[ \t]*\n")
_LINE = re.compile(r"\n")


@dataclass(frozen=True)
class Measure:
    """How a model reads text: where each of a text's word-pieces starts (in characters), and
    how many pieces of text it reads at most (its limit less its own marks and prefix)."""

    starts: Callable[[str], Sequence[int]]
    room: int


@dataclass(frozen=True)
class Chunk:
    """A span of a note's body (`start`..`end`, in characters) and the text embedded for it."""

    start: int
    end: int
    text: str


def chunks(title: str, body: str, measure: Measure, limit: int = MAX_CHUNKS) -> list[Chunk]:
    """The note's chunks in order, at most `limit`; a note with no body is its title alone.
    Each holds at most BUDGET pieces, fewer when the title in front of the first would not
    leave the model room for them (a model reading fewer pieces, a very long title)."""
    room = min(BUDGET, measure.room)
    budget = max(min(room, measure.room - len(measure.starts(title))), room // 2)
    read = body[:_READ]
    pieces = _Pieces(read, list(measure.starts(read)))
    found: list[Chunk] = []
    for start, end in _packed(pieces, budget):
        if len(found) == limit:
            break
        found.append(Chunk(start, end, chunk_text(title, body[start:end], len(found))))
    if not found:
        found.append(Chunk(0, len(body), title))
    return found


def chunk_text(title: str, text: str, seq: int) -> str:
    """Chunk `seq` of a note (`text`, its span of the body) as a model reads it: the title in
    front of the first chunk, and of every other when the title is made of words."""
    text = text.strip()
    return f"{title}\n{text}" if title and (seq == 0 or worded(title)) else text


def worded(title: str) -> bool:
    """Whether a title is made of words, not an id or a date: more letters than digits, twice
    over (`Deploy order` yes; `locomo-c05-s03`, `2024-05-01`, `Session 2026-11-28` no)."""
    return len(_LETTERS.findall(title)) > 2 * len(_DIGITS.findall(title))


@dataclass(frozen=True)
class _Pieces:
    """A text and where its word-pieces start."""

    text: str
    starts: list[int]

    def count(self, start: int, end: int) -> int:
        """The pieces that start in text[start:end]."""
        return bisect_left(self.starts, end) - bisect_left(self.starts, start)


def _packed(pieces: _Pieces, budget: int) -> Iterator[tuple[int, int]]:
    """Spans of whole units packed up to `budget` pieces; a heading always starts a new span."""
    start = end = held = 0
    for unit_start, unit_end, heading in _units(pieces, budget):
        count = pieces.count(unit_start, unit_end)
        if end and (heading or held + count > budget):
            yield start, end
            end = held = 0
        if not end:
            start = unit_start
        end, held = unit_end, held + count
    if end:
        yield start, end


def _units(pieces: _Pieces, budget: int) -> Iterator[tuple[int, int, bool]]:
    """Paragraphs as (start, end, starts with a heading); one longer than `budget` pieces
    comes in lines, and a longer line in runs of `budget` pieces."""
    text = pieces.text
    for start, end in _spans(text, _BLANK, 0, len(text)):
        heading = _HEADING.match(text, start) is not None
        if pieces.count(start, end) <= budget:
            yield start, end, heading
            continue
        for line_start, line_end in _spans(text, _LINE, start, end):
            heading = heading or _HEADING.match(text, line_start) is not None
            for run_start, run_end in _runs(pieces, line_start, line_end, budget):
                yield run_start, run_end, heading
                heading = False


def _spans(
    text: str, separator: re.Pattern[str], start: int, end: int
) -> Iterator[tuple[int, int]]:
    """The non-blank stretches of text[start:end] between matches of `separator`."""
    for match in separator.finditer(text, start, end):
        if text[start : match.start()].strip():
            yield start, match.start()
        start = match.end()
    if text[start:end].strip():
        yield start, end


def _runs(pieces: _Pieces, start: int, end: int, budget: int) -> Iterator[tuple[int, int]]:
    """A line as runs of at most `budget` pieces (most lines are one run), each cut before the
    last word that would not fit, or between pieces inside a word longer than the budget."""
    first, last = bisect_left(pieces.starts, start), bisect_left(pieces.starts, end)
    while last - first > budget:
        cut = first + budget
        word = next((i for i in range(cut, first, -1) if _opens_word(pieces, i)), cut)
        yield pieces.starts[first], pieces.starts[word]
        first = word
    if first < last:
        yield pieces.starts[first], end


def _opens_word(pieces: _Pieces, index: int) -> bool:
    """Whether piece `index` follows a space (a cut there splits no word)."""
    return pieces.text[pieces.starts[index] - 1].isspace()
