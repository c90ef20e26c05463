"""Worker processes: forked where that is safe, spawned elsewhere (macOS, Windows), with the
same results. These tests force the spawn method, so the portable path runs on every machine."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memvault import workers
from memvault.config import Settings
from memvault.core.records import Filter
from memvault.errors import Invalid
from memvault.service.vault import VaultService

from .conftest import patience, write_file
from .mcp_helpers import MEMVAULT, server_env, stdio_session, structured

NOTES = 2100  # above the indexer's PARALLEL_FROM, so a rebuild uses worker processes


def fill(vault_dir: Path) -> None:
    for i in range(NOTES):
        write_file(
            vault_dir,
            f"f{i % 7}/note-{i}.md",
            f"# Note {i}\n[[note-{(i + 1) % NOTES}]] #t{i % 3}\n",
        )


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_rebuild_gives_the_same_index_with_either_start_method(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    fill(vault_dir)
    monkeypatch.setenv(workers.START_METHOD_ENV, method)
    assert workers.start_method() == method
    vault = VaultService.open(Settings(vault=vault_dir), fill=False)
    summary = vault.upkeep.rebuild()
    assert (summary.notes, summary.links, summary.unresolved_links) == (NOTES, NOTES, 0)
    assert vault.list_memories(Filter(tags=("t1",)))[1] == 700
    assert vault.search("Note 1234").results[0].path == "f2/note-1234.md"
    vault.close()


def test_an_unknown_start_method_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(workers.START_METHOD_ENV, "teleport")
    with pytest.raises(Invalid, match="MEMVAULT_START_METHOD='teleport' is not a start method"):
        workers.start_method()


@pytest.mark.processes
@pytest.mark.anyio
async def test_the_server_starts_with_spawned_workers_and_sees_edits_made_while_down(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(vault_dir)
    VaultService.open(Settings(vault=vault_dir)).close()
    write_file(vault_dir, "f1/written-while-down.md", "# Written while down\nplatypus\n")
    (vault_dir / "f2" / "note-2.md").unlink()
    monkeypatch.setenv(workers.START_METHOD_ENV, "spawn")
    async with stdio_session(vault_dir) as session:
        found = structured(await session.call_tool("search_mem", {"query": "platypus"}))
        listed = structured(await session.call_tool("list_mem", {"limit": 1}))
    assert [hit["path"] for hit in found["results"]] == ["f1/written-while-down.md"]
    assert listed["total"] == NOTES


def children_of(parent: int) -> set[int]:
    """The live processes whose parent is `parent` (Linux: read from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and parent in alive_with_parent(int(entry.name)):
            found.add(int(entry.name))
    return found


def alive_with_parent(pid: int) -> set[int]:
    """{ppid} of a process that runs (not a zombie), else nothing."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return set()
    state, ppid = stat.rsplit(")", 1)[1].split()[:2]
    return set() if state in ("Z", "X") else {int(ppid)}


@pytest.mark.processes
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.skipif(workers.parallelism() == 0, reason="one core: a rebuild starts no worker")
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_parse_workers_end_when_their_reindex_is_killed(vault_dir: Path, method: str) -> None:
    for i in range(3 * NOTES):
        write_file(vault_dir, f"f{i % 7}/note-{i}.md", f"# Note {i}\n" + "words and more " * 200)
    reindex = subprocess.Popen(
        [*MEMVAULT, "--vault", str(vault_dir), "reindex"],
        env={**server_env(), workers.START_METHOD_ENV: method},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + patience(60)
    parsers: set[int] = set()
    while len(parsers) < 2 and reindex.poll() is None and time.monotonic() < deadline:
        parsers = children_of(reindex.pid)
        time.sleep(0.01)
    os.kill(reindex.pid, signal.SIGKILL)
    reindex.wait()
    assert parsers, "the reindex started no worker"
    deadline = time.monotonic() + patience(20)
    while any(alive_with_parent(pid) for pid in parsers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive_with_parent(pid) for pid in parsers)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
