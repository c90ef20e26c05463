"""Chunks for semantic search: every word of a note lands in one chunk, in order, within the
budget, and headings start chunks."""

from __future__ import annotations

import itertools
import re

from hypothesis import given
from hypothesis import strategies as st

from memvault.chunks import chunks

WORDS = st.text(alphabet="abcdé#-*: ", min_size=1, max_size=12)
LINES = st.lists(WORDS, max_size=40).map(" ".join)
BODIES = st.lists(st.one_of(LINES, st.just(""), st.just("## Heading")), max_size=30).map("\n".join)


@given(BODIES, st.integers(min_value=1, max_value=30))
def test_chunks_hold_every_word_once_in_order_within_the_budget(body: str, budget: int) -> None:
    found = chunks("Title", body, budget=budget, limit=10_000)
    assert [w for c in found for w in body[c.start : c.end].split()] == body.split()
    assert all(len(body[c.start : c.end].split()) <= budget for c in found)
    assert all(a.end <= b.start for a, b in itertools.pairwise(found))


@given(BODIES)
def test_the_title_leads_the_first_chunk_only(body: str) -> None:
    found = chunks("Title", body)
    assert found[0].text.startswith("Title")
    assert all(c.text == body[c.start : c.end].strip() for c in found[1:])


def test_a_heading_starts_a_chunk_and_paragraphs_pack_together() -> None:
    body = "First paragraph.\n\nSecond one.\n\n## Setup\nInstall it.\n\nThen run it."
    texts = [c.text for c in chunks("Guide", body)]
    assert texts == [
        "Guide\nFirst paragraph.\n\nSecond one.",
        "## Setup\nInstall it.\n\nThen run it.",
    ]


def test_a_huge_note_is_embedded_in_its_first_chunks_only() -> None:
    body = "\n\n".join(f"paragraph {i} " + "word " * 90 for i in range(1000))
    found = chunks("Huge", body, limit=5)
    assert len(found) == 5
    assert re.search(r"paragraph 4 ", found[-1].text)


def test_a_note_without_a_body_is_its_title() -> None:
    assert [c.text for c in chunks("Only a title", "  \n")] == ["Only a title"]
