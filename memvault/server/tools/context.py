"""Tools for a session: the briefing at its start, notes at its end, today's date."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from memvault.config import ContextSettings
from memvault.core.secrets import SecretPolicy
from memvault.features.briefing import build_briefing
from memvault.features.session_notes import SessionFields, save_session_notes
from memvault.presentation.output import ContextOut, DateOut, SessionOut
from memvault.server.tools.common import READ, WRITE, Names, ToolGroup, reply, tool, tool_errors
from memvault.service.vault import VaultService
from memvault.words import memories

# A free property's value, as Obsidian keeps one: text, a number, a checkbox, or a list.
PropertyValue = str | int | float | bool | list[str | int | float | bool]


class ContextTools(ToolGroup):
    """get_context, save_session_notes and get_current_date."""

    def __init__(
        self,
        vault: VaultService,
        settings: ContextSettings | None,
        scope: str | None = None,
        agent: str | None = None,
    ) -> None:
        super().__init__(vault, scope, agent)
        self.settings = settings

    @tool(
        "get_context",
        "Session briefing",
        READ,
        "Call at the start of a session: a compact briefing of what to know — gotchas, "
        "memories of this scope (or scopes: a list, e.g. the project's and shared), what "
        "changed in the last recent_days (7 unless the server says otherwise), and memories "
        "not reviewed for a long time — each with its age and id, within max_tokens. "
        'Example: get_context(scope=["shop", "shared"], max_tokens=1500, recent_days=3)',
    )
    def get_context(
        self,
        scope: Names = None,
        max_tokens: Annotated[int, Field(ge=100, le=50_000)] = 2000,
        recent_days: Annotated[float, Field(gt=0, le=36_500)] | None = None,
    ) -> Annotated[CallToolResult, ContextOut]:
        settings = self.settings or ContextSettings()
        if recent_days is not None:
            settings = replace(settings, recent_days=recent_days)
        with tool_errors():
            briefing = build_briefing(self.vault, self.scoped(scope), max_tokens, settings)
        return reply(ContextOut.of(briefing), briefing.text + f"\n(about {briefing.tokens} tokens)")

    @tool(
        "save_session_notes",
        "Save session notes",
        WRITE,
        "At the end of a session, save what happened: a summary (its first sentence shows "
        "in later briefings), and optionally highlights, decisions, next_steps and "
        "open_questions (lists), and properties: free fields such as flow or tone, kept as "
        "frontmatter keys. Name the memories involved as [[wikilinks]] or ids and the notes "
        'get linked with them both ways. A secret in them is refused (secrets="redact" '
        "stores it as [redacted: KIND]). "
        'Example: save_session_notes(summary="Fixed the flaky deploy; see '
        '[[deploy-order]]", next_steps=["Add a canary"], properties={"flow": "focused"})',
    )
    def save_session_notes_tool(
        self,
        ctx: Context[Any, Any],
        summary: str,
        highlights: list[str] | None = None,
        next_steps: list[str] | None = None,
        decisions: list[str] | None = None,
        scope: str | None = None,
        open_questions: list[str] | None = None,
        properties: dict[str, PropertyValue] | None = None,
        secrets: SecretPolicy = "refuse",
    ) -> Annotated[CallToolResult, SessionOut]:
        fields = SessionFields(
            summary,
            highlights or [],
            decisions or [],
            next_steps or [],
            open_questions or [],
            dict(properties or {}),
        )
        with tool_errors():
            notes = save_session_notes(
                self.vault,
                fields,
                self.scope if scope is None else scope,
                secrets,
                self.writer(ctx),
            )
        memory = notes.memory
        linked = memories(len(notes.linked), none="no other memory")
        text = f"Saved {memory.title!r} ({memory.path}), linked with {linked}."
        if notes.unresolved:
            text += f" Not found: {', '.join(notes.unresolved)}."
        return reply(SessionOut.of(notes), text)

    @tool(
        "get_current_date",
        "Current date",
        READ,
        "Today's date and time on this machine, with the timezone and UTC offset. format: "
        "iso (default), locale, timestamp (Unix seconds) or date_only. "
        'Example: get_current_date(format="date_only")',
    )
    def get_current_date(
        self, format: Literal["iso", "locale", "timestamp", "date_only"] = "iso"
    ) -> Annotated[CallToolResult, DateOut]:
        out = DateOut.now(format)
        return reply(out, f"{out.date} ({out.timezone}, UTC{out.utc_offset})")
