"""A first embedding never starves the server (issue 38): the background embedding runs its
model on a share of the cores, waits between batches while the server answers requests and
resumes once it is quiet; under a load that never stops it still takes a batch now and then;
a memory just written is embedded at once; get_stats says all of it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault.activity import REQUESTS
from memvault.config import Settings
from memvault.core.drafts import Draft
from memvault.errors import Invalid
from memvault.presentation.lines import stats_text
from memvault.semantic import throttle
from memvault.service.vault import VaultService

from .conftest import patience, write_file
from .mcp_helpers import stdio_session, structured, text_of
from .test_semantic import PARAPHRASE, ROLLBACK
from .test_sync import eventually

# More notes than a pass embeds without waiting its turn (embedding_worker.UNPACED), and more
# than one batch of chunks (model.BATCH): a first embedding, in small.
NOTES = 40


def hand_made(vault_dir: Path, count: int = NOTES) -> None:
    """`count` notes as a person saves them: files only, nothing embedded."""
    for n in range(count):
        write_file(
            vault_dir, f"note-{n}.md", f"# Note {n}\n\nFact {n}: planet {n} has {n} moons.\n"
        )


@pytest.fixture
def first_embedding(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[VaultService]:
    """A vault of NOTES notes none of which is embedded, opened with the default model, whose
    background embedding has not started."""
    monkeypatch.delenv(throttle.CORES_ENV, raising=False)
    hand_made(vault_dir)
    service = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    yield service
    service.close()


def test_a_first_embedding_waits_while_requests_come_and_resumes_when_idle(
    first_embedding: VaultService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(throttle, "LONGEST_PAUSE", 3600.0)
    with REQUESTS.request():
        first_embedding.serve_semantic()
        eventually(lambda: first_embedding.semantic_status().paused, 60)
        status = first_embedding.semantic_status()
        assert (status.embedded, status.pending) == (0, NOTES)
        assert "; paused now while requests come)" in stats_text(first_embedding.stats())
    eventually(lambda: first_embedding.semantic_status().pending == 0, 60)
    assert not first_embedding.semantic_status().paused
    assert first_embedding.search("Fact 7 moons", 1).results[0].title == "Note 7"


def test_under_a_load_that_never_stops_the_embedding_still_gets_done(
    first_embedding: VaultService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server answers a request the whole time: each batch waits LONGEST_PAUSE (short
    here), then goes."""
    monkeypatch.setattr(throttle, "LONGEST_PAUSE", 0.2)
    with REQUESTS.request():
        first_embedding.serve_semantic()
        eventually(lambda: first_embedding.semantic_status().pending == 0, 60)


def test_while_a_first_embedding_is_under_way_searches_stay_by_words(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Meaning would cost each search its question's embedding for a sliver of the vault: a
    search without `mode` runs by words (and says why) until meaning covers most notes; one
    that asks for meaning gets it, with how little it covers."""
    monkeypatch.setattr(throttle, "LONGEST_PAUSE", 3600.0)
    vault = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    try:
        vault.create(Draft(*ROLLBACK))
        assert vault.embed() == 1
        hand_made(vault_dir)
        vault.upkeep.sync()
        with REQUESTS.request():
            vault.serve_semantic()
            eventually(lambda: vault.semantic_status().paused, 60)
            page = vault.search(PARAPHRASE)
            assert page.mode == "keyword"
            assert page.caveat == (
                f"by words only: meaning joins once most memories are embedded (1 of {NOTES + 1}"
                " so far; the server embeds the rest)"
            )
            asked = vault.search(PARAPHRASE, 1, mode="hybrid")
            assert asked.mode == "hybrid" and asked.results[0].title == ROLLBACK[0]
            assert asked.caveat.startswith(f"meaning covers 1 of {NOTES + 1} memories so far")
        eventually(lambda: vault.semantic_status().pending == 0, 60)
        assert vault.search(PARAPHRASE).mode == "hybrid"
    finally:
        vault.close()


def test_a_memory_just_written_is_embedded_at_once_whatever_the_load(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(throttle, "LONGEST_PAUSE", 3600.0)
    vault = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    try:
        with REQUESTS.request():
            vault.serve_semantic()
            vault.create(Draft(*ROLLBACK))
            eventually(lambda: vault.semantic_status().pending == 0, 60)
            assert vault.search(PARAPHRASE, 1, mode="semantic").results[0].title == ROLLBACK[0]
    finally:
        vault.close()


def test_the_embedding_s_share_of_the_cores_is_half_unless_set(
    first_embedding: VaultService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(throttle.os, "cpu_count", lambda: 8)
    assert first_embedding.semantic_status().cores == 4
    monkeypatch.setenv(throttle.CORES_ENV, "3")
    assert first_embedding.semantic_status().cores == 3
    assert "a running server does it by itself, on 3 cores)" in stats_text(first_embedding.stats())
    monkeypatch.setenv(throttle.CORES_ENV, "99")
    assert first_embedding.semantic_status().cores == 8
    monkeypatch.setattr(throttle.os, "cpu_count", lambda: 1)
    monkeypatch.delenv(throttle.CORES_ENV)
    assert first_embedding.semantic_status().cores == 1


@pytest.mark.parametrize("given", ["0", "half", "-2", "1.5"])
def test_a_share_of_the_cores_that_is_no_whole_number_is_refused_at_start(
    first_embedding: VaultService, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    monkeypatch.setenv(throttle.CORES_ENV, given)
    with pytest.raises(Invalid, match=r"MEMVAULT_EMBED_CORES=.*give a whole number of cores"):
        first_embedding.serve_semantic()


@pytest.mark.processes
def test_get_stats_says_the_share_of_the_cores_and_when_the_embedding_waits(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that calls without a pause keeps a first embedding waiting, and get_stats says
    so; once the client is quiet the embedding resumes and finishes."""
    monkeypatch.delenv("MEMVAULT_EMBED_MODEL", raising=False)
    monkeypatch.setenv(throttle.CORES_ENV, "1")
    hand_made(vault_dir, 80)

    async def scenario() -> None:
        async with stdio_session(vault_dir) as session:

            async def semantic() -> dict[str, object]:
                figures: dict[str, object] = structured(await session.call_tool("get_stats", {}))
                return figures["semantic"]  # type: ignore[return-value]

            deadline = time.monotonic() + patience(60)
            while not (figures := await semantic())["paused"]:
                assert time.monotonic() < deadline, "the embedding never waited"
                await asyncio.sleep(0.05)
            assert figures["cores"] == 1 and figures["pending"] > 0
            text = text_of(await session.call_tool("get_stats", {}))
            assert "on 1 core; paused now while requests come)" in text
            deadline = time.monotonic() + patience(120)
            while (figures := await semantic())["pending"]:
                assert time.monotonic() < deadline, "the embedding never finished"
                await asyncio.sleep(1.0)
            assert not figures["paused"] and figures["embedded"] == 80

    asyncio.run(scenario())
