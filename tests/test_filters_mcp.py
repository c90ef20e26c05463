"""The filters through their faces: the MCP tools over a real server (SDK client), a server's
default scope, the scoped briefing resource, and the CLI's options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import ClientSession

from memvault.cli import main

from .mcp_helpers import http_server, http_session, stdio_session, structured, text_of, tool_error
from .test_filters import dated


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def call(session: ClientSession, name: str, **arguments: Any) -> dict[str, Any]:
    return structured(await session.call_tool(name, arguments))


def titles(result: dict[str, Any], key: str = "results") -> list[str]:
    return sorted(item["title"] for item in result[key])


def write_problem_and_solution(vault_dir: Path) -> None:
    """A problem and its solution from last week, a year-old problem, and a decision."""
    dated(vault_dir, "problem/checkout.md", "Checkout times out", "Checkout call times out.", 6)
    dated(vault_dir, "solution/timeout.md", "Raise the timeout", "Checkout timeout now 30 s.", 6)
    dated(vault_dir, "problem/old.md", "Checkout was slow", "Checkout took 9 s in 2023.", 365)
    dated(vault_dir, "decision/owner.md", "Checkout owner", "Payments owns checkout.", 1)


@pytest.mark.processes
@pytest.mark.anyio
async def test_search_mem_filters_pages_and_weighs(vault_dir: Path) -> None:
    write_problem_and_solution(vault_dir)
    async with stdio_session(vault_dir) as session:
        both = await call(
            session,
            "search_mem",
            query="checkout",
            category=["problem", "solution"],
            since="2 weeks",
        )
        assert titles(both) == ["Checkout times out", "Raise the timeout"]
        created = await call(
            session, "list_mem", category="problem", until="6 months", time_field="created"
        )
        assert titles(created, "items") == ["Checkout was slow"]
        first = await session.call_tool("search_mem", {"query": "checkout", "limit": 3})
        page = structured(first)
        assert (page["total"], page["offset"], page["has_more"]) == (4, 0, True)
        assert "offset=3" in text_of(first)
        rest = await call(session, "search_mem", query="checkout", limit=3, offset=3)
        assert (len(rest["results"]), rest["offset"], rest["has_more"]) == (1, 3, False)
        seen = {hit["id"] for hit in page["results"] + rest["results"]}
        assert len(seen) == 4
        relevant = await call(
            session, "search_mem", query="checkout timeout", min_relevance=1.0, prefer_recent=True
        )
        assert titles(relevant) == ["Raise the timeout"]
        assert relevant["results"][0]["relevance"] == 1.0
        error = await tool_error(session, "search_mem", {"query": "x", "since": "a while"})
        assert "cannot read the time 'a while'" in error
        archive = {"title": "Hidden", "content": "Gone at once.", "category": "archive"}
        error = await tool_error(session, "write_mem", archive)
        assert "'archive' is refused: archive/ is where memvault moves expired" in error
        exported = await call(session, "export_mem", since="3 days")
        assert [memory["title"] for memory in exported["memories"]] == ["Checkout owner"]
        problems = await call(session, "export_mem", category=["problem", "decision"], until="2d")
        assert titles(problems, "memories") == ["Checkout times out", "Checkout was slow"]


@pytest.mark.processes
@pytest.mark.anyio
async def test_get_context_takes_scopes_and_a_recent_window(vault_dir: Path) -> None:
    dated(vault_dir, "shop.md", "Shop deploy", "Deploy on Mondays.", 5, scope="shop")
    dated(vault_dir, "shared.md", "Shared rule", "Announce every deploy.", 1, scope="shared")
    dated(vault_dir, "blog.md", "Blog deploy", "The blog deploys itself.", 5, scope="blog")
    async with stdio_session(vault_dir) as session:
        briefing = (await call(session, "get_context", scope=["shop", "shared"]))["briefing"]
        assert "## Scope: shop" in briefing and "## Scope: shared" in briefing
        assert "Blog deploy" not in briefing
        recent = await call(session, "get_context", recent_days=3)
        assert (
            "Changed in the last 3 days\n- Shared rule (shared, shared, 1 day ago)"
            in recent["briefing"]
        )
        assert "Shop deploy" not in recent["briefing"]
        week = (await call(session, "get_context"))["briefing"]
        assert "Changed in the last 7 days" in week and "Shop deploy" in week
        resource = await session.read_resource("memvault://context/shop,shared")
        text = resource.contents[0].text  # type: ignore[union-attr]
        assert "for shop, shared" in text and "Shared rule" in text and "Blog deploy" not in text


@pytest.mark.processes
@pytest.mark.anyio
async def test_a_server_scope_is_the_default_of_writes_and_reads(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dated(vault_dir, "blog.md", "Blog deploy", "The blog deploys itself.", 5, scope="blog")
    dated(vault_dir, "global.md", "Global deploy", "Deploys need a green build.", 5)
    monkeypatch.setenv("MEMVAULT_SCOPE", "shop")
    async with stdio_session(vault_dir) as session:
        written = await call(session, "write_mem", title="Shop deploy", content="Deploy Mondays.")
        assert "scope: shop\n" in (vault_dir / written["path"]).read_text()
        found = await call(session, "search_mem", query="deploy")
        assert titles(found) == ["Global deploy", "Shop deploy"]
        everything = await call(session, "list_mem", scope=[])
        assert titles(everything, "items") == ["Blog deploy", "Global deploy", "Shop deploy"]
        both = await call(session, "search_mem", query="deploy", scope=["blog", "shop"])
        assert titles(both) == ["Blog deploy", "Global deploy", "Shop deploy"]
        glob = await call(session, "write_mem", title="Tabs", content="Use spaces.", scope="")
        assert "scope:" not in (vault_dir / glob["path"]).read_text()
        briefing = await session.read_resource("memvault://context")
        assert "# Memory briefing for shop" in briefing.contents[0].text  # type: ignore[union-attr]
    monkeypatch.delenv("MEMVAULT_SCOPE")
    with http_server(vault_dir, "--scope", "blog") as (url, _process):
        async with http_session(url) as session:
            found = await call(session, "search_mem", query="deploy", only_scope=True)
            assert titles(found) == ["Blog deploy"]


def run(vault: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--vault", str(vault), *args])
    return result.exit_code, result.stdout, result.stderr


def test_the_cli_filters_as_the_tools_do(vault_dir: Path) -> None:
    write_problem_and_solution(vault_dir)
    code, out, _ = run(
        vault_dir,
        "search",
        "checkout",
        "--category",
        "problem",
        "--category",
        "solution",
        "--since",
        "2w",
        "--json",
    )
    assert code == 0 and titles(json.loads(out)) == ["Checkout times out", "Raise the timeout"]
    code, out, _ = run(
        vault_dir, "list", "--until", "6 months", "--time-field", "created", "--json"
    )
    assert code == 0 and titles(json.loads(out), "items") == ["Checkout was slow"]
    code, out, err = run(vault_dir, "search", "checkout", "--limit", "1")
    assert code == 0 and "relevance 1.00" in out and "More match: --offset 1." in err
    code, out, _ = run(
        vault_dir, "search", "checkout owner", "--min-relevance", "1", "--prefer-recent", "--json"
    )
    assert code == 0 and titles(json.loads(out)) == ["Checkout owner"]
    code, out, _ = run(vault_dir, "export", "--since", "3 days")
    assert code == 0 and [m["title"] for m in json.loads(out)["memories"]] == ["Checkout owner"]
    code, _, err = run(vault_dir, "list", "--since", "the other day")
    assert code == 1 and err.startswith("error: cannot read the time 'the other day'")


def test_the_cli_briefing_takes_scopes_and_a_recent_window(vault_dir: Path) -> None:
    dated(vault_dir, "shop.md", "Shop deploy", "Deploy on Mondays.", 2, scope="shop")
    dated(vault_dir, "blog.md", "Blog deploy", "The blog deploys itself.", 2, scope="blog")
    code, out, _ = run(
        vault_dir, "search", "deploy", "--scope", "shop", "--scope", "blog", "--json"
    )
    assert code == 0 and titles(json.loads(out)) == ["Blog deploy", "Shop deploy"]
    code, out, _ = run(vault_dir, "list", "--scope", "shop", "--only-scope", "--json")
    assert code == 0 and titles(json.loads(out), "items") == ["Shop deploy"]
    code, out, _ = run(vault_dir, "context", "--scope", "shop", "--scope", "shared")
    assert code == 0 and "Shop deploy" in out and "Blog deploy" not in out
    code, out, _ = run(vault_dir, "context", "--recent-days", "1")
    assert code == 0 and "Changed in the last" not in out and "Shop deploy" not in out
    code, out, _ = run(vault_dir, "context", "--recent-days", "3")
    assert code == 0 and "Changed in the last 3 days\n" in out and "Shop deploy" in out
