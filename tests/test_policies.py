"""Policies per vault (`.memvault/policies.toml`): default TTLs by category, the opt-in
archiving of unused memories, the briefing's always-surface categories and stale threshold;
through the CLI and a real MCP session."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from memvault.cli import main
from memvault.core import clock

from .conftest import write_file
from .mcp_helpers import stdio_session, structured

OLD = "2020-01-01T00:00:00Z"


def policies(vault_dir: Path, text: str) -> None:
    """Write the vault's policies file."""
    write_file(vault_dir, ".memvault/policies.toml", text)


def run(vault_dir: Path, *args: str) -> tuple[int, str]:
    """A memvault command on the vault: its exit code and output."""
    result = CliRunner().invoke(main, ["--vault", str(vault_dir), *args])
    return result.exit_code, result.output


def old_note(vault_dir: Path, path: str, title: str) -> None:
    """A memory made, changed and reviewed long ago (its file's time too)."""
    file = write_file(
        vault_dir,
        path,
        f"---\ntitle: {title}\ncreated_at: {OLD}\nupdated_at: {OLD}\nlast_reviewed: {OLD}\n"
        f"---\n{title}.\n",
    )
    os.utime(file, (1_577_836_800, 1_577_836_800))


def test_a_category_ttl_sets_new_memories_to_expire(vault_dir: Path) -> None:
    policies(vault_dir, "[ttl_days]\nsession = 90\n")
    code, out = run(vault_dir, "session-notes", "--summary", "Tidied up.", "--json")
    assert code == 0, out
    session = json.loads(run(vault_dir, "read", json.loads(out)["id"], "--format", "json")[1])
    days = -(clock.days_since(session["expires_at"]) or 0)
    assert 89.9 < days <= 90
    run(vault_dir, "write", "--title", "Keep", "--category", "decision", "Kept for good.")
    run(vault_dir, "write", "--title", "Short", "--category", "session", "--ttl-days", "2", "x")
    assert json.loads(run(vault_dir, "read", "keep", "--format", "json")[1])["expires_at"] is None
    short = json.loads(run(vault_dir, "read", "short", "--format", "json")[1])
    assert -(clock.days_since(short["expires_at"]) or 0) <= 2


def test_archiving_unused_memories_is_opt_in(vault_dir: Path) -> None:
    old_note(vault_dir, "pattern/old.md", "Old pattern")
    write_file(vault_dir, "pattern/fresh.md", "# Fresh pattern\n\nUsed today.\n")
    assert "archived" not in run(vault_dir, "sync")[1]
    assert (vault_dir / "pattern/old.md").exists()
    policies(vault_dir, "archive_unused_days = 30\n")
    code, out = run(vault_dir, "sync")
    assert code == 0 and "archive/pattern/old.md" in out
    assert (vault_dir / "archive/pattern/old.md").exists()
    assert (vault_dir / "pattern/fresh.md").exists()


def test_a_bad_policies_file_is_one_clear_line(vault_dir: Path) -> None:
    policies(vault_dir, "stale_days = -3\n")
    code, out = run(vault_dir, "list")
    assert code == 1 and "stale_days must be a number of days above 0, not -3" in out
    policies(vault_dir, "stale_dayz = 3\n")
    assert "unknown key 'stale_dayz'" in run(vault_dir, "list")[1]
    policies(vault_dir, "stale_days = \n")
    assert "cannot read the policies" in run(vault_dir, "list")[1]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.processes
@pytest.mark.anyio
async def test_the_briefing_follows_the_vaults_policies(vault_dir: Path) -> None:
    policies(vault_dir, 'always = ["decision"]\nstale_days = 10000\n')
    old_note(vault_dir, "decision/db.md", "Use Postgres")
    old_note(vault_dir, "gotcha/push.md", "Never force-push")
    async with stdio_session(vault_dir) as session:
        briefing = structured(await session.call_tool("get_context", {}))
    sections = {item["section"] for item in briefing["items"]}
    assert "Always (decision)" in sections and "Always (gotcha)" not in sections
    assert not any(item["stale"] for item in briefing["items"])
    code, out = run(vault_dir, "--stale-days", "30", "--always", "gotcha", "context", "--json")
    assert code == 0, out
    items = json.loads(out)["items"]
    assert {i["section"] for i in items} >= {"Always (gotcha)"}
    assert all(i["stale"] for i in items)
