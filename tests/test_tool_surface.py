"""What an assistant pays for memvault each session (issue 35): tools/list and the server's
instructions within their budgets, `serve --tools` offering fewer tools, and output schemas
only on request. Sizes are characters of the JSON as `json.dumps` writes it by default (with
spaces: a little more than the wire's compact form), printed for the record."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp.types import InitializeResult, Tool

from .mcp_helpers import MEMVAULT, server_env, stdio_session, structured

pytestmark = [pytest.mark.processes, pytest.mark.anyio]

CORE = {"write_mem", "read_mem", "edit_mem", "search_mem", "get_context"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def dumped(tool: Tool) -> dict[str, Any]:
    """A tool as tools/list sends it."""
    return tool.model_dump(mode="json", by_alias=True, exclude_none=True)


def read_by_model(tools: list[Tool]) -> int:
    """What a model reads of the tools: names, descriptions and input schemas."""
    return sum(len(t.name) + len(t.description or "") + size(t.input_schema) for t in tools)


async def listed(vault: Path, *serving: str) -> tuple[list[Tool], str]:
    """The tools and the instructions a real stdio server started with `serving` gives."""
    async with stdio_session(vault, serving=serving) as session:
        tools = (await session.list_tools()).tools
        assert isinstance(session.initialize_result, InitializeResult)
        return tools, session.initialize_result.instructions or ""


async def test_all_tools_fit_their_budgets(vault_dir: Path) -> None:
    tools, instructions = await listed(vault_dir)
    whole = sum(size(dumped(t)) for t in tools)
    read = read_by_model(tools)
    print(f"\nall 15 tools: read by a model {read}, tools/list {whole}, instructions "
          f"{len(instructions)}")  # fmt: skip
    assert len(tools) == 15
    assert read <= 8_000
    assert whole <= 16_000
    assert len(instructions) <= 1_500
    assert all(t.output_schema is None for t in tools)


async def test_core_offers_five_tools_in_a_smaller_list(vault_dir: Path) -> None:
    tools, instructions = await listed(vault_dir, "--tools", "core")
    whole = sum(size(dumped(t)) for t in tools)
    print(f"\n--tools core: tools/list {whole}, instructions {len(instructions)}")
    assert {t.name for t in tools} == CORE
    assert whole <= 5_000
    # The instructions tell of the tools offered alone.
    assert "get_context" in instructions and "search_mem" in instructions
    for absent in ("link_mem", "similar_mem", "save_session_notes", "verify_mem"):
        assert absent not in instructions


async def test_tools_takes_names_and_the_setting(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools, _ = await listed(vault_dir, "--tools", "read_mem, search_mem")
    assert {t.name for t in tools} == {"read_mem", "search_mem"}
    monkeypatch.setenv("MEMVAULT_TOOLS", "core")
    tools, _ = await listed(vault_dir)
    assert {t.name for t in tools} == CORE


def test_an_unknown_tool_name_is_refused_naming_the_choices(vault_dir: Path) -> None:
    done = subprocess.run(
        [*MEMVAULT, "--vault", str(vault_dir), "serve", "--tools", "core,wrte_mem"],
        capture_output=True,
        text=True,
        env=server_env(),
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode != 0
    assert "no tool is called core, wrte_mem" in done.stderr
    assert "write_mem" in done.stderr
    assert "Traceback" not in done.stderr


async def test_output_schemas_on_request_and_results_match_them(vault_dir: Path) -> None:
    """With --output-schemas each tool lists its schema, and the SDK client checks every
    structured result against it (a result that did not match would raise here)."""
    async with stdio_session(vault_dir, serving=["--output-schemas"]) as session:
        tools = (await session.list_tools()).tools
        whole = sum(size(dumped(t)) for t in tools)
        print(f"\nwith --output-schemas: tools/list {whole}")
        assert all(t.output_schema is not None for t in tools)
        written = structured(
            await session.call_tool(
                "write_mem", {"title": "Queue sizing", "content": "Keep it under 500."}
            )
        )
        structured(await session.call_tool("read_mem", {"identifier": written["id"]}))
        found = structured(await session.call_tool("search_mem", {"query": "queue"}))
        assert found["results"][0]["id"] == written["id"]
        structured(await session.call_tool("get_stats", {}))
        structured(await session.call_tool("list_mem", {}))
