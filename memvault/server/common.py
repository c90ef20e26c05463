"""What every tool group shares: annotations, the reply shape, errors, and registration."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from ..errors import MemvaultError
from ..vault import VaultService

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
IDEMPOTENT = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

_SPEC = "_memvault_tool"
Method = TypeVar("Method", bound=Callable[..., Any])


@contextmanager
def tool_errors() -> Iterator[None]:
    """A memvault error becomes a tool error whose text says what to do next."""
    try:
        yield
    except MemvaultError as exc:
        raise ToolError(str(exc)) from exc


def reply(model: BaseModel, text: str) -> CallToolResult:
    """Structured content for programs, readable text for the model."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=model.model_dump(mode="json"),
    )


@dataclass(frozen=True)
class ToolSpec:
    """How a tool is published: its name, title, annotations and description."""

    name: str
    title: str
    annotations: ToolAnnotations
    description: str


def tool(
    name: str, title: str, annotations: ToolAnnotations, description: str
) -> Callable[[Method], Method]:
    """Mark a method of a tool group as the MCP tool `name`; `ToolGroup.register` adds it.
    The SDK titles the input schema after the method (`write_memArguments`): keep its name."""

    def mark(method: Method) -> Method:
        setattr(method, _SPEC, ToolSpec(name, title, annotations, description))
        return method

    return mark


class ToolGroup:
    """A group of tools over one vault: each method marked with `tool` becomes an MCP tool, in
    the order the class defines them (the SDK reads the bound method's signature, without
    `self`, for the input and output schemas)."""

    def __init__(self, vault: VaultService) -> None:
        self.vault = vault

    def register(self, mcp: MCPServer) -> None:
        """Add this group's marked methods to `mcp` as tools."""
        for name, member in vars(type(self)).items():
            spec = getattr(member, _SPEC, None)
            if isinstance(spec, ToolSpec):
                mcp.add_tool(
                    getattr(self, name),
                    name=spec.name,
                    title=spec.title,
                    description=spec.description,
                    annotations=spec.annotations,
                )
