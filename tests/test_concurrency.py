"""No request stalls the others: in a real server, reads run side by side, so a slow search does
not hold up an unrelated read, and a query past the time limit is stopped with an error that
says so (MCP and CLI). Threads of one process reading and writing at once lose nothing."""

from __future__ import annotations

import random
import string
import threading
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from memvault.cli import main
from memvault.config import Settings
from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision
from memvault.service.vault import VaultService

from .conftest import write_file
from .mcp_helpers import http_server, http_session, text_of

# Every word of every note matches one of these prefixes: FTS5 expands each into thousands of
# terms and ranks every note: its three statements take a second or more on 2,000 notes.
SLOW_QUERY = " ".join(f"{letter}*" for letter in string.ascii_lowercase)
BULK = 2000


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def busy_vault(vault_dir: Path) -> Path:
    """BULK notes of 800 random words each, and one short note to read."""
    rng = random.Random(13)
    letters = string.ascii_lowercase
    words = ["".join(rng.choices(letters, k=rng.randint(4, 9))) for _ in range(20_000)]
    for number in range(BULK):
        body = " ".join(rng.choices(words, k=800))
        write_file(vault_dir, f"bulk/n{number:04d}.md", f"# Note {number}\n\n{body}\n")
    write_file(vault_dir, "deploy-order.md", "# Deploy order\n\nMigrations run first.\n")
    return vault_dir


@pytest.mark.processes
@pytest.mark.anyio
async def test_a_slow_search_does_not_hold_up_an_unrelated_read(busy_vault: Path) -> None:
    done: list[str] = []
    with http_server(busy_vault, "--no-watch") as (url, _process):
        async with http_session(url) as slow_client, http_session(url) as other_client:

            async def slow_search() -> None:
                result = await slow_client.call_tool("search_mem", {"query": SLOW_QUERY})
                assert not result.is_error, text_of(result)
                done.append("slow search")

            async def reads_meanwhile() -> None:
                await anyio.sleep(0.1)  # the slow search is under way
                while "slow search" not in done:
                    result = await other_client.call_tool(
                        "read_mem", {"identifier": "deploy-order"}
                    )
                    assert "Migrations run first." in text_of(result)
                    done.append("read")

            async with anyio.create_task_group() as group:
                group.start_soon(slow_search)
                group.start_soon(reads_meanwhile)

    # Dozens of reads are answered while the search runs. Were they queued behind its
    # statements, a few at most would slip in between them.
    assert done.index("slow search") >= 8, done


@pytest.mark.processes
@pytest.mark.anyio
async def test_a_search_past_the_time_limit_is_stopped_with_a_tool_error(
    busy_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_QUERY_TIMEOUT", "0.05")
    with http_server(busy_vault, "--no-watch") as (url, _process):
        async with http_session(url) as session:
            stopped = await session.call_tool("search_mem", {"query": SLOW_QUERY})
            read = await session.call_tool("read_mem", {"identifier": "deploy-order"})

    assert stopped.is_error
    assert "the search took longer than 0.05 s and was stopped; narrow the query" in text_of(
        stopped
    )
    assert not read.is_error and "Migrations run first." in text_of(read)


def test_the_cli_stops_a_search_past_the_time_limit_with_one_line(busy_vault: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["--vault", str(busy_vault), "reindex"]).exit_code == 0

    result = runner.invoke(
        main, ["--vault", str(busy_vault), "--query-timeout", "0.05", "search", SLOW_QUERY]
    )

    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "error: the search took longer than 0.05 s and was stopped; narrow the query"
    ]


def test_threads_reading_and_writing_at_once_lose_nothing(vault_dir: Path) -> None:
    settings = Settings(vault=vault_dir)
    vault = VaultService.open(settings)
    try:
        vault.create(Draft("Shared log", "Lines from every thread.\n", category="ops"))
        errors: list[BaseException] = []
        start = threading.Barrier(4)

        def work(who: int) -> None:
            try:
                start.wait()
                for step in range(15):
                    vault.update(
                        "Shared log", Revision(edit=BodyEdit(append=f"- thread {who} step {step}"))
                    )
                    vault.create(
                        Draft(f"Note {who}-{step}", f"Written by thread {who}, step {step}.\n")
                    )
                    assert vault.search("thread").total >= 1
                    assert vault.recall("Shared log").memory.title == "Shared log"
                    vault.list_memories(sort="usage")
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(who,)) for who in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert errors == []
        body = vault.get("Shared log").body
        assert all(f"- thread {w} step {s}\n" in body for w in range(4) for s in range(15))
        assert vault.list_memories(limit=1)[1] == 61
        assert vault.upkeep.sync().added == 0
        used = vault.usage()[vault.get("Shared log").id].access_count
    finally:
        vault.close()
    reopened = VaultService.open(settings)
    try:
        assert reopened.usage()[reopened.get("Shared log").id].access_count == used >= 60
    finally:
        reopened.close()
