"""The MCP server: its instructions and every tool group registered over VaultService.

Tool names and parameters are a public contract; see README "MCP tools". Each module holds one
group of tools; `transport` runs the server over stdio or HTTP.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal

from mcp.server.mcpserver import MCPServer

from memvault import __version__
from memvault.config import ContextSettings
from memvault.errors import Invalid
from memvault.server.busy import MarkedRequests
from memvault.server.tools.common import Server, ToolGroup
from memvault.server.tools.context import ContextTools
from memvault.server.tools.links import LinkTools
from memvault.server.tools.memories import MemoryTools
from memvault.server.tools.prompts import Prompts
from memvault.server.tools.resources import Resources
from memvault.server.tools.search import SearchTools
from memvault.service.vault import VaultService

__all__ = ["CORE_TOOLS", "LogLevel", "build_server", "instructions"]

# Which tools `serve --tools core` offers: enough to brief, recall, save and correct.
CORE_TOOLS = ("write_mem", "read_mem", "edit_mem", "search_mem", "get_context")

OPENING = (
    "memvault is your long-term memory: markdown notes in a folder a person also reads and edits."
)
# The server's instructions, each line with the tools it names: a server offering only some
# tools (`serve --tools`) tells of those alone.
GUIDE: tuple[tuple[frozenset[str], str], ...] = tuple(
    (frozenset(tools.split()), text)
    for tools, text in (
        ("get_context", "Start a session with get_context."),
        ("save_session_notes", "End a session with save_session_notes."),
        (
            "search_mem read_mem",
            "Before answering about earlier work, decisions, preferences or past errors, "
            "search_mem in plain words, then read_mem the best hits.",
        ),
        (
            "write_mem",
            "Save each durable thing at once with write_mem: one topic, a specific title, a "
            "category (decision, gotcha, pattern, error-resolution, preference, schema, "
            "account-info, performance), a scope (project, account or fleet; none: global).",
        ),
        ("link_mem similar_mem", "link_mem a new memory to related ones (similar_mem finds them)."),
        (
            "write_mem",
            "A repeat (same title in the scope, or near-identical text) is refused with the "
            "existing id: edit that one. on_exists=replace keeps one memory per title "
            "(key-value use); supersedes retires an older memory; expires_at or ttl_days "
            "archives it later. properties: frontmatter fields (text, number, bool, date, "
            "list, object; in an edit, null removes one).",
        ),
        (
            "edit_mem",
            "Prefer edit_mem's append, replace_section or find/replace to rewriting. Pass the "
            "version you read as expected_version to refuse a stale edit.",
        ),
        ("delete_mem", "Delete only when asked."),
        (
            "search_mem",
            "Filters: scope includes global memories unless only_scope; tags must all match; "
            "since and until take an ISO date or 7d, 3 months, last week; where: {property "
            "or dotted.path: value}.",
        ),
        (
            "write_mem",
            "A secret in a write is refused: say where it lives (secrets=redact stores it masked).",
        ),
        ("verify_mem", "verify_mem a memory you confirmed is still true."),
        ("get_current_date", "get_current_date gives today's date."),
    )
)


GROUPS: tuple[type[ToolGroup], ...] = (MemoryTools, LinkTools, SearchTools, ContextTools)
TOOL_NAMES = tuple(name for group in GROUPS for name in group.tool_names())


def chosen_tools(spec: str) -> tuple[str, ...]:
    """The tools `serve --tools` names: all, core (CORE_TOOLS), or names separated by commas
    or spaces; Invalid naming any it does not know."""
    words = tuple(word for word in spec.replace(",", " ").split() if word)
    if words in (("all",), ()):
        return TOOL_NAMES
    if words == ("core",):
        return CORE_TOOLS
    unknown = [word for word in words if word not in TOOL_NAMES]
    if unknown:
        raise Invalid(
            f"--tools: no tool is called {', '.join(unknown)}; give all, core, or names "
            f"among {', '.join(TOOL_NAMES)}"
        )
    return tuple(name for name in TOOL_NAMES if name in words)


def instructions(offered: Collection[str]) -> str:
    """The server's instructions for a server offering the tools `offered`."""
    lines = [f"- {text}" for tools, text in GUIDE if tools <= set(offered)]
    return "\n".join([OPENING, "", *lines]) + "\n"


LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


def build_server(
    vault: VaultService,
    log_level: LogLevel = "WARNING",
    context_settings: ContextSettings | None = None,
    scope: str | None = None,
    agent: str | None = None,
    offered: Collection[str] = TOOL_NAMES,
    output_schemas: bool = False,
) -> MCPServer:
    """An MCP server whose tools, resources and prompts act on `vault`; `scope` is the default
    scope of its reads and writes (`serve --scope`); `agent` (--agent) names every writer, else
    each client's name does (see attribution.py); `offered` names the tools it offers
    (`serve --tools`), with their output schemas in tools/list if `output_schemas`."""
    groups: list[ToolGroup] = [
        MemoryTools(vault, scope, agent),
        LinkTools(vault, agent=agent),
        SearchTools(vault, scope),
        ContextTools(vault, context_settings, scope, agent),
    ]
    chosen = [name for name in TOOL_NAMES if name in offered]
    mcp = Server(
        "memvault",
        instructions=instructions(chosen),
        version=__version__,
        log_level=log_level,
        middleware=[MarkedRequests()],
    )
    for group in groups:
        group.register(mcp, chosen, output_schemas)
    Resources(vault, context_settings, scope).register(mcp)
    Prompts(vault, context_settings).register(mcp)
    return mcp
