"""Resources: one memory's file, the recent memories, the session briefing."""

from __future__ import annotations

from collections.abc import Callable

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from memvault.config import ContextSettings
from memvault.core.markdown import first_line
from memvault.core.secrets import redacted
from memvault.errors import MemvaultError, NotFound
from memvault.features.briefing import build_briefing
from memvault.service.vault import VaultService

RECENT = 20


class Resources:
    """The vault's MCP resources; `register` publishes them."""

    def __init__(
        self, vault: VaultService, settings: ContextSettings | None, scope: str | None = None
    ) -> None:
        self.vault = vault
        self.settings = settings
        self.scope = scope

    def register(self, mcp: MCPServer) -> None:
        """Publish each reader at its URI, named as its method (context, scoped_context,
        memory, recent)."""
        published: tuple[tuple[str, Callable[..., str], str], ...] = (
            (
                "memvault://context",
                self.context,
                "The session briefing (get_context with no scope: the server's default scope).",
            ),
            (
                "memvault://context/{+scope}",
                self.scoped_context,
                "The session briefing of a scope, or of several separated by commas "
                "(memvault://context/shop,shared), with the global memories.",
            ),
            (
                # {+id}: a path's slashes are kept (memvault://memory/decision/payment-retries.md)
                "memvault://memory/{+id}",
                self.memory,
                "One memory's markdown file, by id, path (slashes as they are), slug, title or "
                "alias; percent-encode spaces (Deploy%20order).",
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
        return build_briefing(self.vault, self.scope, 2000, self.settings).text

    def scoped_context(self, scope: str) -> str:
        """The briefing of the scopes the URI names (comma-separated)."""
        return build_briefing(self.vault, tuple(scope.split(",")), 2000, self.settings).text

    def memory(self, id: str) -> str:
        """The file of the memory `id` names exactly; a name no memory has is "not found"."""
        try:
            return self.vault.file_text(id)
        except NotFound as exc:
            raise ResourceNotFoundError(str(exc)) from exc
        except MemvaultError as exc:
            raise ResourceError(str(exc)) from exc

    def recent(self) -> str:
        rows, total = self.vault.list_memories(limit=RECENT)
        lines = [f"# Recent memories ({len(rows)} of {total})", ""]
        for row in rows:
            memory = self.vault.get(row.path)
            lines.append(
                redacted(
                    f"- **{row.title}** (id {row.id}, updated {row.age}): {first_line(memory.body)}"
                )
            )
        return "\n".join(lines) + "\n"
