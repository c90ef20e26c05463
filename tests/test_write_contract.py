"""Nothing is silently dropped or renamed on write (issue 15): reserved categories are refused
with a reason, tags Obsidian cannot hold are refused, and the CLI splits `--tag a,b`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from memvault.cli import main
from memvault.core.drafts import Draft, Revision
from memvault.service.vault import VaultService

from .conftest import write_file
from .mcp_helpers import stdio_session, structured, tool_error


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def run(vault: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--vault", str(vault), *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.processes
@pytest.mark.anyio
@pytest.mark.parametrize(
    ("category", "reason"),
    [
        # archive/ hid the note at once (it is where expired memories go)
        ("archive", "'archive' is refused: archive/ is where memvault moves expired memories"),
        ("Archive/ops", "'archive/ops' is refused: archive/ is where memvault moves expired"),
        # Windows cannot make these folders, so a vault synced there breaks
        ("con", "'con' is a name Windows keeps for a device"),
        ("ops/NUL", "'nul' is a name Windows keeps for a device"),
        ("LPT1", "'lpt1' is a name Windows keeps for a device"),
    ],
)
async def test_a_reserved_category_is_refused_with_a_reason(
    vault_dir: Path, category: str, reason: str
) -> None:
    async with stdio_session(vault_dir) as session:
        text = await tool_error(
            session, "write_mem", {"title": "Old plan", "content": "x", "category": category}
        )
        assert reason in text and "\n" not in text, text
        await session.call_tool("write_mem", {"title": "Plan", "content": "y", "category": "ops"})
        text = await tool_error(session, "edit_mem", {"id": "plan", "category": category})
        assert reason in text, text
        listed = structured(await session.call_tool("list_mem", {"archived": True}))
        assert listed["total"] == 0
        read = structured(await session.call_tool("read_mem", {"identifier": "plan"}))
        assert read["path"] == "ops/plan.md"
    code, _out, err = run(vault_dir, "write", "--title", "Old", "--category", category, "z")
    assert code == 1 and reason in err


def test_the_archive_keeps_working_for_expired_memories(vault: VaultService) -> None:
    """Upkeep still moves an expired memory to archive/, and a memory there can come back."""
    vault.create(
        Draft("Temporary outage", "Down till noon.", category="ops", expires_at="2020-01-01")
    )
    assert vault.upkeep.archive_expired() == ["archive/ops/temporary-outage.md"]
    assert vault.update("temporary-outage", Revision(tags=["outage"])).path == (
        "archive/ops/temporary-outage.md"
    )
    assert (
        vault.update("temporary-outage", Revision(category="ops")).path == "ops/temporary-outage.md"
    )


@pytest.mark.processes
@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tags", "problem"),
    [
        (["a,b"], "tag 'a,b' holds ',': give several tags as separate items"),
        (["machine learning"], "join the words with '-' ('machine-learning')"),
        (["2024"], "tag '2024' is all digits"),
        (["c++"], "tag 'c++' holds '+'; an Obsidian tag holds letters, digits, '_', '-' and '/'"),
        (["ops", "db:prod"], "tag 'db:prod' holds ':'"),
        (["ops/"], "tag 'ops/' has an empty part around '/'"),
    ],
)
async def test_tags_obsidian_cannot_hold_are_refused_on_write_and_edit(
    vault_dir: Path, tags: list[str], problem: str
) -> None:
    """Obsidian's rule (help.obsidian.md, Tags > Tag format): letters, numbers, underscore,
    hyphen and forward slash only; no spaces; at least one character that is not a number."""
    async with stdio_session(vault_dir) as session:
        text = await tool_error(
            session, "write_mem", {"title": "Tagged", "content": "x", "tags": tags}
        )
        assert problem in text and "\n" not in text, text
        await session.call_tool("write_mem", {"title": "Plain", "content": "y"})
        assert problem in await tool_error(session, "edit_mem", {"id": "plain", "tags": tags})
        read = structured(await session.call_tool("read_mem", {"identifier": "plain"}))
        assert read["tags"] == []
        assert structured(await session.call_tool("list_mem", {}))["total"] == 1


@pytest.mark.processes
@pytest.mark.anyio
async def test_tags_obsidian_holds_are_kept(vault_dir: Path) -> None:
    async with stdio_session(vault_dir) as session:
        tags = ["#ops", "ops/db", "y2024", "2024-q1", "café", "snake_case", "Ops"]
        written = structured(
            await session.call_tool("write_mem", {"title": "T", "content": "x", "tags": tags})
        )
        read = structured(await session.call_tool("read_mem", {"identifier": written["id"]}))
    assert read["tags"] == ["ops", "ops/db", "y2024", "2024-q1", "café", "snake_case"]


def test_the_cli_splits_tags_on_commas_and_spaces(vault_dir: Path) -> None:
    code, out, err = run(
        vault_dir, "write", "--title", "Deploy", "--tag", "a,b", "--tag", "c d, e", "--json", "x"
    )
    assert code == 0, err
    path = json.loads(out)["path"]
    assert "tags: [a, b, c, d, e]" in (vault_dir / path).read_text()
    code, _out, err = run(vault_dir, "edit", "Deploy", "--tag", "ops,db")
    assert code == 0, err
    code, out, _err = run(vault_dir, "read", "Deploy", "--format", "json")
    assert json.loads(out)["tags"] == ["ops", "db"]
    code, _out, err = run(vault_dir, "edit", "Deploy", "--tag", "c++")
    assert code == 1 and "tag 'c++' holds '+'" in err


def test_a_hand_written_tag_obsidian_cannot_hold_still_reads(vault: VaultService) -> None:
    """The rule applies to what memvault writes; a note's own frontmatter is read as it is."""
    write_file(vault.root, "legacy.md", "---\ntitle: Legacy\ntags: [a b, c++]\n---\nbody\n")
    vault.upkeep.sync()
    assert vault.get("legacy").tags == ["a b", "c++"]
    assert vault.update("legacy", Revision(title="Legacy note")).tags == ["a b", "c++"]


@pytest.mark.processes
@pytest.mark.anyio
async def test_the_memory_resource_takes_a_path_and_says_not_found(vault_dir: Path) -> None:
    async with stdio_session(vault_dir) as session:
        await session.call_tool(
            "write_mem",
            {"title": "Payment retries", "content": "Three times.", "category": "decision"},
        )
        file = (vault_dir / "decision" / "payment-retries.md").read_text()
        for uri in (
            "memvault://memory/decision/payment-retries.md",
            "memvault://memory/decision%2Fpayment-retries.md",
            "memvault://memory/payment-retries",
            "memvault://memory/Payment%20retries",
        ):
            read = await session.read_resource(uri)
            assert [getattr(c, "text", None) for c in read.contents] == [file], uri
        templates = (await session.list_resource_templates()).resource_templates
        assert "memvault://memory/{+id}" in [t.uri_template for t in templates]
        for missing in ("memvault://memory/ghost", "memvault://memory/decision/ghost.md"):
            with pytest.raises(MCPError) as caught:
                await session.read_resource(missing)
            assert caught.value.error.code == INVALID_PARAMS, missing  # not found, per SEP-2164
            assert "no memory" in caught.value.error.message
