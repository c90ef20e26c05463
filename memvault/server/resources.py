"""Resources: one memory's file, the recent memories, the session briefing."""

from __future__ import annotations

from collections.abc import Callable

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from ..briefing import build_briefing
from ..config import ContextSettings
from ..errors import MemvaultError, NotFound
from ..markdown import first_line
from ..vault import VaultService

RECENT = 20


class Resources:
    """The vault's MCP resources; `register` publishes them."""

    def __init__(self, vault: VaultService, settings: ContextSettings | None) -> None:
        self.vault = vault
        self.settings = settings

    def register(self, mcp: MCPServer) -> None:
        """Publish each reader at its URI, named as its method (context, memory, recent)."""
        published: tuple[tuple[str, Callable[..., str], str], ...] = (
            (
                "memvault://context",
                self.context,
                "The session briefing (get_context with no scope).",
            ),
            (
                "memvault://memory/{+id}",
                self.memory,
                "One memory's markdown file, by id, path (decision/payment-retries.md, its "
                "slashes as they are) or slug.",
            ),
            (
                "memvault://recent",
                self.recent,
                f"The {RECENT} most recently updated memories: title, id and first line.",
            ),
        )
        for uri, read, description in published:
            mcp.resource(
                uri, name=read.__name__, description=description, mime_type="text/markdown"
            )(read)

    def context(self) -> str:
        return build_briefing(self.vault, None, 2000, self.settings).text

    def memory(self, id: str) -> str:
        """A memory's file; a memory that does not exist is the protocol's "not found"."""
        try:
            return self.vault.file_text(id)
        except NotFound as exc:
            raise ResourceNotFoundError(str(exc)) from exc
        except MemvaultError as exc:
            raise ResourceError(str(exc)) from exc

    def recent(self) -> str:
        rows, total = self.vault.list_memories(limit=RECENT)
        lines = [f"# Recent memories ({len(rows)} of {total})" if rows else "# No memories yet", ""]
        for row in rows:
            memory = self.vault.get(row.path)
            lines.append(
                f"- **{row.title}** (id {row.id}, updated {row.age}): {first_line(memory.body)}"
            )
        return "\n".join(lines) + "\n"
