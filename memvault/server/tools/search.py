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
from memvault.server.tools.common import READ, Names, ToolGroup, reply, tool, tool_errors

WHEN = (
    "since/until: an ISO date or datetime, or 7d, 2w, 3 months, yesterday, last week, this "
    "month... (on the updated time; time_field=created for the created time). "
)

# A where filter: property name -> the value it must have (a list property: must contain).
Where = dict[str, str | int | float | bool]
WHERE_GUIDE = (
    "where: properties that must equal the values given, e.g. "
    '{"repository": "shop", "outcome": "success"} (a list property matches when it holds '
    "the value; created_by / updated_by name who wrote it). Superseded memories are left "
    "out unless include_superseded=true. "
)


class SearchTools(ToolGroup):
    """search_mem, list_mem, export_mem and get_stats over one vault."""

    @tool(
        "search_mem",
        "Search memories",
        READ,
        "Search every memory by its words and its meaning, best first: mode hybrid (the "
        "default once the vault's notes are embedded; `mode` in the result says which ran), "
        "keyword (words only: names, exact terms) or semantic (meaning only). Ask in plain "
        'words; also supports "exact phrase", prefix*, -excluded and OR. Filter by category '
        "(one or a list: any), tags (all must match); scope (one or a list) gives those "
        "scopes' memories plus global ones (only_scope: just the scopes'). "
        + WHEN
        + "Archived and expired memories are left out unless archived=true. Each hit has a "
        "relevance 0..1 (share of the query's words it holds, or its similarity in meaning); "
        "min_relevance drops weaker hits. prefer_recent breaks near-ties toward newer "
        "memories. Page with offset; has_more says when more follow. Search before answering "
        "about earlier work or decisions. "
        + WHERE_GUIDE
        + 'Example: search_mem(query="payment retry policy", category=["decision", "gotcha"], '
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
        "The memories most like one (by id, path or title), best first, never itself: by "
        "meaning once the vault's notes are embedded, else by its distinctive words (`by` says "
        "which). Each hit's relevance is its similarity 0..1. Filter by category or scope as "
        "search_mem; archived and superseded memories are left out. Use it to find related "
        "work before starting on something, or to link a new memory to its neighbours. "
        'Example: similar_mem(id="payment-retries", limit=5)',
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
        "List memories without a query, newest first (sort: updated, created, title, or "
        "usage: most used first), optionally in a category (or any of a list), with all of "
        "the given tags, or in a scope or scopes (plus global ones unless only_scope); "
        + WHEN
        + "archived=true lists the archive instead. "
        + WHERE_GUIDE
        + "Page with limit/offset. "
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
            include_superseded=True,
        )
        with tool_errors():
            records = list(export_records(self.vault, where))
        return reply(ExportOut.of(records), "".join(dump(records, "json")))

    @tool(
        "get_stats",
        "Vault statistics",
        READ,
        "How many memories the vault holds and how big it is: counts and bytes by category "
        "and scope, counts by tag, the memories never used (read, found or briefed), and "
        "whether search by meaning is on (or why not) and how many memories wait to be "
        "embedded. Example: get_stats()",
    )
    def get_stats(self) -> Annotated[CallToolResult, StatsOut]:
        with tool_errors():
            figures = self.vault.stats()
        return reply(StatsOut.of(figures), stats_text(figures))
