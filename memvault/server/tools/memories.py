"""Tools on one memory: write, read, edit, delete, verify."""

from __future__ import annotations

import json
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field

from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, OnExists, Revision, WriteOptions
from memvault.core.secrets import SecretPolicy
from memvault.presentation.lines import ReadFormat, archived_line, group_name, links_removed
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
from memvault.server.tools.params import Items, Properties

_NOTHING_TO_CHANGE = (
    "nothing to change: pass content, append, prepend, replace_section, find/replace, title, "
    "tags, category, properties, add_to, remove_from, supersedes, expires_at, ttl_days or "
    "archive"
)


class Section(BaseModel):
    """Text to put under a heading."""

    model_config = ConfigDict(extra="forbid")

    heading: str
    content: str


class MemoryTools(ToolGroup):
    """write_mem, read_mem, edit_mem, delete_mem and verify_mem over one vault."""

    @tool(
        "write_mem",
        "Write a memory",
        WRITE,
        "Save one durable fact, decision, gotcha, fix or preference as a new memory with a "
        "specific title. A repeat in its scope is refused with the existing memory's id.",
    )
    def write_mem(
        self,
        ctx: Context[Any, Any],
        title: str,
        content: str,
        tags: list[str] = [],  # noqa: B006 - the public default; pydantic copies it per call
        category: Annotated[str | None, Field(description="decision, gotcha, pattern, ...")] = None,
        scope: str | None = None,
        expires_at: str | None = None,
        ttl_days: Annotated[float, Field(gt=0)] | None = None,
        allow_duplicate: bool = False,
        secrets: SecretPolicy = "refuse",
        properties: Properties | None = None,
        on_exists: Annotated[
            OnExists, Field(description="replace: overwrite it (key-value)")
        ] = "refuse",
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
        "Read a memory by id, path, slug, title or alias; a name with a typo finds the one it "
        "clearly means. To find by content, use search_mem.",
    )
    def read_mem(
        self,
        identifier: Annotated[str, Field(description="category:name looks in one category")],
        format: ReadFormat = "markdown",
    ) -> Annotated[CallToolResult, MemoryOut]:
        with tool_errors():
            found = self.vault.recall(identifier, self.scope)
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
        "Change a memory: append, prepend, replace_section or find/replace (cheapest), or a "
        "new content, title (renames; links follow), tags, category (moves) or properties.",
    )
    def edit_mem(
        self,
        ctx: Context[Any, Any],
        id: str,
        title: str | None = None,
        content: Annotated[str | None, Field(description="a whole new body")] = None,
        tags: list[str] | None = None,
        category: str | None = None,
        append: Annotated[str | None, Field(description="added before ## Related")] = None,
        prepend: str | None = None,
        replace_section: Section | None = None,
        find: Annotated[str | None, Field(description="exact text, found once")] = None,
        replace: str | None = None,
        expected_count: int | None = None,
        expected_updated_at: str | None = None,
        expected_version: str | None = None,
        allow_duplicate: bool = False,
        secrets: SecretPolicy = "refuse",
        properties: Properties | None = None,
        supersedes: str | None = None,
        add_to: Annotated[Items | None, Field(description="{list property or tags: items}")] = None,
        remove_from: Items | None = None,
        expires_at: Annotated[str | None, Field(description="ISO date; never: none")] = None,
        ttl_days: Annotated[float, Field(gt=0)] | None = None,
        archive: Annotated[
            bool | None, Field(description="false restores; id NAME:* for a category or scope")
        ] = None,
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
            add_to=add_to,
            remove_from=remove_from,
            expires_at=expires_at,
            ttl_days=ttl_days,
            archived=archive,
        )
        if id.endswith(":*"):
            return self._archive_all(ctx, id, revision)
        if replace is not None and find is None:
            raise ToolError("replace needs find: the exact text to replace")
        guards = (expected_version, expected_updated_at)
        options = WriteOptions(self.writer(ctx), allow_duplicate, secrets, *guards)
        return self._edit_one(id, revision, options)

    def _edit_one(self, id: str, revision: Revision, options: WriteOptions) -> CallToolResult:
        """edit_mem on one memory."""
        if revision.empty:
            raise ToolError(_NOTHING_TO_CHANGE)
        with tool_errors():
            memory = self.vault.update(id, revision, options)
        return reply(
            Edited.of(memory),
            f"Updated {memory.title!r} ({memory.path}) at {memory.updated_at}, "
            f"version {memory.version}.",
        )

    def _archive_all(self, ctx: Context[Any, Any], id: str, revision: Revision) -> CallToolResult:
        """edit_mem on `NAME:*`: archive (or restore) every memory of a category or scope."""
        if revision.archived is None or revision != Revision(archived=revision.archived):
            raise ToolError(
                f"id {id!r} names every memory of a category or scope: pass archive=true "
                "(or false to restore) and nothing else, or name one memory"
            )
        restore, name = not revision.archived, id[:-2].strip()
        with tool_errors():
            where = self.vault.group(name, self.scope)
            paths = [row.path for row in self.vault.archivable(where, restore=restore)]
            moved = self.vault.archive_all(paths, restore=restore, agent=self.writer(ctx))
        group = group_name(*((name, None) if where.category else (None, name)))
        return reply(Edited.group(id, moved), archived_line(group, moved, restore))

    @tool(
        "delete_mem",
        "Delete a memory",
        DESTRUCTIVE,
        "Delete a memory and every link to it. Only when the user asks or it is wrong.",
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
        "Record that a memory was checked and is still true (sets last_reviewed).",
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


def _shown(value: object, whole: bool = True) -> str:
    """A property's value as read_mem's text shows it: a list as its items, comma-separated,
    an object (and a list in a list) as JSON."""
    if isinstance(value, list) and whole:
        return ", ".join(_shown(item, False) for item in value)
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def superseded_notice(out: MemoryOut) -> str:
    """The line a superseded memory's read starts with: what replaced it."""
    if not out.superseded_by:
        return ""
    named = " and ".join(
        f"{new.title!r} (id {new.id})" if new.id else f"{new.title} (not found)"
        for new in out.superseded_by
    )
    return f"Superseded: this memory was replaced by {named}; read that one instead."
