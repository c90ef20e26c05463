"""Tools over many memories: search, list, export, stats."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.types import CallToolResult
from pydantic import Field

from memvault.core.properties import where_pairs
from memvault.core.records import Filter, TimeField
from memvault.features.export_import import dump, export_records
from memvault.presentation.lines import (
    hit_line,
    list_heading,
    note_line,
    search_heading,
    similar_heading,
    stats_text,
)
from memvault.presentation.output import ExportOut, ListOut, SearchOut, SimilarOut, StatsOut
from memvault.server.tools.common import READ, ToolGroup, reply, tool, tool_errors
from memvault.server.tools.params import (
    Mode,
    Names,
    Where,
)


class SearchTools(ToolGroup):
    """search_mem, list_mem, export_mem and get_stats over one vault."""

    @tool(
        "search_mem",
        "Search memories",
        READ,
        "Search memories by words and meaning, best first; search before answering about "
        'earlier work. Plain words, or "a phrase", prefix*, -word, OR.',
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
        mode: Mode | None = None,
        where: Where | None = None,
        include_superseded: bool = False,
    ) -> Annotated[CallToolResult, SearchOut]:
        with tool_errors():
            covered = Filter.of(
                category, tags, self.scoped(scope), only_scope, archived, since, until,
                time_field, where_pairs(where), include_superseded,
            )  # fmt: skip
            page = self.vault.search(
                query, limit, offset, covered, mode, min_relevance, prefer_recent
            )
        lines = [search_heading(page, query), *(f"- {hit_line(hit)}" for hit in page.results)]
        if page.has_more:
            lines.append(f"More match: call again with offset={page.offset + len(page.results)}.")
        return reply(SearchOut.of(page), "\n".join(lines))

    @tool(
        "similar_mem",
        "Find related memories",
        READ,
        "The memories most like one, by meaning (else by words), best first: related work, "
        "or the links for a new memory.",
    )
    def similar_mem(
        self,
        id: str,
        limit: Annotated[int, Field(ge=1, le=100)] = 5,
        category: Names = None,
        scope: Names = None,
    ) -> Annotated[CallToolResult, SimilarOut]:
        with tool_errors():
            found = self.vault.similar(id, limit, Filter.of(category, scope=self.scoped(scope)))
        lines = [similar_heading(found, id), *(f"- {hit_line(hit)}" for hit in found.results)]
        return reply(SimilarOut.of(found), "\n".join(lines))

    @tool(
        "list_mem",
        "List memories",
        READ,
        "List memories without a query, newest first, with search_mem's filters.",
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
        where: Where | None = None,
        include_superseded: bool = False,
    ) -> Annotated[CallToolResult, ListOut]:
        with tool_errors():
            covered = Filter.of(
                category, tags, self.scoped(scope), only_scope, archived, since, until,
                time_field, where_pairs(where), include_superseded,
            )  # fmt: skip
            rows, total = self.vault.list_memories(covered, sort, limit, offset)
        lines = [list_heading(len(rows), total, offset), *(f"- {note_line(r)}" for r in rows)]
        return reply(ListOut.of(rows, total), "\n".join(lines))

    @tool(
        "export_mem",
        "Export memories",
        READ,
        "Export memories with their metadata, links and usage as JSON, for a backup or a move.",
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
            include_superseded=True,
        )
        with tool_errors():
            records = list(export_records(self.vault, where))
        return reply(ExportOut.of(records), "".join(dump(records, "json")))

    @tool(
        "get_stats",
        "Vault statistics",
        READ,
        "Counts and sizes by category, scope and tag, memories never used, and whether search "
        "by meaning is ready.",
    )
    def get_stats(self) -> Annotated[CallToolResult, StatsOut]:
        with tool_errors():
            figures = self.vault.stats()
        return reply(StatsOut.of(figures), stats_text(figures))
