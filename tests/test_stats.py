"""Vault statistics: counts and bytes by category and scope, the same through get_stats (the
SDK client) and `memvault stats`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memvault.cli import main

from .conftest import write_file
from .mcp_helpers import stdio_session, structured, text_of

pytestmark = pytest.mark.processes


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_get_stats_counts_and_sizes_by_category_and_scope(vault_dir: Path) -> None:
    shop = "---\ntitle: Shop deploy\nscope: shop\n---\nDeploy the shop on Mondays.\n"
    write_file(vault_dir, "decision/shop-deploy.md", shop)
    general = "# General\n\nWeekdays only.\n"
    write_file(vault_dir, "decision/general.md", general)
    write_file(vault_dir, "loose.md", "A loose note.\n")
    async with stdio_session(vault_dir) as session:
        result = await session.call_tool("get_stats", {})
        figures = structured(result)
    sizes = {
        "decision": len(shop) + len(general),
        "(none)": len("A loose note.\n"),
    }
    assert figures["memories"] == 3 and figures["bytes"] == sum(sizes.values())
    assert figures["by_category"] == {"decision": 2, "(none)": 1}
    assert figures["bytes_by_category"] == sizes
    assert figures["by_scope"] == {"(global)": 2, "shop": 1}
    assert figures["bytes_by_scope"] == {
        "(global)": sizes["(none)"] + len(general),
        "shop": len(shop),
    }
    assert "by category: decision 2 (" in text_of(result)
    cli = CliRunner().invoke(main, ["--vault", str(vault_dir), "stats", "--json"])
    assert json.loads(cli.output) == figures
