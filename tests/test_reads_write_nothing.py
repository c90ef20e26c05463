"""Reads write nothing: every read command and read tool leaves each file of the vault byte for
byte as it was, even when upkeep is due (an expired note, a rename a crash cut short). Only
upkeep itself writes: the server's start and `memvault sync`.

Compared: every file and folder under the vault, dot-folders included, except the SQLite index
(`.memvault/index.sqlite3*`, derived state that counts uses) and the lock file
(`.memvault/lock`), which are not content."""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import ClientSession

from memvault.cli import main
from memvault.config import Settings
from memvault.core import clock
from memvault.core.drafts import Draft, Revision
from memvault.features.briefing import build_briefing
from memvault.features.export_import import export_records
from memvault.service.vault import VaultService

from . import mcp_helpers
from .conftest import patience, write_file
from .mcp_helpers import stdio_session, text_of

# A vault's content: each file's relative path -> its bytes; each folder's path + "/" -> b"".
Snapshot = dict[str, bytes]

NOT_CONTENT = (".memvault/index.sqlite3", ".memvault/lock")

OUTAGE = """\
---
title: Payments outage
tags: [payments]
expires_at: 2001-01-01T00:00:00Z
---
Payments are down; retry after [[deploy-order]].
"""

HAND = "See [[old-name|the renamed note]] and [[deploy-order]].\n"


def snapshot(root: Path) -> Snapshot:
    """Every file (path -> bytes) and folder (path/ -> b"") under `root`, dot-folders too."""
    files: Snapshot = {}
    for folder, subfolders, names in os.walk(root):
        here = Path(folder).relative_to(root).as_posix()
        prefix = "" if here == "." else f"{here}/"
        for name in subfolders:
            files[f"{prefix}{name}/"] = b""
        for name in names:
            relative = f"{prefix}{name}"
            if not relative.startswith(NOT_CONTENT):
                files[relative] = (Path(folder) / name).read_bytes()
    return files


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    """What differs between two snapshots, one line per path: added, removed or changed."""
    lines = [f"added {path}" for path in sorted(after.keys() - before.keys())]
    lines += [f"removed {path}" for path in sorted(before.keys() - after.keys())]
    lines += [
        f"changed {path}"
        for path in sorted(before.keys() & after.keys())
        if before[path] != after[path]
    ]
    return lines


def journal(root: Path) -> list[Path]:
    folder = root / ".memvault" / "journal"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def run(vault: Path, *args: str) -> tuple[int, str]:
    """`memvault --vault VAULT ARGS...`: its exit code, and its stdout and stderr together."""
    result = CliRunner().invoke(main, ["--vault", str(vault), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout + result.stderr


@pytest.fixture
def upkeep_due(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A vault where upkeep is due: notes linked to each other, a rename of `old-name` to
    `new-name` that a crash cut short (its journal entry waits, hand.md still links to
    [[old-name]]), and ops/outage.md, written by hand, expired since 2001."""
    vault = VaultService.open(Settings(vault=vault_dir))
    try:
        vault.create(
            Draft(
                "Deploy order", "Migrations run before the deploy.\n", ["deploy"], category="gotcha"
            )
        )
        vault.create(Draft("Release process", "Tag, build, then deploy.\n", ["release"]))
        vault.link("Release process", "Deploy order")
        vault.create(Draft("Old name", "A note about to get a new name.\n"))
        write_file(vault_dir, "hand.md", HAND)
        write_file(vault_dir, ".obsidian/workspace.json", '{"active": "hand.md"}\n')
        vault.upkeep.sync()

        def crash(self: object, entry: object) -> None:
            raise KeyboardInterrupt("killed mid-rename")

        with monkeypatch.context() as patch:
            patch.setattr("memvault.writes.links.LinkService._retarget", crash)
            with pytest.raises(KeyboardInterrupt):
                vault.update("old-name", Revision(title="New name"))
    finally:
        vault.close()
    write_file(vault_dir, "ops/outage.md", OUTAGE)

    assert (vault_dir / "new-name.md").exists() and not (vault_dir / "old-name.md").exists()
    assert (vault_dir / "hand.md").read_text() == HAND
    assert len(journal(vault_dir)) == 1
    return vault_dir


# -- the CLI: each read command, on its own, on a vault with upkeep due ---------------------

CLI_READS = [
    pytest.param(["search", "deploy"], 0, "Deploy order", id="search"),
    pytest.param(["read", "new-name"], 0, "title: New name", id="read"),
    pytest.param(
        ["read", "Release process", "--format", "plain"], 0, "Tag, build", id="read-plain"
    ),
    pytest.param(
        ["read", "ops/outage.md", "--format", "json"], 0, "Payments outage", id="read-json"
    ),
    pytest.param(["list"], 0, "Deploy order", id="list"),
    pytest.param(["list", "--archived"], 0, "No memories.", id="list-archived"),
    pytest.param(["stats"], 0, "memories", id="stats"),
    pytest.param(["check"], 1, "broken link: hand.md:1: [[old-name]]", id="check"),
    pytest.param(["export"], 0, "Payments outage", id="export-json"),
    pytest.param(["export", "--format", "jsonl"], 0, "Payments outage", id="export-jsonl"),
    pytest.param(["context"], 0, "Deploy order", id="context"),
]


@pytest.mark.parametrize(("args", "exit_code", "shown"), CLI_READS)
def test_a_read_command_leaves_every_file_as_it_was(
    upkeep_due: Path, args: list[str], exit_code: int, shown: str
) -> None:
    before = snapshot(upkeep_due)

    code, output = run(upkeep_due, *args)

    assert code == exit_code, output
    assert shown in output
    written = changes(before, snapshot(upkeep_due))
    assert not written, f"memvault {' '.join(args)} wrote {written}"
    assert (upkeep_due / "hand.md").read_text() == HAND
    assert len(journal(upkeep_due)) == 1
    assert (upkeep_due / "ops" / "outage.md").exists()


# -- MCP: the server's start does the upkeep; the read tools after it write nothing ---------

WINDOW = """\
---
id: maintenance-window-2026
title: Maintenance window
expires_at: {expires_at}
---
The database is read-only tonight; see [[deploy-order]].
"""

# (tool name or resource URI, arguments, text the answer shows)
MCP_READS: list[tuple[str, dict[str, object], str]] = [
    ("read_mem", {"identifier": "maintenance-window"}, "read-only tonight"),
    ("read_mem", {"identifier": "maintenance-window", "format": "plain"}, "read-only tonight"),
    ("read_mem", {"identifier": "maintenance-window", "format": "json"}, "expires_at"),
    ("read_mem", {"identifier": "new-name"}, "New name"),
    ("read_mem", {"identifier": "archive/ops/outage.md", "format": "json"}, "Payments outage"),
    ("search_mem", {"query": "deploy"}, "Deploy order"),
    ("list_mem", {}, "Deploy order"),
    ("list_mem", {"archived": True}, "Payments outage"),
    ("get_context", {}, "Deploy order"),
    ("export_mem", {}, "Deploy order"),
    ("export_mem", {"include_archived": True}, "Payments outage"),
    ("get_current_date", {}, "UTC"),
    ("get_current_date", {"format": "locale"}, "UTC"),
    ("memvault://context", {}, "Deploy order"),
    ("memvault://recent", {}, "Release process"),
    ("memvault://memory/maintenance-window-2026", {}, "read-only tonight"),
    ("memvault://memory/new-name", {}, "title: New name"),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def ask(session: ClientSession, name: str, arguments: dict[str, object]) -> str:
    """Call a tool, or read a resource when `name` is a memvault:// URI; the answer's text."""
    if name.startswith("memvault://"):
        contents = (await session.read_resource(name)).contents
        return "".join(getattr(part, "text", "") for part in contents)
    result = await session.call_tool(name, arguments)
    assert not result.is_error, text_of(result)
    return text_of(result)


def expiring_soon(seconds: int) -> tuple[str, float]:
    """An `expires_at` (whole seconds) at least `seconds` from now, and when it passes."""
    moment = clock.now().replace(microsecond=0) + dt.timedelta(seconds=seconds + 1)
    return clock.iso(moment), moment.timestamp()


@pytest.mark.processes
@pytest.mark.anyio
async def test_read_tools_and_resources_leave_every_file_as_it_was(upkeep_due: Path) -> None:
    # A second note that expires a few seconds after the server has started: when the reads
    # below run it is expired but not archived yet, as between two starts of a long session.
    expires_at, expired = expiring_soon(round(patience(4)))
    write_file(upkeep_due, "ops/maintenance-window.md", WINDOW.format(expires_at=expires_at))

    async with stdio_session(upkeep_due) as session:
        # Starting is upkeep: the rename is finished and the note expired in 2001 archived.
        assert (upkeep_due / "hand.md").read_text() == HAND.replace("old-name", "new-name")
        assert journal(upkeep_due) == []
        assert (upkeep_due / "archive" / "ops" / "outage.md").exists()
        assert (upkeep_due / "ops" / "maintenance-window.md").exists(), "slow start: expired"
        before = snapshot(upkeep_due)
        await anyio.sleep(max(0.0, expired - time.time()) + 0.5)
        index = Settings(vault=upkeep_due).index_file
        synced = index_files(index)
        # Expired now: gone from lists at once, but still in its folder until the next upkeep.
        assert "Maintenance window" not in await ask(session, "list_mem", {})

        for name, arguments, shown in MCP_READS:
            assert shown in await ask(session, name, arguments), (name, arguments)
            written = changes(before, snapshot(upkeep_due))
            assert not written, f"{name} {arguments} wrote {written}"
            assert index_files(index) == synced, f"{name} {arguments} wrote to the index"

    # Nor does the server write anything when it stops.
    assert changes(before, snapshot(upkeep_due)) == []


# -- the positive control: `memvault sync` is upkeep, and says what it did -------------------


def test_sync_finishes_the_rename_and_archives_the_expired_note(upkeep_due: Path) -> None:
    before = snapshot(upkeep_due)
    [entry] = journal(upkeep_due)

    code, output = run(upkeep_due, "sync")

    assert code == 0, output
    assert "finished renaming old-name.md to new-name.md" in output.splitlines()
    assert "archived (expired): archive/ops/outage.md" in output.splitlines()
    assert (upkeep_due / "hand.md").read_text() == HAND.replace("old-name", "new-name")
    assert journal(upkeep_due) == []
    assert not (upkeep_due / "ops" / "outage.md").exists()
    assert (
        (upkeep_due / "archive" / "ops" / "outage.md")
        .read_bytes()
        .endswith(b"Payments are down; retry after [[deploy-order]].\n")
    )
    # Those are the only files it wrote (the folders it made or emptied aside).
    assert [line for line in changes(before, snapshot(upkeep_due)) if not line.endswith("/")] == [
        "added archive/ops/outage.md",
        f"removed .memvault/journal/{entry.name}",
        "removed ops/outage.md",
        "changed hand.md",
    ]


# -- the index: a read opens no write transaction; uses are counted in memory ----------------


def index_files(index: Path) -> dict[str, bytes]:
    """The index's SQLite file and its write-ahead log, byte for byte: what any write changes."""
    return {p.name: p.read_bytes() for p in (index, Path(f"{index}-wal")) if p.exists()}


def two_notes(vault_dir: Path) -> Settings:
    """A vault with two notes and an index in step with them; its settings."""
    settings = Settings(vault=vault_dir)
    vault = VaultService.open(settings)
    try:
        vault.create(
            Draft("Deploy order", "Migrations run before the deploy.\n", category="gotcha")
        )
        vault.create(Draft("Release process", "Tag, build, then ship.\n", ["release"]))
    finally:
        vault.close()
    return settings


def test_reads_leave_the_index_as_it_was_and_count_uses_in_memory(vault_dir: Path) -> None:
    settings = two_notes(vault_dir)
    vault = VaultService.open(settings)
    try:
        before = index_files(settings.index_file)

        assert [hit.title for hit in vault.search("migrations").results] == ["Deploy order"]
        for _ in range(3):
            assert vault.search("ship").results[0].title == "Release process"
        assert vault.recall("deploy ordr").memory.title == "Deploy order"
        assert "Deploy order" in build_briefing(vault).text
        exported = {r["title"]: r["usage"] for r in export_records(vault)}
        listed = vault.list_memories(sort="usage")[0]
        counted = {memory_id: u.access_count for memory_id, u in vault.usage().items()}
        never_used = vault.stats().never_used

        assert index_files(settings.index_file) == before, "a read wrote to the index"
    finally:
        vault.close()
    # The uses a read returns include those not saved yet (and order a listing by use), and
    # closing saves them.
    assert [(row.title, row.access_count) for row in listed] == [
        ("Release process", 4),
        ("Deploy order", 3),
    ]
    assert exported["Deploy order"]["access_count"] == 3
    assert never_used == []
    reopened = VaultService.open(settings)
    try:
        assert {i: u.access_count for i, u in reopened.usage().items()} == counted
        assert sorted(counted.values()) == [3, 4]
    finally:
        reopened.close()


def test_reads_run_while_another_process_holds_the_index_for_writing(vault_dir: Path) -> None:
    settings = two_notes(vault_dir)
    vault = VaultService.open(settings)
    writer = sqlite3.connect(settings.index_file, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # as a long reindex in another process does

        assert vault.search("migrations").total == 1
        assert vault.recall("Deploy order").memory.title == "Deploy order"
        assert "Deploy order" in build_briefing(vault).text

        writer.execute("ROLLBACK")
    finally:
        writer.close()
        vault.close()
    reopened = VaultService.open(settings)
    try:
        assert sorted(u.access_count for u in reopened.usage().values()) == [1, 3]
    finally:
        reopened.close()


@pytest.mark.processes
def test_a_search_on_a_full_disk_answers_and_keeps_its_uses_in_memory(vault_dir: Path) -> None:
    settings = two_notes(vault_dir)
    # The search runs where no file can grow (RLIMIT_FSIZE 0), as on a full disk: the uses
    # cannot be saved. A connection kept open here keeps the index's shared-memory file, which
    # a reader needs, from being made again.
    script = (
        "import resource, signal, sys;"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN);"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0));"
        "from memvault.cli import main;"
        "sys.argv = ['memvault'] + sys.argv[1:];"
        "main()"
    )
    keeper = sqlite3.connect(settings.index_file)
    try:
        keeper.execute("SELECT count(*) FROM notes").fetchone()
        done = subprocess.run(
            [sys.executable, "-c", script, "--vault", str(vault_dir), "search", "migrations"],
            capture_output=True,
            text=True,
            timeout=patience(60),
        )
    finally:
        keeper.close()

    assert done.returncode == 0, done.stderr
    assert "Deploy order" in done.stdout
    [line] = [line for line in done.stderr.splitlines() if "'migrations'." not in line]
    assert "usage counts kept in memory: cannot save them" in line


def raw_search(server: subprocess.Popen[str], query: str) -> str:
    """Initialize a stdio server with raw JSON-RPC lines and call search_mem; its text."""
    assert server.stdin and server.stdout
    messages = mcp_helpers.raw_call("search_mem", {"query": query})
    for message in messages:
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
    replies = [json.loads(server.stdout.readline()) for _ in range(2)]
    return str(replies[1]["result"]["content"][0]["text"])


@pytest.mark.processes
@pytest.mark.anyio
async def test_uses_a_server_counted_are_saved_when_it_stops(vault_dir: Path) -> None:
    settings = two_notes(vault_dir)

    async with stdio_session(vault_dir) as session:  # stops when its input closes
        assert "Deploy order" in await ask(session, "search_mem", {"query": "migrations"})
    assert uses_of(settings) == [1]
    with mcp_helpers.http_server(vault_dir, "--no-watch") as (url, _process):  # stopped by SIGTERM
        async with mcp_helpers.http_session(url) as session:
            assert "Deploy order" in await ask(
                session, "read_mem", {"identifier": "gotcha/deploy-order"}
            )
    assert uses_of(settings) == [2]
    with subprocess.Popen(  # over stdio, stopped by SIGTERM
        [*mcp_helpers.MEMVAULT, "--vault", str(vault_dir), "serve", "--no-watch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=mcp_helpers.server_env(),
    ) as server:
        assert "Deploy order" in raw_search(server, "migrations")
        server.terminate()
        assert server.wait(timeout=patience(30)) == 0

    assert uses_of(settings) == [3]


def uses_of(settings: Settings) -> list[int]:
    """The use counts saved in a vault's index."""
    vault = VaultService.open(settings)
    try:
        return [u.access_count for u in vault.usage().values()]
    finally:
        vault.close()
