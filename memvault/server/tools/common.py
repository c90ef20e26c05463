"""What every tool group shares: annotations, the reply shape, errors, and registration."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult, TextContent, Tool, ToolAnnotations
from pydantic import BaseModel, ValidationError

from memvault.errors import MemvaultError
from memvault.server.attribution import agent_of
from memvault.server.tools.arguments import unknown_arguments
from memvault.server.tools.params import Names
from memvault.server.tools.schemas import arguments, results
from memvault.service.vault import VaultService

# Each hint the spec's default does not give already (readOnlyHint false, idempotentHint false):
# every session pays for them. destructiveHint true is the default too, but said outright.
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(destructive_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(destructive_hint=True, open_world_hint=False)
IDEMPOTENT = ToolAnnotations(destructive_hint=False, idempotent_hint=True, open_world_hint=False)

log = logging.getLogger(__name__)

_SPEC = "_memvault_tool"
Method = TypeVar("Method", bound=Callable[..., Any])


@contextmanager
def tool_errors() -> Iterator[None]:
    """A memvault error becomes a tool error whose text says what to do next."""
    try:
        yield
    except MemvaultError as exc:
        raise ToolError(str(exc)) from exc


class Server(MCPServer[Any]):
    """The SDK's server, with every failed tool call answered in one line that says what went
    wrong and what to do: an argument the tool does not take, with the parameter it likely
    meant (the SDK drops it silently); arguments that do not fit the input schema, field by
    field (the SDK gives pydantic's text, with links to its docs); and a crash with its reason
    (the SDK says only "Error executing tool X"; the traceback goes to the log on stderr)."""

    async def list_tools(self) -> list[Tool]:
        """The tools, their schemas compacted (tools/schemas.py): output schemas only where the
        tools were registered with them (`serve --output-schemas`: a model never reads them,
        and they would double what every session pays for the list). `call_tool` refuses an
        argument a tool's input schema does not name."""
        return [
            tool.model_copy(
                update={
                    "input_schema": arguments(tool.input_schema),
                    "output_schema": results(tool.output_schema),
                }
            )
            for tool in await super().list_tools()
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        schema = self._tool_input_schema(name)
        if schema is not None:
            problem = unknown_arguments(name, arguments, schema.get("properties", {}))
            if problem:
                raise ToolError(f"Error executing tool {name}: {problem}")
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            cause = exc.__cause__ or exc
            log.error("tool %s failed", name, exc_info=cause)
            raise ToolError(
                f"Error executing tool {name}: internal error ({one_line(cause)}); the server's"
                " log on stderr has the details, please report it"
            ) from cause
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            raise ToolError(
                f"Error executing tool {name}: {invalid_arguments(exc.__cause__)}"
            ) from exc.__cause__


def invalid_arguments(error: ValidationError) -> str:
    """What is wrong with a call's arguments, without pydantic's links: on one line for one
    field, else one line per field."""
    problems = [
        f"{'.'.join(str(part) for part in problem['loc']) or 'arguments'}: {problem['msg']}"
        for problem in error.errors(include_url=False)
    ]
    if len(problems) == 1:
        return f"invalid arguments: {problems[0]} (see the tool's input schema)"
    lines = "".join(f"\n- {problem}" for problem in problems)
    return f"invalid arguments (see the tool's input schema):{lines}"


def one_line(error: BaseException, width: int = 300) -> str:
    """An exception's type and text on one line, cut at `width` characters."""
    text = " ".join(f"{type(error).__name__}: {error}".split())
    return text if len(text) <= width else text[: width - 1] + "…"


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
    `self`, for the input and output schemas). `scope` is the server's default scope
    (`serve --scope`): a call that names none reads and writes there. `agent` is the
    server's --agent, which names every writer (see attribution.py)."""

    def __init__(
        self, vault: VaultService, scope: str | None = None, agent: str | None = None
    ) -> None:
        self.vault = vault
        self.scope = scope
        self.agent = agent

    def writer(self, ctx: Context[Any, Any]) -> str | None:
        """Who this tool call's writes record as created_by / updated_by."""
        return agent_of(ctx, self.agent)

    def scoped(self, scope: Names) -> Names:
        """The scope or scopes a call names, or the server's default when it names none (an
        empty name or list names none: every scope for a read, global for a write)."""
        return self.scope if scope is None else scope

    @classmethod
    def tool_names(cls) -> list[str]:
        """The names of this group's tools, in order."""
        return [spec.name for _name, spec in cls._specs()]

    def register(self, mcp: MCPServer, offered: Collection[str], schemas: bool = False) -> None:
        """Add this group's marked methods that `offered` names to `mcp` as tools; with their
        output schemas when `schemas` (the SDK then builds and checks them, at start and on
        every call: a server that does not list them skips that work)."""
        for name, spec in self._specs():
            if spec.name in offered:
                mcp.add_tool(
                    getattr(self, name),
                    name=spec.name,
                    title=spec.title,
                    description=spec.description,
                    annotations=spec.annotations,
                    structured_output=schemas,
                )

    @classmethod
    def _specs(cls) -> Iterator[tuple[str, ToolSpec]]:
        """Each marked method's attribute name and how it is published."""
        for name, member in vars(cls).items():
            spec = getattr(member, _SPEC, None)
            if isinstance(spec, ToolSpec):
                yield name, spec
