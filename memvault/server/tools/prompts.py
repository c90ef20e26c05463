"""MCP prompts a user can pick: start a session, remember what we just learned, review stale
memories. Each returns one user message that steers the assistant to the right tools."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from memvault.config import ContextSettings
from memvault.core import clock
from memvault.core.secrets import redacted
from memvault.features.briefing import build_briefing, reviewed, stale_memories
from memvault.service.vault import VaultService

REVIEW_LIMIT = 20
CATEGORY_GUIDE = (
    "gotcha (a trap to avoid; surfaced at every session start), pattern (a way of doing "
    "things that works), schema (data shapes, tables, APIs), account-info (accounts, "
    "endpoints, who owns what; never secrets), error-resolution (an error and its fix), "
    "performance (measurements, limits), decision (what was decided and why), preference "
    "(how the user likes things done), session (session notes)"
)


class Prompts:
    """The vault's MCP prompts; `register` publishes them."""

    def __init__(self, vault: VaultService, settings: ContextSettings | None) -> None:
        self.vault = vault
        self.settings = settings or ContextSettings()

    def register(self, mcp: MCPServer) -> None:
        """Publish each prompt under its name, with a title and description."""
        for name, title, description in (
            (
                "start_session",
                "Start a session",
                "The session briefing from memory (gotchas, this scope, recent changes, "
                "memories to verify), to read before starting work.",
            ),
            (
                "remember",
                "Remember what we just learned",
                "Save the durable things this conversation taught as well-formed memories: "
                "one topic each, a category, a scope, linked to related memories.",
            ),
            (
                "review_stale",
                "Review stale memories",
                "Go through the memories nobody has verified for a long time: verify, "
                "correct or retire each.",
            ),
        ):
            mcp.prompt(name=name, title=title, description=description)(getattr(self, name))

    def start_session(self, scope: str | None = None) -> str:
        """The briefing, with what to do with it."""
        briefing = build_briefing(self.vault, scope or None, 2000, self.settings)
        return (
            "We are starting a session. This is what long-term memory holds for it; keep it "
            "in mind, search_mem before answering about earlier work, and verify_mem a "
            "flagged memory once you confirm it is still true.\n\n" + briefing.text
        )

    def remember(self, topic: str | None = None, scope: str | None = None) -> str:
        """Steps to a well-formed memory of what this conversation taught."""
        about = f" about {topic}" if topic else ""
        where = f'scope="{scope}"' if scope else "the project's scope (omit it for a global fact)"
        return (
            f"Save what we just learned{about} to long-term memory:\n"
            "1. List the durable things: decisions and why, gotchas, fixes for errors, "
            "patterns, preferences, how a system is set up. Skip what is only true today.\n"
            "2. For each, search_mem first: if a memory covers it, edit_mem that one "
            "(append or replace_section) instead of writing a new one.\n"
            "3. Otherwise write_mem one topic per memory, with a specific title (what a "
            "future search would look for), a category (" + CATEGORY_GUIDE + "), "
            f"{where}, a few tags, and content that says what and why.\n"
            "4. link_mem each new memory to the related memories you found.\n"
            "5. Never save a secret (password, key, token): say where it lives instead."
        )

    def review_stale(self, scope: str | None = None) -> str:
        """The stale memories, with what to do with each."""
        rows = stale_memories(self.vault, scope or None, self.settings, REVIEW_LIMIT)
        if not rows:
            return (
                f"No memory has gone unreviewed for {self.settings.stale_days:g} days or "
                "more; nothing to review."
            )
        lines = [
            f"- **{row.title}** (id {row.id}, {row.category or 'no category'}, last reviewed "
            f"{clock.age(reviewed(row))})"
            for row in rows
        ]
        return redacted(
            f"These memories have not been reviewed for {self.settings.stale_days:g}+ days. "
            "For each, read_mem it and check it against what you know now: verify_mem it if "
            "it is still true, edit_mem it if it changed, and delete_mem it only if the user "
            "agrees it is wrong.\n\n" + "\n".join(lines)
        )
