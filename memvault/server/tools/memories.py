"""Tools on one memory: write, read, edit, delete, verify."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field

from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.core.secrets import SecretPolicy
from memvault.presentation.lines import ReadFormat, links_removed
from memvault.presentation.output import Edited, MemoryOut, Removed, Verified, Written, as_json
from memvault.server.tools.common import (
    DESTRUCTIVE,
    IDEMPOTENT,
    READ,
    WRITE,
    ToolGroup,
    reply,
    tool,
    tool_errors,
)

CATEGORY_GUIDE = (
    "gotcha (a trap to avoid; surfaced at every session start), pattern (a way of doing "
    "things that works), schema (data shapes, tables, APIs), account-info (accounts, "
    "endpoints, who owns what; never secrets), error-resolution (an error and its fix), "
    "performance (measurements, limits), decision (what was decided and why), preference "
    "(how the user likes things done), session (session notes)"
)

SECRETS_GUIDE = (
    "Text holding a secret (a private key, a cloud access key, an API token, a JWT, a "
    "password) is refused, naming its kind and line: save where the secret lives instead; "
    'secrets="redact" stores it with each secret replaced by [redacted: KIND]. '
)


# A property's value: text, a number, true/false (a checkbox), a date as YYYY-MM-DD text, a list
# of those, or null (edit_mem: remove the property).
Scalar = str | int | float | bool
Properties = dict[str, Scalar | list[Scalar] | None]
PROPERTIES_GUIDE = (
    "properties: extra fields kept as Obsidian properties in the file's frontmatter, e.g. "
    '{"repository": "shop", "files_modified": ["deploy.ts"], "outcome": "success", '
    '"difficulty": 3} (text, number, true/false, YYYY-MM-DD date, or a list of those). '
)


class Section(BaseModel):
    """A heading in the memory and the text to put under it (the heading line is kept)."""

    model_config = ConfigDict(extra="forbid")

    heading: str
    content: str


class MemoryTools(ToolGroup):
    """write_mem, read_mem, edit_mem, delete_mem and verify_mem over one vault."""

    @tool(
        "write_mem",
        "Write a memory",
        WRITE,
        "Save a new memory: one durable fact, decision, gotcha, fix or preference per "
        "memory, with a specific title. category: " + CATEGORY_GUIDE + " (others allowed). "
        "scope: the project, account or fleet it belongs to (omit for a global memory, or the "
        "server's default scope when it has one; an empty scope then for global). "
        "expires_at (ISO date) or ttl_days for something true only for a while; it then "
        "moves to archive/. " + PROPERTIES_GUIDE + "A memory with the same title in the "
        "same scope, or near-identical content, is refused with the existing id (edit that one "
        "instead, or allow_duplicate=true); on_exists=replace instead sets that memory's "
        "content (key-value use: the title is the key; expected_version guards it). "
        "supersedes: the id of an older memory this one replaces; it is marked superseded and "
        "leaves searches and the briefing. The memory records who wrote it (created_by). "
        + SECRETS_GUIDE
        + 'Example: write_mem(title="Payment retries: 3 with backoff", content="We retry ...", '
        'tags=["payments"], category="decision", scope="shop")',
    )
    def write_mem(
        self,
        ctx: Context[Any, Any],
        title: str,
        content: str,
        tags: list[str] = [],  # noqa: B006 - the public default; pydantic copies it per call
        category: str | None = None,
        scope: str | None = None,
        expires_at: str | None = None,
        ttl_days: Annotated[float, Field(gt=0)] | None = None,
        allow_duplicate: bool = False,
        secrets: SecretPolicy = "refuse",
        properties: Properties | None = None,
        on_exists: Literal["refuse", "replace"] = "refuse",
        expected_version: str | None = None,
        supersedes: str | None = None,
    ) -> Annotated[CallToolResult, Written]:
        with tool_errors():
            draft = Draft(
                title,
                content,
                tags,
                category,
                scope=self.scope if scope is None else scope,
                expires_at=expires_at,
                ttl_days=ttl_days,
                properties=properties,
                supersedes=supersedes,
            )
            options = WriteOptions(
                self.writer(ctx), allow_duplicate, secrets, expected_version, on_exists=on_exists
            )
            saved = self.vault.write(draft, options)
        memory = saved.memory
        done = "Replaced the content of" if saved.replaced else "Saved"
        return reply(
            Written.of(memory, saved.replaced),
            f"{done} {memory.title!r} as {memory.path} (id {memory.id}).",
        )

    @tool(
        "read_mem",
        "Read a memory",
        READ,
        "Read one memory by id, path, slug, title or alias. An inexact name (a typo, other "
        "word order, a missing word) returns the memory whose name it clearly means, with "
        "confidence 0.6 to 0.95; otherwise it fails with the candidate names and their "
        "scores. It never matches a memory's text: find by content with search_mem. Prefix "
        "category: to look in one category "
        "(gotcha:deploy). format: markdown (default), plain (no markdown syntax) or json "
        '(every field, with raw frontmatter). Example: read_mem(identifier="payment-retries")',
    )
    def read_mem(
        self, identifier: str, format: ReadFormat = "markdown"
    ) -> Annotated[CallToolResult, MemoryOut]:
        with tool_errors():
            found = self.vault.recall(identifier)
            memory = found.memory
            out = MemoryOut.of(
                found,
                self.vault.outgoing(memory),
                self.vault.backlinks(memory),
                format,
                self.vault.succession(memory),
            )
        if format == "plain":
            return reply(out, out.content)
        if format == "json":
            return reply(out, as_json(out))
        text = markdown_text(out)
        if found.confidence < 1.0:
            text = (
                f"No memory is named {identifier!r}; the closest ({found.matched_by} match, "
                f"confidence {found.confidence:.2f}) is:\n\n{text}"
            )
        return reply(out, text)

    @tool(
        "edit_mem",
        "Edit a memory",
        DESTRUCTIVE,
        "Change a memory named exactly by id (or path, slug, title, alias). Prefer the "
        "token-saving operations: append (added before ## Related), prepend, replace_section "
        "{heading, content}, or find + replace (find must occur once, or expected_count "
        "times). content replaces the whole body; a new title renames the file and every "
        "link to it; category moves it. expected_version (the version read_mem, search_mem "
        "or list_mem gave) refuses the edit if the memory changed since; expected_updated_at "
        "does the same by time. A title another memory of its scope has is refused "
        "(allow_duplicate=true keeps both). properties are merged into the memory's (null "
        "removes one). supersedes: the id of an older memory this one replaces (marked "
        "superseded). "
        + SECRETS_GUIDE
        + 'Example: edit_mem(id="payment-retries", append="- 2024-05: raised to 5 retries")',
    )
    def edit_mem(
        self,
        ctx: Context[Any, Any],
        id: str,
        title: str | None = None,
        content: str | None = None,
        tags: list[str] | None = None,
        category: str | None = None,
        append: str | None = None,
        prepend: str | None = None,
        replace_section: Section | None = None,
        find: str | None = None,
        replace: str | None = None,
        expected_count: int | None = None,
        expected_updated_at: str | None = None,
        expected_version: str | None = None,
        allow_duplicate: bool = False,
        secrets: SecretPolicy = "refuse",
        properties: Properties | None = None,
        supersedes: str | None = None,
    ) -> Annotated[CallToolResult, Edited]:
        edit = BodyEdit(
            content=content,
            find=find,
            replace=replace,
            expected_count=expected_count,
            section=(replace_section.heading, replace_section.content) if replace_section else None,
            prepend=prepend,
            append=append,
        )
        revision = Revision(
            title=title,
            edit=None if edit.empty else edit,
            tags=tags,
            category=category,
            properties=properties,
            supersedes=supersedes,
        )
        if revision.empty:
            raise ToolError(
                "nothing to change: pass content, append, prepend, replace_section, "
                "find/replace, title, tags, category, properties or supersedes"
            )
        if replace is not None and find is None:
            raise ToolError("replace needs find: the exact text to replace")
        options = WriteOptions(
            self.writer(ctx),
            allow_duplicate,
            secrets,
            expected_version,
            expected_updated_at=expected_updated_at,
        )
        with tool_errors():
            memory = self.vault.update(id, revision, options)
        return reply(
            Edited.of(memory),
            f"Updated {memory.title!r} ({memory.path}) at {memory.updated_at}, "
            f"version {memory.version}.",
        )

    @tool(
        "delete_mem",
        "Delete a memory",
        DESTRUCTIVE,
        "Delete a memory named exactly by id (or path, slug, title, alias) and remove every "
        "link to it from other memories. Only when the user asks, or the memory is wrong. "
        'Example: delete_mem(id="550e8400-e29b-41d4-a716-446655440000")',
    )
    def delete_mem(self, ctx: Context[Any, Any], id: str) -> Annotated[CallToolResult, Removed]:
        with tool_errors():
            deleted = self.vault.delete(id, agent=self.writer(ctx))
        return reply(
            Removed.of(deleted),
            f"Deleted {deleted.memory.title!r} ({deleted.memory.path}); "
            f"{links_removed(deleted.changed)}.",
        )

    @tool(
        "verify_mem",
        "Mark a memory as still true",
        IDEMPOTENT,
        "Record that you checked a memory and it is still true (sets last_reviewed to "
        "now). Use it on memories the briefing flags as not reviewed for a long time, "
        'after confirming them. Example: verify_mem(id="deploy-order")',
    )
    def verify_mem(self, ctx: Context[Any, Any], id: str) -> Annotated[CallToolResult, Verified]:
        with tool_errors():
            memory = self.vault.verify(id, agent=self.writer(ctx))
        return reply(Verified.of(memory), f"Verified {memory.title!r} at {memory.last_reviewed}.")


def markdown_text(out: MemoryOut) -> str:
    """read_mem's markdown text: what replaced it (if anything did), the title, one line of
    metadata, its properties, then the body."""
    meta: list[str] = [f"id: {out.id}", f"path: {out.path}"]
    if out.tags:
        meta.append("tags: " + ", ".join(out.tags))
    meta.append(f"updated: {out.updated_at}")
    meta.append(f"version: {out.version}")
    if out.created_by or out.updated_by:
        meta.append(f"by: {out.created_by or '?'}, last edited by {out.updated_by or '?'}")
    if out.supersedes:
        meta.append("supersedes: " + ", ".join(end.title or "" for end in out.supersedes))
    if out.backlinks:
        meta.append("backlinks: " + ", ".join(b.title or b.path or "" for b in out.backlinks))
    text = f"# {out.title}\n({'; '.join(meta)})\n\n"
    if out.properties:
        text += "".join(f"- {key}: {_shown(value)}\n" for key, value in out.properties.items())
        text += "\n"
    notice = superseded_notice(out)
    return (f"{notice}\n\n" if notice else "") + text + out.content


def _shown(value: object) -> str:
    """A property's value as read_mem's text shows it: a list as its items, comma-separated."""
    return ", ".join(str(item) for item in value) if isinstance(value, list) else str(value)


def superseded_notice(out: MemoryOut) -> str:
    """The line a superseded memory's read starts with: what replaced it."""
    if not out.superseded_by:
        return ""
    named = " and ".join(
        f"{new.title!r} (id {new.id})" if new.id else f"{new.title} (not found)"
        for new in out.superseded_by
    )
    return f"Superseded: this memory was replaced by {named}; read that one instead."
