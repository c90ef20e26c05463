"""The MCP server: its instructions and every tool group registered over VaultService.

Tool names and parameters are a public contract; see README "MCP tools". Each module holds one
group of tools; `transport` runs the server over stdio or HTTP.
"""

from __future__ import annotations

from typing import Literal

from mcp.server.mcpserver import MCPServer

from memvault import __version__
from memvault.config import ContextSettings
from memvault.server.tools.common import Server
from memvault.server.tools.context import ContextTools
from memvault.server.tools.links import LinkTools
from memvault.server.tools.memories import MemoryTools
from memvault.server.tools.prompts import Prompts
from memvault.server.tools.resources import Resources
from memvault.server.tools.search import SearchTools
from memvault.service.vault import VaultService

__all__ = ["INSTRUCTIONS", "LogLevel", "build_server"]

INSTRUCTIONS = """\
memvault is your long-term memory: markdown notes in a folder a person also reads and edits.

- Before answering about earlier work, decisions, preferences, accounts or past errors, call
  search_mem with a short natural-language query; read_mem the best hits.
- As you learn something durable — a decision and its reason, a gotcha, a fix for an error, a
  preference, how a system is set up — save it at once with write_mem (one topic per memory, a
  specific title, a category such as decision, gotcha, pattern, error-resolution, preference),
  then link_mem it to the related memories you found (similar_mem lists them).
- Prefer edit_mem (append, replace_section, find/replace) over rewriting a memory, and never
  delete a memory unless asked.
- get_current_date gives today's date for timestamps and relative dates.
"""

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


def build_server(
    vault: VaultService,
    log_level: LogLevel = "WARNING",
    context_settings: ContextSettings | None = None,
    scope: str | None = None,
    agent: str | None = None,
) -> MCPServer:
    """An MCP server whose tools, resources and prompts act on `vault`; `scope` is the default
    scope of its reads and writes (`serve --scope`); `agent` (--agent) names every writer, else
    each client's name does (see attribution.py)."""
    mcp = Server("memvault", instructions=INSTRUCTIONS, version=__version__, log_level=log_level)
    MemoryTools(vault, scope, agent).register(mcp)
    LinkTools(vault, agent=agent).register(mcp)
    SearchTools(vault, scope).register(mcp)
    ContextTools(vault, context_settings, scope, agent).register(mcp)
    Resources(vault, context_settings, scope).register(mcp)
    Prompts(vault, context_settings).register(mcp)
    return mcp
