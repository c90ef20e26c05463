"""A key read on a server with a default scope (issue 37): a title two scopes share names the
server's own memory; elsewhere it still names both, and nothing else changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.core.drafts import Draft
from memvault.errors import NotFound
from memvault.service.vault import VaultService

from .mcp_helpers import stdio_session, structured, tool_error

TITLE = "Deploy window"


def two_scopes(vault_dir: Path) -> None:
    vault = VaultService.open(Settings(vault=vault_dir))
    vault.create(Draft(TITLE, "Tuesdays, 10:00.", scope="shop"))
    vault.create(Draft(TITLE, "Any weekday after the freeze.", scope="billing"))
    vault.close()


def test_the_default_scope_decides_a_shared_title(vault_dir: Path) -> None:
    two_scopes(vault_dir)
    vault = VaultService.open(Settings(vault=vault_dir))
    try:
        assert vault.recall(TITLE, "shop").memory.body == "Tuesdays, 10:00.\n"
        assert vault.recall(TITLE, "billing").memory.scope == "billing"
        for scope in (None, "ops"):
            with pytest.raises(NotFound, match="names 2 memories"):
                vault.recall(TITLE, scope)
    finally:
        vault.close()


@pytest.mark.processes
@pytest.mark.anyio
async def test_read_mem_on_a_scoped_server_reads_its_own(vault_dir: Path) -> None:
    """Before, read_mem("Deploy window") failed ("names 2 memories") even on a server started
    with --scope shop."""
    two_scopes(vault_dir)
    async with stdio_session(vault_dir, serving=["--scope", "shop"]) as session:
        read = structured(await session.call_tool("read_mem", {"identifier": TITLE}))
        assert (read["scope"], read["content"]) == ("shop", "Tuesdays, 10:00.\n")
    async with stdio_session(vault_dir) as session:
        text = await tool_error(session, "read_mem", {"identifier": TITLE})
        assert "names 2 memories" in text


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
