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
from memvault.server.tools.common import READ, WRITE, ToolGroup, reply, tool, tool_errors
from memvault.server.tools.params import Names, Properties
from memvault.service.vault import VaultService
from memvault.words import memories


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
        "Call first in a session: gotchas, the last session, this scope's memories, recent "
        "changes and memories due for review, within max_tokens.",
    )
    def get_context(
        self,
        scope: Annotated[Names, Field(description="e.g. [project, shared]")] = None,
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
        "At a session's end, save what happened; memories named in it as [[links]] or ids "
        "are linked with the notes both ways.",
    )
    def save_session_notes_tool(
        self,
        ctx: Context[Any, Any],
        summary: Annotated[str, Field(description="first sentence shows in briefings")],
        highlights: list[str] | None = None,
        next_steps: list[str] | None = None,
        decisions: list[str] | None = None,
        scope: str | None = None,
        open_questions: list[str] | None = None,
        properties: Properties | None = None,
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
        "Today's date and time here, with the timezone.",
    )
    def get_current_date(
        self, format: Literal["iso", "locale", "timestamp", "date_only"] = "iso"
    ) -> Annotated[CallToolResult, DateOut]:
        out = DateOut.now(format)
        return reply(out, f"{out.date} ({out.timezone}, UTC{out.utc_offset})")
