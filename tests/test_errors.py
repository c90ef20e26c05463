"""Every failure is one line with the reason and the next step, through a real MCP session and
the CLI: no traceback, no bare "Error executing tool X", no pydantic text with links."""

from __future__ import annotations

import subprocess
from functools import partial
from pathlib import Path

import pytest

from memvault.workers import START_METHOD_ENV

from .conftest import patience, write_file
from .mcp_helpers import MEMVAULT, server_env, stdio_session, structured, tool_error
from .test_cli import run

pytestmark = pytest.mark.anyio

BROKEN = "---\ntitle: [unclosed\n---\nA body under broken YAML.\n"
HUGE = 2**63


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def one_line_with(text: str, *parts: str) -> None:
    """`text` is one line naming the reason, and not the SDK's bare or pydantic's wording."""
    assert "\n" not in text.strip(), text
    assert "Traceback" not in text and "https://" not in text, text
    for part in parts:
        assert part in text, (part, text)


@pytest.mark.processes
async def test_tool_errors_give_the_reason_and_the_next_step(vault_dir: Path) -> None:
    write_file(vault_dir, "Broken.md", BROKEN)
    async with stdio_session(vault_dir) as session:
        await session.call_tool("write_mem", {"title": "Kept", "content": "x"})

        error = partial(tool_error, session)

        one_line_with(
            await error("edit_mem", {"id": "Broken", "append": "more"}),
            "Broken.md has frontmatter memvault cannot parse",
            "fix the YAML",
        )
        one_line_with(
            await error("write_mem", {"title": "Long", "content": "x", "ttl_days": 1e7}),
            "ttl_days must be more than 0 and at most 36525",
        )
        for tool, args in [
            ("edit_mem", {"id": "Ke\x00pt", "append": "more"}),
            ("delete_mem", {"id": "Ke\x00pt"}),
        ]:
            one_line_with(await error(tool, args), "holds a NUL character", "pass a memory's id")
        one_line_with(
            await error("read_mem", {"id": "Kept"}),
            "read_mem has no parameter 'id' (did you mean 'identifier'?)",
        )
        one_line_with(
            await error("read_mem", {}),
            "invalid arguments: identifier: Field required",
            "input schema",
        )
        one_line_with(await error("read_mem", {"identifier": "x" * 5000}), "no memory 'xxx")
        listed = structured(await session.call_tool("list_mem", {"offset": HUGE}))
        assert (listed["items"], listed["total"]) == ([], 2)
    assert (vault_dir / "Broken.md").read_text() == BROKEN


def test_cli_errors_are_one_line_without_a_traceback(vault_dir: Path) -> None:
    write_file(vault_dir, "Broken.md", BROKEN)
    code, out, err = run(vault_dir, "edit", "Broken", "--append", "x")
    assert (code, out) == (1, "")
    one_line_with(err, "error: Broken.md has frontmatter memvault cannot parse", "fix the YAML")
    code, _, err = run(vault_dir, "write", "--title", "Long", "--ttl-days", "1e7", "x")
    assert code == 1
    one_line_with(err, "error: --ttl-days must be more than 0 and at most 36525")
    for command in ("list", "search"):
        code, out, _ = run(
            vault_dir, command, *(["A"] if command == "search" else []), "--offset", str(HUGE)
        )
        assert code == 0, out
    assert (vault_dir / "Broken.md").read_text() == BROKEN


@pytest.mark.processes
def test_a_bad_start_method_is_one_line_at_start(vault_dir: Path) -> None:
    started = subprocess.run(
        [*MEMVAULT, "--vault", str(vault_dir), "serve"],
        env={**server_env(), START_METHOD_ENV: "teleport"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=patience(60),
    )
    assert (started.returncode, started.stdout) == (1, "")
    one_line_with(started.stderr, "error: MEMVAULT_START_METHOD='teleport' is not a start method")
