"""Tools between two memories: link and unlink, both ways."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult

from memvault.core.records import LinkChange
from memvault.presentation.output import LinkOut
from memvault.server.tools.common import IDEMPOTENT, ToolGroup, reply, tool, tool_errors


class LinkTools(ToolGroup):
    """link_mem and unlink_mem over one vault."""

    @tool(
        "link_mem",
        "Link two memories",
        IDEMPOTENT,
        "Link two related memories both ways, under ## Related.",
    )
    def link_mem(
        self,
        ctx: Context[Any, Any],
        source_id: str,
        target_id: str,
        link_text: str | None = None,
    ) -> Annotated[CallToolResult, LinkOut]:
        with tool_errors():
            change = self.vault.link(source_id, target_id, link_text, agent=self.writer(ctx))
        return link_reply(
            change, f"linked with {change.markdown}" if change.changed else "already linked"
        )

    @tool(
        "unlink_mem",
        "Unlink two memories",
        IDEMPOTENT,
        "Remove the ## Related links between two memories, both ways.",
    )
    def unlink_mem(
        self, ctx: Context[Any, Any], source_id: str, target_id: str
    ) -> Annotated[CallToolResult, LinkOut]:
        with tool_errors():
            change = self.vault.unlink(source_id, target_id, agent=self.writer(ctx))
        return link_reply(change, "unlinked" if change.changed else "were not linked")


def link_reply(change: LinkChange, done: str) -> CallToolResult:
    """Both memories' links, and one line naming them and what was done."""
    return reply(
        LinkOut.of(change), f"{change.source.title!r} and {change.target.title!r}: {done}."
    )
