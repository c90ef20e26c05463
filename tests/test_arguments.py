"""Unknown parameters are errors (issue 15): every tool, through a real MCP client, refuses an
argument it does not take, names it with the parameter it likely meant, and does nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from .mcp_helpers import stdio_session, structured, tool_error

pytestmark = [pytest.mark.processes, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_every_tool_refuses_an_argument_it_does_not_take(vault_dir: Path) -> None:
    """Generic: whatever tools the server has, each call is checked against its schema."""
    async with stdio_session(vault_dir) as session:
        tools = (await session.list_tools()).tools
        assert len(tools) >= 10
        for tool in tools:
            text = await tool_error(session, tool.name, {"zzz_unheard_of": 1})
            assert text.startswith(
                f"Error executing tool {tool.name}: {tool.name} has no parameter"
                " 'zzz_unheard_of'; nothing was done. Its parameters are: "
            ), text
            assert ", ".join(tool.input_schema["properties"]) in text
        listed = structured(await session.call_tool("list_mem", {}))
        assert listed["total"] == 0


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        # the example: the memory was saved as global with no word
        (
            "write_mem",
            {"title": "Fleet note", "content": "x", "account": "fleet1"},
            "'account' (did you mean 'scope'?)",
        ),
        ("read_mem", {"id": "deploy-order"}, "'id' (did you mean 'identifier'?)"),
        ("edit_mem", {"identifier": "deploy-order", "append": "x"}, "'identifier' (did you mean"),
        ("search_mem", {"query": "x", "max_results": 3}, "'max_results' (did you mean 'limit'?)"),
        ("list_mem", {"categroy": "decision"}, "'categroy' (did you mean 'category'?)"),
        (
            "write_mem",
            {"title": "t", "content": "x", "allowDuplicate": True},
            "'allowDuplicate' (did you mean 'allow_duplicate'?)",
        ),
        ("link_mem", {"source": "a", "target": "b"}, "'source' (did you mean 'source_id'?)"),
        # nothing alike: the error lists what the tool takes instead
        ("search_mem", {"query": "x", "tone": "formal"}, "parameter 'tone'; nothing was done"),
        (
            "write_mem",
            {"title": "t", "content": "x", "flow": 1, "tone": 2},
            "parameters 'flow', 'tone'; nothing was done",
        ),
    ],
)
async def test_an_unknown_argument_is_named_with_the_parameter_it_likely_meant(
    vault_dir: Path, tool: str, arguments: dict[str, object], named: str
) -> None:
    async with stdio_session(vault_dir) as session:
        text = await tool_error(session, tool, arguments)
        assert named in text and "\n" not in text, text
        assert structured(await session.call_tool("list_mem", {}))["total"] == 0


async def test_a_nested_object_refuses_unknown_keys_too(vault_dir: Path) -> None:
    async with stdio_session(vault_dir) as session:
        await session.call_tool("write_mem", {"title": "Deploy order", "content": "## Steps\nx\n"})
        section = {"heading": "Steps", "content": "y", "level": 3}
        text = await tool_error(
            session, "edit_mem", {"id": "deploy-order", "replace_section": section}
        )
        assert "replace_section.level: Extra inputs are not permitted" in text
        read = structured(await session.call_tool("read_mem", {"identifier": "deploy-order"}))
        assert read["content"] == "## Steps\nx\n"
