"""Errors and texts in the caller's words: CLI options on the command line, tool parameters
over MCP, counts with their plurals, through the CLI and a real MCP session."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from .conftest import write_file
from .mcp_helpers import stdio_session, structured, text_of, tool_error
from .test_cli import run

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_cli_errors_name_cli_options_and_commands(vault_dir: Path) -> None:
    assert run(vault_dir, "write", "--title", "Deploy order", "Migrations first, twice.")[0] == 0
    assert run(vault_dir, "read", "nothing-here")[2] == (
        "error: no memory 'nothing-here'; use `memvault search` to find memories by what they say\n"
    )
    code, _, err = run(vault_dir, "write", "--title", "Deploy order", "Other text.")
    assert code == 1
    assert (
        "edit it with `memvault edit`, replace it with --on-exists replace, or pass "
        "--allow-duplicate to keep both"
    ) in err
    assert "allow_duplicate" not in err and "edit_mem" not in err
    code, _, err = run(vault_dir, "edit", "Deploy order", "--find", "first", "--replace", "x")
    assert code == 0
    code, _, err = run(vault_dir, "edit", "Deploy order", "--find", "i", "--replace", "y")
    assert code == 1 and "pass --expected-count 3 to replace all, or make --find longer" in err
    code, _, err = run(vault_dir, "edit", "Deploy order", "--find", "x")
    assert code == 1 and "--find needs --replace" in err
    code, _, err = run(vault_dir, "write", "--title", "T", "--ttl-days", "1e7", "x")
    assert code == 1 and err.startswith("error: --ttl-days must be more than 0")
    code, _, err = run(vault_dir, "write", "--title", "T", "--expires-at", "soon", "x")
    assert code == 1 and err.startswith("error: --expires-at 'soon' is not an ISO date")


def test_cli_usage_errors_are_one_line_with_where_the_help_is(vault_dir: Path) -> None:
    for args, line in [
        (
            ["search", "x", "--limit", "0"],
            "Invalid value for '--limit': 0 is not in the range 1<=x<=1000"
            " (see `memvault search --help`)",
        ),
        (["write", "x"], "Missing option '--title' (see `memvault write --help`)"),
        (
            ["--stale-days", "-1", "list"],
            "Invalid value for '--stale-days': -1.0 is not in the range x>0"
            " (see `memvault --help`)",
        ),
    ]:
        code, out, err = run(vault_dir, *args)
        assert (code, out, err) == (2, "", f"error: {line}\n")


def test_a_page_of_the_list_says_which_of_how_many_it_shows(vault_dir: Path) -> None:
    for n in range(5):
        write_file(vault_dir, f"note-{n}.md", f"# Note {n}\n\nText {n}.\n")
    assert run(vault_dir, "list", "--limit", "1")[2] == "5 memories; showing 1 of 5.\n"
    assert run(vault_dir, "list", "--limit", "2", "--offset", "2")[2] == (
        "5 memories; showing 3-4 of 5.\n"
    )
    assert run(vault_dir, "search", "text", "--limit", "3")[2] == (
        "5 memories match 'text'; showing 3 of 5.\nMore match: --offset 3.\n"
    )


@pytest.mark.processes
async def test_tool_errors_name_tool_parameters(vault_dir: Path) -> None:
    async with stdio_session(vault_dir) as session:
        error = partial(tool_error, session)
        missing = await error("read_mem", {"identifier": "nothing-here"})
        assert missing.endswith(
            "no memory 'nothing-here'; use search_mem to find memories by what they say"
        )
        await session.call_tool("write_mem", {"title": "Deploy order", "content": "a b a"})
        duplicate = await error("write_mem", {"title": "Deploy order", "content": "Other."})
        assert (
            "edit it with edit_mem, replace it with on_exists=replace, or pass "
            "allow_duplicate=true to keep both"
        ) in duplicate
        assert "--allow-duplicate" not in duplicate
        twice = await error("edit_mem", {"id": "Deploy order", "find": "a", "replace": "c"})
        assert "pass expected_count=2 to replace all, or make find longer" in twice
        expiry = await error("write_mem", {"title": "T", "content": "x", "expires_at": "soon"})
        assert "expires_at 'soon' is not an ISO date" in expiry


@pytest.mark.processes
async def test_invalid_arguments_are_one_readable_line_per_field(vault_dir: Path) -> None:
    async with stdio_session(vault_dir) as session:
        result = await session.call_tool("write_mem", {"title": 5, "tags": "a"})
        assert result.is_error
        lines = text_of(result).splitlines()
        assert lines == [
            "Error executing tool write_mem: invalid arguments (see the tool's input schema):",
            "- title: Input should be a valid string",
            "- content: Field required",
            "- tags: Input should be a valid list",
        ]
        one = await tool_error(session, "search_mem", {"query": "x", "limit": 0})
        assert "\n" not in one and "https://" not in one
        assert one.endswith(
            "invalid arguments: limit: Input should be greater than or equal to 1"
            " (see the tool's input schema)"
        )


def test_cli_counts_and_times_read_as_a_person_says_them(vault_dir: Path) -> None:
    assert run(vault_dir, "--create", "list")[2] == "No memories.\n"
    assert run(vault_dir, "search", "retries")[2] == "No memories match 'retries'.\n"
    write_file(vault_dir, "retries.md", "# Payment retries\n\nRetries back off.\n")
    _, out, err = run(vault_dir, "list")
    assert err == "1 memory.\n"
    assert out == "Payment retries (retries, just now, never used)\n"
    assert "reviewed unknown" not in out and "0x" not in out
    assert run(vault_dir, "search", "retries")[2] == "1 memory matches 'retries'.\n"
    run(vault_dir, "write", "--title", "Retry budget", "Retries cost money.")
    assert run(vault_dir, "search", "retries", "--limit", "1")[2] == (
        "2 memories match 'retries'; showing 1 of 2.\nMore match: --offset 1.\n"
    )
    assert run(vault_dir, "list", "--limit", "1")[2] == "2 memories; showing 1 of 2.\n"
    assert run(vault_dir, "list", "--offset", "1")[2] == "2 memories; showing number 2 of 2.\n"
    assert run(vault_dir, "list", "--offset", "5")[2] == "2 memories; none past 5.\n"
    assert run(vault_dir, "stats")[1].startswith("2 memories, ")
    assert run(vault_dir, "reindex")[1].startswith("indexed 2 notes in ")
    assert run(vault_dir, "link", "Retry budget", "Payment retries")[0] == 0
    assert run(vault_dir, "rm", "--yes", "Payment retries")[1] == (
        "deleted retries.md; links to it removed from 1 memory\n"
    )
    assert run(vault_dir, "rm", "--yes", "Retry budget")[1] == (
        "deleted retry-budget.md; no other memory linked to it\n"
    )
    assert run(vault_dir, "sync")[1].endswith("s: no changes\n")


@pytest.mark.processes
async def test_tool_texts_count_as_a_person_says_them(vault_dir: Path) -> None:
    write_file(vault_dir, "retries.md", "# Payment retries\n\nRetries back off.\n")
    async with stdio_session(vault_dir) as session:
        assert text_of(await session.call_tool("search_mem", {"query": "nothing"})) == (
            "No memories match 'nothing'."
        )
        listed = text_of(await session.call_tool("list_mem", {}))
        assert listed.startswith("1 memory.\n- Payment retries (") and "never used" in listed
        read = structured(await session.call_tool("read_mem", {"identifier": "retries"}))
        assert read["reviewed"] == "never reviewed"
        await session.call_tool("write_mem", {"title": "Retry budget", "content": "Money."})
        await session.call_tool(
            "link_mem", {"source_id": "Retry budget", "target_id": "Payment retries"}
        )
        deleted = text_of(await session.call_tool("delete_mem", {"id": "Payment retries"}))
        assert deleted.endswith("; links to it removed from 1 memory.")
        notes = text_of(await session.call_tool("save_session_notes", {"summary": "Did x."}))
        assert notes.endswith("linked with no other memory.")


@pytest.mark.processes
async def test_the_memory_resource_takes_a_path_and_says_not_found(vault_dir: Path) -> None:
    write_file(vault_dir, "decision/payment-retries.md", "# Payment retries\n\nThree.\n")
    async with stdio_session(vault_dir) as session:
        for uri in (
            "memvault://memory/decision/payment-retries.md",
            "memvault://memory/decision%2Fpayment-retries.md",
            "memvault://memory/payment-retries",
        ):
            [content] = (await session.read_resource(uri)).contents
            assert content.text == "# Payment retries\n\nThree.\n", uri  # type: ignore[union-attr]
        with pytest.raises(MCPError) as missing:
            await session.read_resource("memvault://memory/decision/nothing.md")
        assert missing.value.error.code == INVALID_PARAMS
        assert missing.value.error.message.startswith("no memory 'decision/nothing.md'")
        templates = (await session.list_resource_templates()).resource_templates
        assert "memvault://memory/{+id}" in [t.uri_template for t in templates]
