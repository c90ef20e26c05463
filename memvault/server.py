"""The MCP face: memory tools and resources over VaultService (parse, call, format).

Tool names and parameters are a public contract; see README "MCP tools".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from . import __version__, clock
from .briefing import build_briefing
from .config import ContextSettings
from .errors import MemvaultError
from .exchange import dump, export_records
from .markdown import BodyEdit, first_line
from .model import Memory
from .records import Filter, LinkChange, LinkRow
from .session_notes import save_session_notes
from .tool_models import (
    ContextOut,
    DateOut,
    Edited,
    ExportOut,
    LinkEnd,
    LinkOut,
    LinkSide,
    ListOut,
    MemoryOut,
    Removed,
    SearchOut,
    Section,
    SessionOut,
    Verified,
    Written,
)
from .vault import VaultService
from .views import memory_view, outgoing_view, plain_text

RECENT = 20

INSTRUCTIONS = """\
memvault is your long-term memory: markdown notes in a folder a person also reads and edits.

- Before answering about earlier work, decisions, preferences, accounts or past errors, call
  search_mem with a short natural-language query; read_mem the best hits.
- As you learn something durable — a decision and its reason, a gotcha, a fix for an error, a
  preference, how a system is set up — save it at once with write_mem (one topic per memory, a
  specific title, a category such as decision, gotcha, pattern, error-resolution, preference),
  then link_mem it to the related memories you found.
- Prefer edit_mem (append, replace_section, find/replace) over rewriting a memory, and never
  delete a memory unless asked.
- get_current_date gives today's date for timestamps and relative dates.
"""

CATEGORY_GUIDE = (
    "gotcha (a trap to avoid; surfaced at every session start), pattern (a way of doing "
    "things that works), schema (data shapes, tables, APIs), account-info (accounts, "
    "endpoints, who owns what; never secrets), error-resolution (an error and its fix), "
    "performance (measurements, limits), decision (what was decided and why), preference "
    "(how the user likes things done), session (session notes)"
)

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
IDEMPOTENT = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


@contextmanager
def tool_errors() -> Iterator[None]:
    """A memvault error becomes a tool error whose text says what to do next."""
    try:
        yield
    except MemvaultError as exc:
        raise ToolError(str(exc)) from exc


def reply(model: BaseModel, text: str) -> CallToolResult:
    """Structured content for programs, readable text for the model."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=model.model_dump(mode="json"),
    )


def link_ends(links: list[dict[str, Any]]) -> list[LinkEnd]:
    return [LinkEnd(id=link["id"], title=link["title"], path=link["path"]) for link in links]


def link_side(memory: Memory, rows: list[LinkRow]) -> LinkSide:
    return LinkSide(
        id=memory.id, title=memory.title, path=memory.path, links=link_ends(outgoing_view(rows))
    )


def build_server(
    vault: VaultService,
    log_level: LogLevel = "WARNING",
    context_settings: ContextSettings | None = None,
) -> MCPServer:
    """An MCP server whose tools and resources act on `vault`."""
    mcp = MCPServer("memvault", instructions=INSTRUCTIONS, version=__version__, log_level=log_level)

    @mcp.tool(
        name="write_mem",
        title="Write a memory",
        annotations=WRITE,
        description=(
            "Save a new memory: one durable fact, decision, gotcha, fix or preference per "
            "memory, with a specific title. category: " + CATEGORY_GUIDE + " (others allowed). "
            "scope: the project, account or fleet it belongs to (omit for a global memory). "
            "expires_at (ISO date) or ttl_days for something true only for a while; it then "
            "moves to archive/. A memory with the same title or near-identical content is "
            "refused with the existing id (edit that one instead, or allow_duplicate=true). "
            'Example: write_mem(title="Payment retries: 3 with backoff", content="We retry ...", '
            'tags=["payments"], category="decision", scope="shop")'
        ),
    )
    def write_mem(
        title: str,
        content: str,
        tags: list[str] = [],  # noqa: B006 - the public default; pydantic copies it per call
        category: str | None = None,
        scope: str | None = None,
        expires_at: str | None = None,
        ttl_days: Annotated[float, Field(gt=0)] | None = None,
        allow_duplicate: bool = False,
    ) -> Annotated[CallToolResult, Written]:
        with tool_errors():
            memory = vault.create(
                title, content, tags, category, scope, expires_at, ttl_days, allow_duplicate
            )
        return reply(
            Written(
                id=memory.id, title=memory.title, path=memory.path, created_at=memory.created_at
            ),
            f"Saved {memory.title!r} as {memory.path} (id {memory.id}).",
        )

    @mcp.tool(
        name="read_mem",
        title="Read a memory",
        annotations=READ,
        description=(
            "Read one memory by id, path, slug, title or alias. An inexact name or key returns "
            "the memory it clearly means, with confidence < 1 (substring 0.85+, typo 0.6+, a "
            "match in the text 0.5 or less); when no match is clearly ahead it fails with the "
            "candidates and their scores. Prefix category: to look in one category "
            "(gotcha:deploy). format: markdown (default), plain (no markdown syntax) or json "
            '(every field, with raw frontmatter). Example: read_mem(identifier="payment-retries")'
        ),
    )
    def read_mem(
        identifier: str, format: Literal["markdown", "plain", "json"] = "markdown"
    ) -> Annotated[CallToolResult, MemoryOut]:
        with tool_errors():
            found = vault.recall(identifier)
            memory = found.memory
            backlinks = vault.backlinks(memory)
            view = memory_view(memory, vault.outgoing(memory), backlinks)
        out = MemoryOut(
            **{
                k: view[k]
                for k in (
                    "id",
                    "title",
                    "tags",
                    "category",
                    "created_at",
                    "updated_at",
                    "last_reviewed",
                    "path",
                )
            },
            content=memory.body,
            links=link_ends(view["links"]),
            backlinks=[
                LinkEnd(id=r.source_id, title=r.source_title, path=r.source)
                for r in {r.source: r for r in backlinks if r.source != memory.path}.values()
            ],
            scope=memory.scope,
            expires_at=memory.expires_at,
            age=clock.age(memory.updated_at),
            reviewed=clock.age(memory.last_reviewed),
            confidence=found.confidence,
            matched_by=found.matched_by,
        )
        if format == "plain":
            out.content = plain_text(memory)
            return reply(out, out.content)
        if format == "json":
            out.aliases, out.frontmatter, out.problem = (
                memory.aliases,
                view["frontmatter"],
                memory.problem,
            )
            return reply(out, json.dumps(out.model_dump(mode="json"), indent=2, ensure_ascii=False))
        text = _markdown_text(out)
        if found.confidence < 1.0:
            text = (
                f"No memory is named {identifier!r}; the closest ({found.matched_by} match, "
                f"confidence {found.confidence:.2f}) is:\n\n{text}"
            )
        return reply(out, text)

    @mcp.tool(
        name="edit_mem",
        title="Edit a memory",
        annotations=DESTRUCTIVE,
        description=(
            "Change a memory named exactly by id (or path, slug, title, alias). Prefer the "
            "token-saving operations: append (added before ## Related), prepend, replace_section "
            "{heading, content}, or find + replace (find must occur once, or expected_count "
            "times). content replaces the whole body; a new title renames the file and every "
            "link to it; category moves it. expected_updated_at refuses the edit if the memory "
            "changed since you read it. "
            'Example: edit_mem(id="payment-retries", append="- 2024-05: raised to 5 retries")'
        ),
    )
    def edit_mem(
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
        if edit.empty and title is None and tags is None and category is None:
            raise ToolError(
                "nothing to change: pass content, append, prepend, replace_section, "
                "find/replace, title, tags or category"
            )
        if replace is not None and find is None:
            raise ToolError("replace needs find: the exact text to replace")
        with tool_errors():
            memory = vault.update(
                id,
                title=title,
                edit=None if edit.empty else edit,
                tags=tags,
                category=category,
                expected_updated_at=expected_updated_at,
            )
        return reply(
            Edited(id=memory.id, path=memory.path, updated_at=memory.updated_at),
            f"Updated {memory.title!r} ({memory.path}) at {memory.updated_at}.",
        )

    @mcp.tool(
        name="delete_mem",
        title="Delete a memory",
        annotations=DESTRUCTIVE,
        description=(
            "Delete a memory named exactly by id (or path, slug, title, alias) and remove every "
            "link to it from other memories. Only when the user asks, or the memory is wrong. "
            'Example: delete_mem(id="550e8400-e29b-41d4-a716-446655440000")'
        ),
    )
    def delete_mem(id: str) -> Annotated[CallToolResult, Removed]:
        with tool_errors():
            deleted = vault.delete(id)
        return reply(
            Removed(id=deleted.memory.id, path=deleted.memory.path, removed_links=deleted.changed),
            f"Deleted {deleted.memory.title!r} ({deleted.memory.path}); links removed from "
            f"{len(deleted.changed)} other memories.",
        )

    @mcp.tool(
        name="search_mem",
        title="Search memories",
        annotations=READ,
        description=(
            "Full-text search over every memory, best first. Ask in plain words; also supports "
            '"exact phrase", prefix*, -excluded and OR. Filter by category or tags (all must '
            "match); scope gives that scope's memories plus global ones (only_scope: just the "
            "scope's). Archived and expired memories are left out unless archived=true. Search "
            "before answering about earlier work or decisions. "
            'Example: search_mem(query="payment retry policy", category="decision")'
        ),
    )
    def search_mem(
        query: str,
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
        category: str | None = None,
        tags: list[str] | None = None,
        scope: str | None = None,
        only_scope: bool = False,
        archived: bool = False,
    ) -> Annotated[CallToolResult, SearchOut]:
        where = Filter(category, tuple(tags or ()), scope, only_scope, archived)
        with tool_errors():
            page = vault.search(query, limit, 0, where)
        out = SearchOut(results=page.results, total=page.total)
        lines = [f"{len(page.results)} of {page.total} memories match {query!r}."]
        for hit in page.results:
            lines.append(
                f"- {hit.title} (id {hit.id}, {hit.path}, updated {hit.age}, reviewed "
                f"{clock.age(hit.last_reviewed)}): {' '.join(hit.snippet.split())}"
            )
        return reply(out, "\n".join(lines))

    @mcp.tool(
        name="list_mem",
        title="List memories",
        annotations=READ,
        description=(
            "List memories without a query, newest first (sort: updated, created, title, or "
            "usage: most used first), optionally in one category, with all of the given tags, "
            "or in a scope (plus global ones unless only_scope); archived=true lists the "
            "archive instead. Page with limit/offset. "
            'Example: list_mem(category="gotcha", limit=20)'
        ),
    )
    def list_mem(
        category: str | None = None,
        tags: list[str] | None = None,
        sort: Literal["updated", "created", "title", "usage"] = "updated",
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
        offset: Annotated[int, Field(ge=0)] = 0,
        scope: str | None = None,
        only_scope: bool = False,
        archived: bool = False,
    ) -> Annotated[CallToolResult, ListOut]:
        where = Filter(category, tuple(tags or ()), scope, only_scope, archived)
        with tool_errors():
            rows, total = vault.list_memories(where, sort, limit, offset)
        lines = [f"{len(rows)} of {total} memories (from {offset})."]
        lines += [
            f"- {r.title} (id {r.id}, {r.path}, updated {r.age}, reviewed "
            f"{clock.age(r.last_reviewed)}, used {r.access_count}x)"
            for r in rows
        ]
        return reply(ListOut(items=rows, total=total), "\n".join(lines))

    def link_reply(change: LinkChange, done: str) -> CallToolResult:
        out = LinkOut(
            source=link_side(change.source, change.source_links),
            target=link_side(change.target, change.target_links),
            markdown=change.markdown,
            changed=change.changed,
        )
        return reply(out, f"{change.source.title!r} and {change.target.title!r}: {done}.")

    @mcp.tool(
        name="link_mem",
        title="Link two memories",
        annotations=IDEMPOTENT,
        description=(
            "Link two related memories both ways: each lists the other under ## Related. "
            "Linking twice changes nothing. link_text is the text shown in the source. "
            'Example: link_mem(source_id="payment-retries", target_id="stripe-webhooks")'
        ),
    )
    def link_mem(
        source_id: str, target_id: str, link_text: str | None = None
    ) -> Annotated[CallToolResult, LinkOut]:
        with tool_errors():
            change = vault.link(source_id, target_id, link_text)
        done = f"linked with {change.markdown}" if change.changed else "already linked"
        return link_reply(change, done)

    @mcp.tool(
        name="unlink_mem",
        title="Unlink two memories",
        annotations=IDEMPOTENT,
        description=(
            "Remove the ## Related links between two memories, both ways (links in the prose "
            'stay). Example: unlink_mem(source_id="payment-retries", target_id="old-policy")'
        ),
    )
    def unlink_mem(source_id: str, target_id: str) -> Annotated[CallToolResult, LinkOut]:
        with tool_errors():
            change = vault.unlink(source_id, target_id)
        return link_reply(change, "unlinked" if change.changed else "were not linked")

    @mcp.tool(
        name="get_current_date",
        title="Current date",
        annotations=READ,
        description=(
            "Today's date and time on this machine, with the timezone and UTC offset. format: "
            "iso (default), locale, timestamp (Unix seconds) or date_only. "
            'Example: get_current_date(format="date_only")'
        ),
    )
    def get_current_date(
        format: Literal["iso", "locale", "timestamp", "date_only"] = "iso",
    ) -> Annotated[CallToolResult, DateOut]:
        date, zone, offset = clock.current_date(format)
        out = DateOut(date=date, format=format, timezone=zone, utc_offset=offset)
        return reply(out, f"{date} ({zone}, UTC{offset})")

    @mcp.tool(
        name="verify_mem",
        title="Mark a memory as still true",
        annotations=IDEMPOTENT,
        description=(
            "Record that you checked a memory and it is still true (sets last_reviewed to "
            "now). Use it on memories the briefing flags as not reviewed for a long time, "
            'after confirming them. Example: verify_mem(id="deploy-order")'
        ),
    )
    def verify_mem(id: str) -> Annotated[CallToolResult, Verified]:
        with tool_errors():
            memory = vault.verify(id)
        return reply(
            Verified(
                id=memory.id,
                title=memory.title,
                path=memory.path,
                last_reviewed=memory.last_reviewed,
            ),
            f"Verified {memory.title!r} at {memory.last_reviewed}.",
        )

    @mcp.tool(
        name="get_context",
        title="Session briefing",
        annotations=READ,
        description=(
            "Call at the start of a session: a compact briefing of what to know — gotchas, "
            "memories of this scope, what changed in the last 7 days, and memories not "
            "reviewed for a long time — each with its age and id, within max_tokens. "
            'Example: get_context(scope="shop", max_tokens=1500)'
        ),
    )
    def get_context(
        scope: str | None = None, max_tokens: Annotated[int, Field(ge=100, le=50_000)] = 2000
    ) -> Annotated[CallToolResult, ContextOut]:
        with tool_errors():
            briefing = build_briefing(vault, scope, max_tokens, context_settings)
        return reply(
            ContextOut(briefing=briefing.text, tokens=briefing.tokens, items=briefing.items),
            briefing.text + f"\n(about {briefing.tokens} tokens)",
        )

    @mcp.tool(
        name="export_mem",
        title="Export memories",
        annotations=READ,
        description=(
            "Export memories with their metadata, links and usage as JSON, optionally only a "
            "category, tags or scope (archived ones too with include_archived). For backups or "
            'moving memories elsewhere. Example: export_mem(scope="shop")'
        ),
    )
    def export_mem(
        category: str | None = None,
        tags: list[str] | None = None,
        scope: str | None = None,
        include_archived: bool = False,
    ) -> Annotated[CallToolResult, ExportOut]:
        where = Filter(
            category, tuple(tags or ()), scope, False, None if include_archived else False
        )
        with tool_errors():
            records = list(export_records(vault, where))
        out = ExportOut(memories=records, count=len(records))
        return reply(out, "".join(dump(records, "json")))

    @mcp.tool(
        name="save_session_notes",
        title="Save session notes",
        annotations=WRITE,
        description=(
            "At the end of a session, save what happened: a summary, and optionally "
            "highlights, decisions and next steps. Name the memories involved as "
            "[[wikilinks]] or ids and the notes get linked with them both ways. "
            'Example: save_session_notes(summary="Fixed the flaky deploy; see '
            '[[deploy-order]]", next_steps=["Add a canary"])'
        ),
    )
    def save_session_notes_tool(
        summary: str,
        highlights: list[str] | None = None,
        next_steps: list[str] | None = None,
        decisions: list[str] | None = None,
        scope: str | None = None,
    ) -> Annotated[CallToolResult, SessionOut]:
        with tool_errors():
            notes = save_session_notes(vault, summary, highlights, next_steps, decisions, scope)
        memory = notes.memory
        linked = [LinkEnd(id=m.id, title=m.title, path=m.path) for m in notes.linked]
        out = SessionOut(
            id=memory.id,
            title=memory.title,
            path=memory.path,
            linked=linked,
            unresolved=notes.unresolved,
        )
        text = f"Saved {memory.title!r} ({memory.path}), linked with {len(linked)} memories."
        if notes.unresolved:
            text += f" Not found: {', '.join(notes.unresolved)}."
        return reply(out, text)

    @mcp.resource(
        "memvault://context",
        name="context",
        description="The session briefing (get_context with no scope).",
        mime_type="text/markdown",
    )
    def context_resource() -> str:
        return build_briefing(vault, None, 2000, context_settings).text

    @mcp.resource(
        "memvault://memory/{id}",
        name="memory",
        description="One memory's markdown file, by id, path or slug.",
        mime_type="text/markdown",
    )
    def memory_resource(id: str) -> str:
        try:
            return vault.file_text(id)
        except MemvaultError as exc:
            raise ResourceError(str(exc)) from exc

    @mcp.resource(
        "memvault://recent",
        name="recent",
        description=f"The {RECENT} most recently updated memories: title, id and first line.",
        mime_type="text/markdown",
    )
    def recent_resource() -> str:
        rows, total = vault.list_memories(limit=RECENT)
        lines = [f"# Recent memories ({len(rows)} of {total})", ""]
        for row in rows:
            memory = vault.get(row.path)
            lines.append(
                f"- **{row.title}** (id {row.id}, updated {row.age}): {first_line(memory.body)}"
            )
        return "\n".join(lines) + "\n"

    return mcp


def _markdown_text(out: MemoryOut) -> str:
    meta: list[str] = [f"id: {out.id}", f"path: {out.path}"]
    if out.tags:
        meta.append("tags: " + ", ".join(out.tags))
    meta.append(f"updated: {out.updated_at}")
    if out.backlinks:
        meta.append("backlinks: " + ", ".join(b.title or b.path or "" for b in out.backlinks))
    return f"# {out.title}\n({'; '.join(meta)})\n\n{out.content}"
