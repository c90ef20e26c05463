"""The README documents every MCP tool with its parameters, every resource, and every CLI
command with its options, one line each (as datasette's documentation tests do): a tool or an
option added without a line in the README fails here."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from mcp.types import Tool

from memvault.cli import main
from memvault.server.mcp_server import build_server
from memvault.service.vault import VaultService

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
# `[filters]` in a command's line stands for these options.
FILTERS = (
    "--category",
    "--tag",
    "--scope",
    "--only-scope",
    "--archived",
    "--since",
    "--until",
    "--time-field",
    "--where",
    "--include-superseded",
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def row(first_cell: str) -> str:
    """The README's table row whose first cell starts with `first_cell` (exactly one)."""
    starts = re.compile(rf"\| {re.escape(first_cell)}(?![\w-])")
    rows = [line for line in README.splitlines() if starts.match(line)]
    assert len(rows) == 1, f"README.md needs one table row starting with '| {first_cell}'"
    return rows[0]


@pytest.fixture
async def tools(vault: VaultService) -> list[Tool]:
    return await build_server(vault).list_tools()


@pytest.mark.anyio
async def test_every_tool_and_parameter_has_its_line(tools: list[Tool]) -> None:
    assert tools
    for tool in tools:
        line = row(f"`{tool.name}` |")
        missing = [
            name
            for name in tool.input_schema.get("properties", {})
            if not re.search(rf"\b{re.escape(name)}\b", line)
        ]
        assert not missing, f"README.md's line for {tool.name} lacks {missing}"


@pytest.mark.anyio
async def test_every_resource_is_documented(vault: VaultService) -> None:
    server = build_server(vault)
    uris = [str(resource.uri) for resource in await server.list_resources()]
    uris += [template.uri_template for template in await server.list_resource_templates()]
    assert uris
    for uri in uris:
        assert f"`{uri}`" in README, f"README.md does not mention the resource {uri}"


def options(command: click.Command) -> list[str]:
    """The long option names of a command (`--json`, `--tag`, ...)."""
    return [
        name
        for param in command.params
        for name in getattr(param, "opts", [])
        if name.startswith("--")
    ]


def test_every_command_and_option_has_its_line() -> None:
    assert main.commands
    for name, command in main.commands.items():
        line = row(f"`memvault {name}").replace("[filters]", " ".join(FILTERS))
        missing = [opt for opt in options(command) if not re.search(rf"{opt}\b", line)]
        assert not missing, f"README.md's line for `memvault {name}` lacks {missing}"


def test_every_global_option_is_documented() -> None:
    missing = [opt for opt in options(main) if f"`{opt}" not in README]
    assert not missing, f"README.md does not mention the global options {missing}"
