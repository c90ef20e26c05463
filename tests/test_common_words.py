"""Searches of words most notes hold: the page is the full ranking's, and where a search stops
counting or ranking (searching.COUNTED, searching.RANKED) its answer says so."""

from __future__ import annotations

import random
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.core.drafts import Draft
from memvault.core.records import Filter, SearchPage
from memvault.index import searching
from memvault.index.search_sql import search_plan
from memvault.presentation.lines import search_heading
from memvault.service.vault import VaultService

from .conftest import write_file
from .mcp_helpers import stdio_session, structured, text_of
from .test_cli import run

NOTES = 400
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
WEIGHTS = "10.0, 6.0, 4.0, 1.0, 0.0"


def vocabulary(rng: random.Random) -> list[str]:
    """2,000 made-up words, most frequent first (none a stop word, none changed by stemming
    in a way two of them could share)."""
    words: dict[str, None] = {}
    while len(words) < 2_000:
        words["".join(rng.choice(SYLLABLES) for _ in range(3)) + "x"] = None
    return list(words)


@pytest.fixture
def generated(vault: VaultService, vault_dir: Path) -> list[str]:
    """A vault of NOTES notes of Zipf-drawn words (a few of them long: several sections each),
    as the benchmarks' generator makes them; the vocabulary, most frequent first."""
    rng = random.Random(7)
    words = vocabulary(rng)
    weights = [1 / rank for rank in range(1, len(words) + 1)]
    for n in range(NOTES):
        title = " ".join(rng.choices(words, weights, k=3))
        size = 12_000 if n % 100 == 0 else rng.randint(20, 120)
        body = " ".join(rng.choices(words, weights, k=size))
        write_file(vault_dir, f"notes/n{n:04}.md", f"---\ntitle: {title}\n---\n{body}\n")
    vault.upkeep.rebuild()
    return words


def full_ranking(vault_dir: Path, query: str, lowest: int = 0) -> list[str]:
    """Every matching note ranked as search documents it, with no cap: those with every word
    first, each by the bm25 of its best section; the paths, best first. `lowest` ranks only
    the FTS rows from that rowid on (a window), and the notes with every word when they are
    too few to fill a page of 10 (put first wherever they stand)."""
    plan = search_plan(query, Filter())
    assert plan is not None
    live = "rowid >> 20 NOT IN (SELECT rowid FROM notes WHERE expires_at <= datetime('now'))"
    with closing(sqlite3.connect(Settings(vault=vault_dir).index_file)) as db:
        every = {r for (r,) in db.execute(
            f"SELECT rowid >> 20 FROM notes_fts WHERE notes_fts MATCH ? AND {live}", [plan.strict]
        )}  # fmt: skip
        rows = db.execute(
            f"SELECT rowid >> 20, bm25(notes_fts, {WEIGHTS}), rowid FROM notes_fts"
            f" WHERE notes_fts MATCH ? AND {live}",
            [plan.ranked[1]],
        ).fetchall()
        best: dict[int, float] = {}
        for note, rank, row in rows:
            if row >= lowest or (note in every and len(every) < 10):
                best[note] = min(rank, best.get(note, rank))
        order = sorted(best, key=lambda note: (note not in every, best[note]))
        paths = dict(db.execute("SELECT rowid, path FROM notes").fetchall())
    return [paths[note] for note in order]


def last_rows_from(vault_dir: Path, query: str, size: int) -> int:
    """The rowid of the `size`th FTS row from the last that holds every word of `query`."""
    plan = search_plan(query, Filter())
    assert plan is not None
    with closing(sqlite3.connect(Settings(vault=vault_dir).index_file)) as db:
        rows = [r for (r,) in db.execute(
            "SELECT rowid FROM notes_fts WHERE notes_fts MATCH ? ORDER BY rowid DESC",
            [plan.strict],
        )]  # fmt: skip
    return int(rows[size - 1])


def search(vault: VaultService, query: str, limit: int = 10, offset: int = 0) -> SearchPage:
    """A search by words (the model is not asked: no caveat in the heading)."""
    return vault.search(query, limit, offset, None, "keyword")


def paths(vault: VaultService, query: str, limit: int = 10, offset: int = 0) -> list[str]:
    return [hit.path for hit in search(vault, query, limit, offset).results]


@pytest.mark.parametrize("count", [1, 3, 5])
def test_common_words_rank_the_first_pages_as_ranking_every_match_would(
    vault: VaultService, vault_dir: Path, generated: list[str], count: int
) -> None:
    query = " ".join(generated[:count])
    page = search(vault, query)
    assert page.total > 100 and not page.ranked
    full = full_ranking(vault_dir, query)
    assert [hit.path for hit in page.results] == full[:10]
    assert paths(vault, query, 10, 30) == full[30:40]


def test_a_rare_word_among_common_ones_puts_the_notes_with_every_word_first(
    vault: VaultService, vault_dir: Path, generated: list[str]
) -> None:
    for n in range(3):
        write_file(vault_dir, f"aa/rare{n}.md", f"Rare {n}\n\nzeppelinx {generated[0]}\n")
    vault.upkeep.sync()
    query = f"{generated[0]} {generated[1]} zeppelinx"
    assert paths(vault, query)[:3] == full_ranking(vault_dir, query)[:3]
    assert paths(vault, query) == full_ranking(vault_dir, query)[:10]


def test_past_the_cap_a_search_ranks_the_last_rows_and_says_so(
    vault: VaultService,
    vault_dir: Path,
    generated: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(searching, "RANKED", 40)
    query = generated[0]
    page = search(vault, query)
    assert page.ranked == 40
    lowest = last_rows_from(vault_dir, query, 40)
    assert [hit.path for hit in page.results] == full_ranking(vault_dir, query, lowest)[:10]
    assert [hit.path for hit in page.results] != full_ranking(vault_dir, query)[:10]
    assert search_heading(page, query) == (
        f"{page.total} memories match {query!r} (the best of 40 of them: a search ranks no"
        f" more; more words or a filter rank them all); showing 10 of {page.total}."
    )
    write_file(vault_dir, "aa/rare.md", f"Rare\n\nzeppelinx {query}\n")
    vault.upkeep.rebuild()  # its rowid comes first, far below the window
    assert paths(vault, f"{query} zeppelinx")[0] == "aa/rare.md"
    assert not search(vault, "zeppelinx").ranked


def test_past_the_count_a_search_says_more_than(
    vault: VaultService,
    vault_dir: Path,
    generated: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(searching, "COUNTED", 25)
    query = generated[0]
    page = search(vault, query)
    assert (page.total, page.total_capped, page.has_more) == (25, True, True)
    assert search_heading(page, query) == f"More than 25 memories match {query!r}; showing 10."
    deep = search(vault, query, 10, 20)
    assert (deep.total, deep.total_capped, deep.has_more) == (30, True, True)
    assert search_heading(deep, query).endswith("; showing 21-30.")
    rare = search(vault, generated[-1])
    assert not rare.total_capped and rare.total == len(rare.results)
    code, _, heading = run(vault_dir, "search", query, "--mode", "keyword")
    assert code == 0 and heading.startswith(f"More than 25 memories match {query!r}; showing 10.")
    code, out, _ = run(vault_dir, "search", query, "--mode", "keyword", "--json")
    assert code == 0 and '"total_capped": true' in out


def test_a_hit_with_every_word_far_into_a_long_note_is_wholly_relevant(
    vault: VaultService,
) -> None:
    filler = "the ledger was balanced again and nothing else happened\n" * 5_000
    vault.create(Draft("Long log", filler + "At the very end the zeppelin left the hangar.\n"))
    vault.create(Draft("Hangar", "An empty hangar."))
    hits = vault.search("zeppelin hangar").results
    assert [(hit.title, hit.relevance) for hit in hits] == [("Long log", 1.0), ("Hangar", 0.5)]


@pytest.mark.processes
@pytest.mark.anyio
async def test_search_mem_says_when_more_match_than_it_counted(vault_dir: Path) -> None:
    for n in range(searching.COUNTED + 5):
        write_file(vault_dir, f"log/n{n:04}.md", f"Entry {n}\n\nThe zeppelinx left at {n}.\n")
    async with stdio_session(vault_dir, None, "--embed-model", "off") as session:
        result = await session.call_tool("search_mem", {"query": "zeppelinx"})
    found = structured(result)
    assert (found["total"], found["total_capped"], found["has_more"]) == (1000, True, True)
    assert found["ranked"] == 0 and len(found["results"]) == 10
    assert text_of(result).startswith("More than 1,000 memories match 'zeppelinx'; showing 10.")
