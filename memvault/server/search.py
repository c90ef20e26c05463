"""Tools over many memories: search, list, export, stats."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.types import CallToolResult
from pydantic import Field

from ..exchange import dump, export_records
from ..output import ExportOut, ListOut, SearchOut, StatsOut
from ..records import Filter
from ..text import hit_line, list_heading, note_line, search_heading, stats_text
from .common import READ, ToolGroup, reply, tool, tool_errors


class SearchTools(ToolGroup):
    """search_mem, list_mem, export_mem and get_stats over one vault."""

    @tool(
        "search_mem",
        "Search memories",
        READ,
        "Full-text search over every memory, best first. Ask in plain words; also supports "
        '"exact phrase", prefix*, -excluded and OR. Filter by category or tags (all must '
        "match); scope gives that scope's memories plus global ones (only_scope: just the "
        "scope's). Archived and expired memories are left out unless archived=true. Search "
        "before answering about earlier work or decisions. "
        'Example: search_mem(query="payment retry policy", category="decision")',
    )
    def search_mem(
        self,
        query: str,
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
        category: str | None = None,
        tags: list[str] | None = None,
        scope: str | None = None,
        only_scope: bool = False,
        archived: bool = False,
        mode: Literal["hybrid", "keyword", "semantic"] | None = None,
    ) -> Annotated[CallToolResult, SearchOut]:
        where = Filter(category, tuple(tags or ()), scope, only_scope, archived)
        with tool_errors():
            page = self.vault.search(query, limit, 0, where, mode)
        lines = [search_heading(page, query), *(f"- {hit_line(hit)}" for hit in page.results)]
        return reply(SearchOut.of(page), "\n".join(lines))

    @tool(
        "list_mem",
        "List memories",
        READ,
        "List memories without a query, newest first (sort: updated, created, title, or "
        "usage: most used first), optionally in one category, with all of the given tags, "
        "or in a scope (plus global ones unless only_scope); archived=true lists the "
        "archive instead. Page with limit/offset. "
        'Example: list_mem(category="gotcha", limit=20)',
    )
    def list_mem(
        self,
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
            rows, total = self.vault.list_memories(where, sort, limit, offset)
        lines = [list_heading(len(rows), total, offset), *(f"- {note_line(r)}" for r in rows)]
        return reply(ListOut.of(rows, total), "\n".join(lines))

    @tool(
        "export_mem",
        "Export memories",
        READ,
        "Export memories with their metadata, links and usage as JSON, optionally only a "
        "category, tags or scope (archived ones too with include_archived). For backups or "
        'moving memories elsewhere. Example: export_mem(scope="shop")',
    )
    def export_mem(
        self,
        category: str | None = None,
        tags: list[str] | None = None,
        scope: str | None = None,
        include_archived: bool = False,
    ) -> Annotated[CallToolResult, ExportOut]:
        where = Filter(
            category, tuple(tags or ()), scope, False, None if include_archived else False
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
