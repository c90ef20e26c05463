"""read_mem's contract (issue 15): an identifier resolves exactly, or by a clear fuzzy match on a
memory's NAMES (title, file name, alias) with its confidence; a memory's text is never a match;
otherwise the error lists the candidates above a floor and points to search_mem."""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.errors import NotFound
from memvault.search.similarity import SUGGEST_FLOOR, TYPO
from memvault.service.vault import VaultService

from .mcp_helpers import stdio_session, structured, tool_error

# (title, body): the examples came from a vault like this one. Every body says
# "memory" and "cache", so a match on the text would answer the questions below.
NOTES = [
    ("Payment retries: 3 with backoff", "We retry a failed payment 3 times. The memory cache..."),
    ("Postgres connection pool exhausted", "Raise max_connections; the memory of the pool cache."),
    ("Memory leak in the worker pool", "The worker kept a cache of every job in memory."),
    ("Café opening hours", "Open 8 to 18; the cache of memory cards is by the door."),
    ("Deploy order", "Run the migrations first; memory and cache settings come last."),
    ("Deploy checklist", "Tests, migrations, deploy; clear the cache; check memory."),
    (".", "A note titled with a dot only; memory and cache again."),
]

EXACT = 1.0
# identifier -> the title read_mem answers with (None: a tool error), and the confidence range.
TABLE = [
    # exact names: id-like keys, title, file name, path, case
    ("Payment retries: 3 with backoff", "Payment retries: 3 with backoff", (EXACT, EXACT)),
    ("payment-retries-3-with-backoff", "Payment retries: 3 with backoff", (EXACT, EXACT)),
    ("DEPLOY ORDER", "Deploy order", (EXACT, EXACT)),
    ("deploy-checklist.md", "Deploy checklist", (EXACT, EXACT)),
    (".", ".", (EXACT, EXACT)),
    # a clear match on names: a typo, other word order, a missing word
    ("Payment retrys", "Payment retries: 3 with backoff", (TYPO, 0.9)),
    ("postgres pool", "Postgres connection pool exhausted", (TYPO, 0.9)),
    ("pool exhausted postgres connection", "Postgres connection pool exhausted", (0.9, 0.99)),
    ("Postgres conection pool exhausted", "Postgres connection pool exhausted", (0.8, 0.99)),
    ("Deploy ordr", "Deploy order", (TYPO, 0.9)),
    ("cafe opening hours", "Café opening hours", (TYPO, 0.99)),
    ("memory leak in worker pool", "Memory leak in the worker pool", (0.8, 0.99)),
    # no name is meant, though every body holds these words: an error, never a guess
    ("no such memory anywhere", None, None),
    ("what is our memory leak fix", None, None),
    ("cache", None, None),
    ("kafka", None, None),
    # the title "." (or any punctuation) does not match every key with a dot in it
    ("v1.2 release notes", None, None),
    ("a.b", None, None),
    # two names equally near: neither is clearly ahead
    ("deploy", None, None),
]


@pytest.fixture
def notes(vault: VaultService) -> VaultService:
    for title, body in NOTES:
        vault.create(Draft(title, body), WriteOptions(allow_duplicate=True))
    return vault


@pytest.mark.parametrize(("identifier", "title", "confidence"), TABLE)
def test_read_answers_a_name_or_fails_never_a_guess_from_the_text(
    notes: VaultService,
    identifier: str,
    title: str | None,
    confidence: tuple[float, float] | None,
) -> None:
    if title is None:
        with pytest.raises(NotFound) as caught:
            notes.recall(identifier)
        assert "search_mem" in str(caught.value)
        return
    found = notes.recall(identifier)
    assert found.memory.title == title
    assert confidence is not None
    assert confidence[0] <= found.confidence <= confidence[1]
    assert found.matched_by == ("exact" if found.confidence == EXACT else "name")


@pytest.mark.parametrize(
    ("identifier", "candidates"),
    [
        # the words of a title, among others: listed, below the bar to be returned
        ("what is our memory leak fix", ["Memory leak in the worker pool"]),
        ("deploy", ["Deploy checklist", "Deploy order"]),
        # nothing near: no candidate at all rather than near-zero ones
        ("kafka", []),
        ("no such memory anywhere", []),
        ("cache", []),
    ],
)
def test_a_failed_read_lists_only_candidates_above_the_floor(
    notes: VaultService, identifier: str, candidates: list[str]
) -> None:
    with pytest.raises(NotFound) as caught:
        notes.recall(identifier)
    listed = caught.value.suggestions
    assert sorted(title for _path, title, _score in listed) == candidates
    assert all(SUGGEST_FLOOR <= score < 1 for _path, _title, score in listed)
    for _path, title, score in listed:
        assert f"{title!r} ({score:.2f})" in str(caught.value)


def test_at_most_five_candidates_are_listed(vault: VaultService) -> None:
    for n in range(8):
        vault.create(Draft(f"Deploy step {n}", f"step {n}"))
    with pytest.raises(NotFound) as caught:
        vault.recall("deploy step")
    assert len(caught.value.suggestions) == 5


def test_writes_never_act_on_a_fuzzy_name(notes: VaultService) -> None:
    """edit, delete, verify and link name memories exactly; a near miss lists the candidates."""
    with pytest.raises(NotFound, match="did you mean 'Deploy order'"):
        notes.update("Deploy ordr", Revision(edit=BodyEdit(append="x")))
    with pytest.raises(NotFound, match="did you mean 'Postgres connection pool exhausted'"):
        notes.delete("postgres pool")
    with pytest.raises(NotFound):
        notes.verify("Payment retrys")
    with pytest.raises(NotFound):
        notes.link("Deploy order", "postgres pool")
    with pytest.raises(NotFound, match="search_mem"):
        notes.delete("cache")
    assert notes.get("Deploy order").body.endswith("come last.\n")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.processes
@pytest.mark.anyio
async def test_read_mem_fails_as_a_tool_error_when_only_the_text_matches(vault_dir: Path) -> None:
    async with stdio_session(vault_dir) as session:
        for title, body in NOTES[:3]:
            await session.call_tool(
                "write_mem", {"title": title, "content": body, "allow_duplicate": True}
            )
        text = await tool_error(session, "read_mem", {"identifier": "no such memory anywhere"})
        assert text == (
            "Error executing tool read_mem: no memory 'no such memory anywhere'; use search_mem"
            " to find memories by what they say"
        )
        found = structured(
            await session.call_tool("read_mem", {"identifier": "postgres pool", "format": "json"})
        )
        assert found["title"] == "Postgres connection pool exhausted"
        assert (found["matched_by"], TYPO <= found["confidence"] < 1) == ("name", True)
