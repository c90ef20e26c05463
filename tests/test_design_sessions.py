"""Scripted sessions of the designs memvault comes from, through the MCP SDK client against a
real server process: structured fields, key-value use, superseded knowledge, attribution."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .mcp_helpers import http_server, http_session, stdio_session, structured, text_of, tool_error

pytestmark = [pytest.mark.processes, pytest.mark.anyio]

# A coding session's problem, with a value of each kind Obsidian shows.
PROBLEM = {
    "repository": "acme/shop",
    "branch": "main",
    "files_modified": ["deploy.ts", "ci.yml"],
    "outcome": "success",
    "difficulty": 3,
    "tested": True,
    "seen_on": "2026-11-20",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_coding_session_stores_a_problem_and_its_solution_with_properties(
    vault_dir: Path,
) -> None:
    """(a) A problem with properties (repository, files_modified, outcome) and its solution;
    a where filter on the repository finds both, a list property matches by any element, and
    the designs' own call (categories, repository, the last two weeks) leaves out an older
    problem of the same repository."""
    (vault_dir / "problem").mkdir(parents=True)
    (vault_dir / "problem" / "old-deploy-outage.md").write_text(
        "---\ntitle: Old deploy outage\nrepository: acme/shop\n"
        "created_at: 2020-01-01T00:00:00Z\nupdated_at: 2020-01-01T00:00:00Z\n---\n"
        "The deploy broke once before.\n"
    )
    os.utime(vault_dir / "problem" / "old-deploy-outage.md", (1577836800, 1577836800))
    async with stdio_session(vault_dir) as session:
        problem = structured(
            await session.call_tool(
                "write_mem",
                {
                    "title": "Deploy fails when DATABASE_URL is unset",
                    "content": "The deploy script crashed: DATABASE_URL missing in CI.",
                    "category": "problem",
                    "properties": PROBLEM,
                },
            )
        )
        await session.call_tool(
            "write_mem",
            {
                "title": "Load .env before the deploy runs",
                "content": "Fixed the deploy by loading .env in deploy.ts first.",
                "category": "solution",
                "properties": {"repository": "acme/shop", "files_modified": ["deploy.ts"]},
            },
        )
        await session.call_tool(
            "write_mem",
            {
                "title": "Deploy of the blog",
                "content": "The blog deploy is a static upload.",
                "properties": {"repository": "acme/blog"},
            },
        )

        found = structured(
            await session.call_tool(
                "search_mem", {"query": "deploy", "where": {"repository": "acme/shop"}}
            )
        )
        assert sorted(hit["category"] for hit in found["results"]) == [
            "problem",
            "problem",
            "solution",
        ]
        recent = structured(
            await session.call_tool(
                "search_mem",
                {
                    "query": "deploy",
                    "category": ["problem", "solution"],
                    "where": {"repository": "acme/shop"},
                    "since": "2 weeks",
                },
            )
        )
        assert sorted(hit["title"] for hit in recent["results"]) == [
            "Deploy fails when DATABASE_URL is unset",
            "Load .env before the deploy runs",
        ]
        listed = structured(
            await session.call_tool(
                "list_mem", {"where": {"files_modified": "ci.yml", "outcome": "success"}}
            )
        )
        assert [item["id"] for item in listed["items"]] == [problem["id"]]
        numbers = structured(
            await session.call_tool("list_mem", {"where": {"difficulty": 3, "tested": True}})
        )
        assert [item["id"] for item in numbers["items"]] == [problem["id"]]

        read = structured(await session.call_tool("read_mem", {"identifier": problem["id"]}))
        assert read["properties"] == PROBLEM
        shown = text_of(await session.call_tool("read_mem", {"identifier": problem["id"]}))
        assert "\n- files_modified: deploy.ts, ci.yml\n- outcome: success\n" in shown
        await session.call_tool(
            "edit_mem",
            {"id": problem["id"], "properties": {"outcome": "regressed", "branch": None}},
        )
        edited = structured(await session.call_tool("read_mem", {"identifier": problem["id"]}))
        assert edited["properties"]["outcome"] == "regressed"
        assert "branch" not in edited["properties"]
        assert edited["properties"]["difficulty"] == 3
        gone = structured(await session.call_tool("list_mem", {"where": {"outcome": "success"}}))
        assert gone["items"] == []

        reserved = await tool_error(
            session, "write_mem", {"title": "x", "content": "y", "properties": {"tags": "a"}}
        )
        assert "property 'tags' is reserved" in reserved
    text = (vault_dir / "problem" / "deploy-fails-when-database-url-is-unset.md").read_text()
    assert "files_modified: [deploy.ts, ci.yml]\n" in text
    assert "seen_on: 2026-11-20\n" in text
    assert "branch" not in text


async def test_a_key_value_user_sets_resets_and_reads_a_key_in_two_scopes(
    vault_dir: Path,
) -> None:
    """(b) The title is the key: one per scope; on_exists=replace sets it again (guarded by
    expected_version); `scope:key` reads one scope's value."""
    async with stdio_session(vault_dir) as session:
        first = structured(
            await session.call_tool(
                "write_mem", {"title": "theme", "content": "dark", "scope": "alice"}
            )
        )
        structured(
            await session.call_tool(
                "write_mem", {"title": "theme", "content": "dark", "scope": "bob"}
            )
        )
        refused = await tool_error(
            session, "write_mem", {"title": "theme", "content": "light", "scope": "alice"}
        )
        assert "on_exists=replace" in refused
        reset = await session.call_tool(
            "write_mem",
            {
                "title": "theme",
                "content": "light",
                "scope": "alice",
                "on_exists": "replace",
                "expected_version": first["version"],
                "properties": {"contrast": "high"},
            },
        )
        assert structured(reset)["replaced"] is True
        assert structured(reset)["id"] == first["id"]
        assert "Replaced the content of 'theme'" in text_of(reset)
        stale = await tool_error(
            session,
            "write_mem",
            {
                "title": "theme",
                "content": "sepia",
                "scope": "alice",
                "on_exists": "replace",
                "expected_version": first["version"],
            },
        )
        assert "changed since version" in stale

        alice = structured(await session.call_tool("read_mem", {"identifier": "alice:theme"}))
        bob = structured(await session.call_tool("read_mem", {"identifier": "bob:theme"}))
        assert (alice["content"], alice["scope"], alice["properties"]) == (
            "light\n",
            "alice",
            {"contrast": "high"},
        )
        assert (bob["content"], bob["scope"]) == ("dark\n", "bob")
        new_key = structured(
            await session.call_tool(
                "write_mem",
                {"title": "font", "content": "mono", "scope": "bob", "on_exists": "replace"},
            )
        )
        assert new_key["replaced"] is False


async def test_a_superseded_decision_leaves_search_and_the_briefing(vault_dir: Path) -> None:
    """(c) A decision replaced by a newer one: only the new one surfaces; the old one stays
    readable and says what replaced it."""
    async with stdio_session(vault_dir) as session:
        old = structured(
            await session.call_tool(
                "write_mem",
                {
                    "title": "Database: Postgres for orders",
                    "content": "Orders live in Postgres for now.",
                    "category": "decision",
                },
            )
        )
        new = structured(
            await session.call_tool(
                "write_mem",
                {
                    "title": "Database: SQLite for orders",
                    "content": "Orders moved to SQLite; Postgres was too much to run.",
                    "category": "decision",
                    "supersedes": old["id"],
                },
            )
        )
        found = structured(await session.call_tool("search_mem", {"query": "orders database"}))
        assert [hit["id"] for hit in found["results"]] == [new["id"]]
        both = structured(
            await session.call_tool(
                "search_mem", {"query": "orders database", "include_superseded": True}
            )
        )
        assert {hit["id"] for hit in both["results"]} == {old["id"], new["id"]}
        listed = structured(await session.call_tool("list_mem", {"category": "decision"}))
        assert [item["id"] for item in listed["items"]] == [new["id"]]
        briefing = structured(await session.call_tool("get_context", {}))
        assert [item["id"] for item in briefing["items"]] == [new["id"]]

        read_old = await session.call_tool("read_mem", {"identifier": old["id"]})
        assert [end["id"] for end in structured(read_old)["superseded_by"]] == [new["id"]]
        assert text_of(read_old).startswith(
            "Superseded: this memory was replaced by 'Database: SQLite for orders'"
        )
        read_new = structured(await session.call_tool("read_mem", {"identifier": new["id"]}))
        assert [end["id"] for end in read_new["supersedes"]] == [old["id"]]
    old_text = (vault_dir / "decision" / "database-postgres-for-orders.md").read_text()
    assert "superseded_by: '[[database-sqlite-for-orders]]'" in old_text


async def test_edit_mem_marks_the_memory_it_supersedes(vault_dir: Path) -> None:
    """edit_mem(supersedes=...) marks the older memory superseded, as write_mem does; a memory
    cannot supersede itself."""
    async with stdio_session(vault_dir) as session:
        old = structured(
            await session.call_tool("write_mem", {"title": "Retries: 3", "content": "Three."})
        )
        new = structured(
            await session.call_tool("write_mem", {"title": "Retries: 5", "content": "Five."})
        )
        await session.call_tool("edit_mem", {"id": new["id"], "supersedes": old["id"]})
        listed = structured(await session.call_tool("list_mem", {}))
        assert [item["id"] for item in listed["items"]] == [new["id"]]
        itself = await tool_error(session, "edit_mem", {"id": new["id"], "supersedes": new["id"]})
        assert "cannot supersede itself" in itself


async def test_two_assistants_write_and_each_memory_says_who_wrote_it(vault_dir: Path) -> None:
    """(e) Two clients with different clientInfo names share a vault: created_by and
    updated_by record each, a where filter lists by them, the briefing shows them."""
    async with stdio_session(vault_dir, "assistant-a") as first:
        written = structured(
            await first.call_tool(
                "write_mem", {"title": "Staging URL", "content": "staging.example.com"}
            )
        )
        await first.call_tool("write_mem", {"title": "Prod URL", "content": "example.com"})
    async with stdio_session(vault_dir, "assistant-b") as second:
        await second.call_tool("edit_mem", {"id": written["id"], "append": "Behind the VPN."})
        read = structured(await second.call_tool("read_mem", {"identifier": written["id"]}))
        assert (read["created_by"], read["updated_by"]) == ("assistant-a", "assistant-b")
        text = text_of(await second.call_tool("read_mem", {"identifier": written["id"]}))
        assert "by: assistant-a, last edited by assistant-b" in text
        by_a = structured(
            await second.call_tool("list_mem", {"where": {"created_by": "assistant-a"}})
        )
        assert sorted(item["title"] for item in by_a["items"]) == ["Prod URL", "Staging URL"]
        by_b = structured(
            await second.call_tool("list_mem", {"where": {"updated_by": "assistant-b"}})
        )
        assert [item["updated_by"] for item in by_b["items"]] == ["assistant-b"]
        briefing = text_of(await second.call_tool("get_context", {}))
        assert "- Staging URL (staging-url, just now by assistant-b): " in briefing


async def test_a_shared_server_names_writers_by_header_or_by_its_agent_option(
    vault_dir: Path,
) -> None:
    """Over HTTP the X-Memvault-Agent header names the writer; a server started with --agent
    names every writer itself."""
    with http_server(vault_dir) as (url, _process):
        async with http_session(url, headers={"X-Memvault-Agent": "ops-bot"}) as session:
            by_header = structured(
                await session.call_tool("write_mem", {"title": "A", "content": "one"})
            )
    async with stdio_session(vault_dir, "some-client", "--agent", "pinned") as session:
        pinned = structured(await session.call_tool("write_mem", {"title": "B", "content": "two"}))
        first = structured(await session.call_tool("read_mem", {"identifier": by_header["id"]}))
        second = structured(await session.call_tool("read_mem", {"identifier": pinned["id"]}))
    assert first["created_by"] == "ops-bot"
    assert second["created_by"] == "pinned"
