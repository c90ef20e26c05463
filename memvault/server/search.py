"""Tools over many memories: search, list, export, stats."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.types import CallToolResult
from pydantic import Field

from ..exchange import dump, export_records
from ..output import ExportOut, ListOut, SearchOut, StatsOut
from ..records import Filter, TimeField
from ..text import hit_line, list_heading, note_line, search_heading, stats_text
from .common import READ, Names, ToolGroup, reply, tool, tool_errors

WHEN = (
    "since/until: an ISO date or datetime, or 7d, 2w, 3 months, yesterday, last week, this "
    "month... (on the updated time; time_field=created for the created time). "
)


class SearchTools(ToolGroup):
    """search_mem, list_mem, export_mem and get_stats over one vault."""

    @tool(
        "search_mem",
        "Search memories",
        READ,
        "Full-text search over every memory, best first. Ask in plain words; also supports "
        '"exact phrase", prefix*, -excluded and OR. Filter by category (one or a list: any), '
        "tags (all must match); scope (one or a list) gives those scopes' memories plus global "
        "ones (only_scope: just the scopes'). " + WHEN + "Archived and expired memories are "
        "left out unless archived=true. Each hit has a relevance 0..1 (share of the query's "
        "words it holds, or its similarity in meaning); min_relevance drops weaker hits. "
        "prefer_recent breaks near-ties toward newer memories. Page with offset; has_more "
        "says when more follow. Search before answering about earlier work or decisions. "
        'Example: search_mem(query="payment retry policy", category=["decision", "gotcha"], '
        'since="3 months")',
    )
    def search_mem(
        self,
        query: str,
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
        offset: Annotated[int, Field(ge=0)] = 0,
        category: Names = None,
        tags: list[str] | None = None,
        scope: Names = None,
        only_scope: bool = False,
        archived: bool = False,
        since: str | None = None,
        until: str | None = None,
        time_field: TimeField = "updated",
        min_relevance: Annotated[float, Field(ge=0, le=1)] = 0.0,
        prefer_recent: bool = False,
        mode: Literal["hybrid", "keyword", "semantic"] | None = None,
    ) -> Annotated[CallToolResult, SearchOut]:
        where = Filter.of(
            category, tags, self.scoped(scope), only_scope, archived, since, until, time_field
        )
        with tool_errors():
            page = self.vault.search(
                query, limit, offset, where, mode, min_relevance, prefer_recent
            )
        lines = [search_heading(page, query), *(f"- {hit_line(hit)}" for hit in page.results)]
        if page.has_more:
            lines.append(f"More match: call again with offset={page.offset + len(page.results)}.")
        return reply(SearchOut.of(page), "\n".join(lines))

    @tool(
        "list_mem",
        "List memories",
        READ,
        "List memories without a query, newest first (sort: updated, created, title, or "
        "usage: most used first), optionally in a category (or any of a list), with all of "
        "the given tags, or in a scope or scopes (plus global ones unless only_scope); "
        + WHEN
        + "archived=true lists the archive instead. Page with limit/offset. "
        'Example: list_mem(category="gotcha", since="last week", limit=20)',
    )
    def list_mem(
        self,
        category: Names = None,
        tags: list[str] | None = None,
        sort: Literal["updated", "created", "title", "usage"] = "updated",
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
        offset: Annotated[int, Field(ge=0)] = 0,
        scope: Names = None,
        only_scope: bool = False,
        archived: bool = False,
        since: str | None = None,
        until: str | None = None,
        time_field: TimeField = "updated",
    ) -> Annotated[CallToolResult, ListOut]:
        where = Filter.of(
            category, tags, self.scoped(scope), only_scope, archived, since, until, time_field
        )
        with tool_errors():
            rows, total = self.vault.list_memories(where, sort, limit, offset)
        lines = [list_heading(len(rows), total, offset), *(f"- {note_line(r)}" for r in rows)]
        return reply(ListOut.of(rows, total), "\n".join(lines))

    @tool(
        "export_mem",
        "Export memories",
        READ,
        "Export memories with their metadata, links and usage as JSON, optionally only "
        "categories, tags or scopes (archived ones too with include_archived); "
        + WHEN
        + "For backups or moving memories elsewhere. "
        'Example: export_mem(scope="shop", since="this month")',
    )
    def export_mem(
        self,
        category: Names = None,
        tags: list[str] | None = None,
        scope: Names = None,
        include_archived: bool = False,
        since: str | None = None,
        until: str | None = None,
        time_field: TimeField = "updated",
    ) -> Annotated[CallToolResult, ExportOut]:
        where = Filter.of(
            category,
            tags,
            self.scoped(scope),
            False,
            None if include_archived else False,
            since,
            until,
            time_field,
        )
        with tool_errors():
            records = list(export_records(self.vault, where))
        return reply(ExportOut.of(records), "".join(dump(records, "json")))

    @tool(
        "get_stats",
        "Vault statistics",
        READ,
        "How many memories the vault holds and how big it is: counts and bytes by category "
        "and scope, counts by tag, and the memories never used (read, found or briefed). "
        "Example: get_stats()",
    )
    def get_stats(self) -> Annotated[CallToolResult, StatsOut]:
        with tool_errors():
            figures = self.vault.stats()
        return reply(StatsOut.of(figures), stats_text(figures))
