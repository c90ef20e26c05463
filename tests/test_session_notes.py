"""Session notes keep what they are given: every list under its heading, free properties as
frontmatter keys, and the briefing shows the summary's first sentence; through the SDK client
and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from memvault.cli import main

from .mcp_helpers import stdio_session, structured, tool_error


def frontmatter(path: Path) -> dict[str, object]:
    """The YAML between a file's --- lines."""
    return dict(yaml.safe_load(path.read_text().split("---\n")[1]))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.processes
@pytest.mark.anyio
async def test_session_notes_keep_every_field_and_brief_with_the_summary(vault_dir: Path) -> None:
    async with stdio_session(vault_dir) as session:
        saved = structured(
            await session.call_tool(
                "save_session_notes",
                {
                    "summary": "Paired on the flaky deploy. It was the migration order.",
                    "highlights": ["found the race"],
                    "decisions": ["migrations run first"],
                    "next_steps": ["add a canary"],
                    "open_questions": ["do we need a lock?"],
                    "properties": {"flow": "focused", "tone": "calm", "energy": 4},
                },
            )
        )
        briefing = structured(await session.call_tool("get_context", {}))["briefing"]
        assert f"- {saved['title']} (session/" in briefing
        assert "Paired on the flaky deploy." in briefing
        assert "Summary" not in briefing and "migration order" not in briefing
        refused = await tool_error(
            session, "save_session_notes", {"summary": "x", "properties": {"id": "mine"}}
        )
        assert "property 'id' is reserved" in refused
    note = vault_dir / saved["path"]
    kept = frontmatter(note)
    assert {key: kept[key] for key in ("flow", "tone", "energy")} == {
        "flow": "focused",
        "tone": "calm",
        "energy": 4,
    }
    text = note.read_text()
    assert "## Open questions\n- do we need a lock?\n" in text
    assert "## Decisions\n- migrations run first\n" in text


def test_the_cli_takes_open_questions_and_properties(vault_dir: Path) -> None:
    runner = CliRunner()
    base = ["--vault", str(vault_dir), "session-notes", "--summary", "Tidied the docs."]
    result = runner.invoke(
        main,
        [*base, "--open-question", "move the FAQ?", "--property", "flow=slow", "--json"],
    )
    assert result.exit_code == 0, result.output
    note = vault_dir / json.loads(result.output)["path"]
    assert frontmatter(note)["flow"] == "slow"
    assert "## Open questions\n- move the FAQ?\n" in note.read_text()
    bad = runner.invoke(main, [*base, "--property", "flow"])
    assert bad.exit_code == 2 and "'flow' is not KEY=VALUE" in bad.output
