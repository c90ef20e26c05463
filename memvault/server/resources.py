"""Resources: one memory's file, the recent memories, the session briefing."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError

from ..briefing import build_briefing
from ..config import ContextSettings
from ..errors import MemvaultError
from ..markdown import first_line
from ..vault import VaultService

RECENT = 20


class Resources:
    """The vault's MCP resources; `register` publishes them."""

    def __init__(self, vault: VaultService, settings: ContextSettings | None) -> None:
        self.vault = vault
        self.settings = settings

    def register(self, mcp: MCPServer) -> None:
        mcp.resource(
            "memvault://context",
            name="context",
            description="The session briefing (get_context with no scope).",
            mime_type="text/markdown",
        )(self.context)
        mcp.resource(
            "memvault://memory/{id}",
            name="memory",
            description="One memory's markdown file, by id, path or slug.",
            mime_type="text/markdown",
        )(self.memory)
        mcp.resource(
            "memvault://recent",
            name="recent",
            description=f"The {RECENT} most recently updated memories: title, id and first line.",
            mime_type="text/markdown",
        )(self.recent)

    def context(self) -> str:
        return build_briefing(self.vault, None, 2000, self.settings).text

    def memory(self, id: str) -> str:
        try:
            return self.vault.file_text(id)
        except MemvaultError as exc:
            raise ResourceError(str(exc)) from exc

    def recent(self) -> str:
        rows, total = self.vault.list_memories(limit=RECENT)
        lines = [f"# Recent memories ({len(rows)} of {total})", ""]
        for row in rows:
            memory = self.vault.get(row.path)
            lines.append(
                f"- **{row.title}** (id {row.id}, updated {row.age}): {first_line(memory.body)}"
            )
        return "\n".join(lines) + "\n"
