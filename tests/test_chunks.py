"""Chunks for semantic search: every piece of a note lands in one chunk, in order, within what
the model reads whole, and headings start chunks. Measured in words (each word one piece),
in characters (text with no spaces), and with the default model's own tokenizer."""

from __future__ import annotations

import itertools
import re
from functools import cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.semantic.chunks import BUDGET, Measure, chunks
from memvault.semantic.model import Embedder, find_model

WORDS = st.text(alphabet="abcdé#-*: ", min_size=1, max_size=12)
LINES = st.lists(WORDS, max_size=40).map(" ".join)
BODIES = st.lists(st.one_of(LINES, st.just(""), st.just("## Heading")), max_size=30).map("\n".join)
# Text with no spaces, as Chinese or Japanese is written: one piece a character.
RUNS = st.text(alphabet="日本語のテキスト。\n", max_size=600)


def by_words(room: int) -> Measure:
    """A model that reads each word as one piece."""
    return Measure(lambda text: [m.start() for m in re.finditer(r"\S+", text)], room)


def by_characters(room: int) -> Measure:
    """A model that reads each character but spaces as one piece."""
    return Measure(lambda text: [i for i, c in enumerate(text) if not c.isspace()], room)


@cache
def model() -> Measure:
    return Embedder(find_model(None)).measure


def read(measure: Measure, text: str) -> int:
    return len(measure.starts(text))


@given(BODIES, st.integers(min_value=4, max_value=30))
def test_chunks_hold_every_word_once_in_order_within_the_room(body: str, room: int) -> None:
    measure = by_words(room)
    found = chunks("Title", body, measure, limit=10_000)
    assert [w for c in found for w in body[c.start : c.end].split()] == body.split()
    assert all(read(measure, c.text) <= room for c in found)
    assert all(a.end <= b.start for a, b in itertools.pairwise(found))


@given(RUNS, st.integers(min_value=4, max_value=60))
def test_text_without_spaces_is_cut_between_pieces(body: str, room: int) -> None:
    measure = by_characters(room)
    found = chunks("", body, measure, limit=10_000)
    assert "".join("".join(body[c.start : c.end].split()) for c in found) == "".join(body.split())
    assert all(read(measure, c.text) <= room for c in found)


@given(BODIES)
def test_a_title_of_words_leads_every_chunk_and_an_id_the_first_only(body: str) -> None:
    """A chunk of a long note (a heading and a line) says little without its note's title:
    one made of words goes in front of every chunk; an id or a date, only the first."""
    found = chunks("Deploy order", body, by_words(BUDGET))
    if not body.strip():  # a note with no body is its title alone
        assert [c.text for c in found] == ["Deploy order"]
        return
    assert all(c.text == f"Deploy order\n{body[c.start : c.end].strip()}" for c in found)
    found = chunks("locomo-c05-s03", body, by_words(BUDGET))
    assert found[0].text.startswith("locomo-c05-s03\n")
    assert all(c.text == body[c.start : c.end].strip() for c in found[1:])


def test_a_heading_starts_a_chunk_and_paragraphs_pack_together() -> None:
    body = "First paragraph.\n\nSecond one.\n\n## Setup\nInstall it.\n\nThen run it."
    texts = [c.text for c in chunks("Guide", body, by_words(BUDGET))]
    assert texts == [
        "Guide\nFirst paragraph.\n\nSecond one.",
        "Guide\n## Setup\nInstall it.\n\nThen run it.",
    ]


def test_a_long_line_is_cut_at_spaces() -> None:
    body = " ".join(f"w{i}" for i in range(300))
    found = chunks("", body, by_words(100))
    assert [c.text.split()[0] for c in found] == ["w0", "w100", "w200"]


def test_a_huge_note_is_embedded_in_its_first_chunks_only() -> None:
    body = "\n\n".join(f"paragraph {i} " + "word " * 90 for i in range(1000))
    found = chunks("Huge", body, by_words(BUDGET), limit=5)
    assert len(found) == 5
    assert re.search(r"paragraph 4 ", found[-1].text)


def test_a_note_without_a_body_is_its_title() -> None:
    assert [c.text for c in chunks("Only a title", "  \n", by_words(BUDGET))] == ["Only a title"]


@pytest.mark.parametrize(
    "body",
    [
        "記憶は検索できるべきだ。" * 150,  # 1,800 characters, no space: one run of 1,800 pieces
        " ".join(f"cfg_{i:04x}.retry_backoff_ms=250" for i in range(120)),  # identifiers
        "\n\n".join(" ".join(["zorblatix quendril vaspho"] * 30) for _ in range(5)),
    ],
    ids=["chinese", "identifiers", "made-up words"],
)
def test_the_model_reads_every_chunk_whole(body: str) -> None:
    """Budgeted in words, these notes' chunks ran past the model's 256 pieces and were cut
    short: most of the Chinese note was never embedded."""
    measure = model()
    found = chunks("A title", body, measure)
    assert all(read(measure, c.text) <= BUDGET + read(measure, "A title") for c in found)
    assert sum(read(measure, body[c.start : c.end]) for c in found) == read(measure, body)
