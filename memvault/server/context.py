"""Tools for a session: the briefing at its start, notes at its end, today's date."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.types import CallToolResult
from pydantic import Field

from ..briefing import build_briefing
from ..config import ContextSettings
from ..output import ContextOut, DateOut, SessionOut
from ..session_notes import save_session_notes
from ..vault import VaultService
from ..words import memories
from .common import READ, WRITE, ToolGroup, reply, tool, tool_errors


class ContextTools(ToolGroup):
    """get_context, save_session_notes and get_current_date."""

    def __init__(self, vault: VaultService, settings: ContextSettings | None) -> None:
        super().__init__(vault)
        self.settings = settings

    @tool(
        "get_context",
        "Session briefing",
        READ,
        "Call at the start of a session: a compact briefing of what to know — gotchas, "
        "memories of this scope, what changed in the last 7 days, and memories not "
        "reviewed for a long time — each with its age and id, within max_tokens. "
        'Example: get_context(scope="shop", max_tokens=1500)',
    )
    def get_context(
        self,
        scope: str | None = None,
        max_tokens: Annotated[int, Field(ge=100, le=50_000)] = 2000,
    ) -> Annotated[CallToolResult, ContextOut]:
        with tool_errors():
            briefing = build_briefing(self.vault, scope, max_tokens, self.settings)
        return reply(ContextOut.of(briefing), briefing.text + f"\n(about {briefing.tokens} tokens)")

    @tool(
        "save_session_notes",
        "Save session notes",
        WRITE,
        "At the end of a session, save what happened: a summary, and optionally "
        "highlights, decisions and next steps. Name the memories involved as "
        "[[wikilinks]] or ids and the notes get linked with them both ways. "
        'Example: save_session_notes(summary="Fixed the flaky deploy; see '
        '[[deploy-order]]", next_steps=["Add a canary"])',
    )
    def save_session_notes_tool(
        self,
        summary: str,
        highlights: list[str] | None = None,
        next_steps: list[str] | None = None,
        decisions: list[str] | None = None,
        scope: str | None = None,
    ) -> Annotated[CallToolResult, SessionOut]:
        with tool_errors():
            notes = save_session_notes(
                self.vault, summary, highlights, next_steps, decisions, scope
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
