"""MCP prompts (start a session, remember what we just learned, review stale memories), listed
by prompts/list and rendered by prompts/get, through the SDK client against a real server."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import write_file
from .mcp_helpers import stdio_session

pytestmark = pytest.mark.processes

OLD = "2020-01-01T00:00:00Z"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def prompt_text(session: object, name: str, arguments: dict[str, str]) -> str:
    """The text of a prompt's one user message."""
    result = await session.get_prompt(name, arguments)  # type: ignore[attr-defined]
    [message] = result.messages
    assert message.role == "user"
    return str(message.content.text)


@pytest.mark.anyio
async def test_prompts_are_listed_and_each_renders_its_guidance(vault_dir: Path) -> None:
    write_file(
        vault_dir,
        "pattern/old-cache.md",
        f"---\nid: aaaaaaaa-0000-4000-8000-000000000000\ntitle: Cache warm-up\n"
        f"category: pattern\ncreated_at: {OLD}\nupdated_at: {OLD}\nlast_reviewed: {OLD}\n---\n"
        "Warm the cache before a deploy.\n",
    )
    write_file(vault_dir, "gotcha/force-push.md", "# Never force-push main\n\nIt breaks CI.\n")
    async with stdio_session(vault_dir) as session:
        listed = await session.list_prompts()
        prompts = {p.name: p for p in listed.prompts}
        assert set(prompts) == {"start_session", "remember", "review_stale"}
        assert prompts["remember"].title == "Remember what we just learned"
        assert {a.name for a in prompts["start_session"].arguments or []} == {"scope"}
        assert all(not a.required for p in prompts.values() for a in p.arguments or [])

        start = await prompt_text(session, "start_session", {})
        assert "# Memory briefing" in start and "Never force-push main" in start
        assert "search_mem" in start

        remember = await prompt_text(session, "remember", {"topic": "deploys", "scope": "shop"})
        assert "about deploys" in remember and 'scope="shop"' in remember
        for step in ("search_mem", "write_mem", "link_mem", "edit_mem", "gotcha", "secret"):
            assert step in remember

        review = await prompt_text(session, "review_stale", {})
        assert "Cache warm-up" in review and "aaaaaaaa-0000-4000-8000-000000000000" in review
        assert "verify_mem" in review and "Never force-push main" not in review
