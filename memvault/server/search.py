"""Tools over many memories: search, list, export."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.types import CallToolResult
from pydantic import Field

from ..exchange import dump, export_records
from ..output import ExportOut, ListOut, SearchOut
from ..properties import where_pairs
from ..records import Filter
from ..text import hit_line, list_heading, note_line, search_heading
from .common import READ, ToolGroup, reply, tool, tool_errors

# A where filter: property name -> the value it must have (a list property: must contain).
Where = dict[str, str | int | float | bool]
WHERE_GUIDE = (
    "where: properties that must equal the values given, e.g. "
    '{"repository": "shop", "outcome": "success"} (a list property matches when it holds '
    "the value; created_by / updated_by name who wrote it). Superseded memories are left "
    "out unless include_superseded=true. "
)


def covering(
    category: str | None,
    tags: list[str] | None,
    scope: str | None,
    only_scope: bool,
    archived: bool,
    where: Where | None,
    include_superseded: bool,
) -> Filter:
    """The Filter of search_mem's and list_mem's arguments."""
    return Filter(
        category,
        tuple(tags or ()),
        scope,
        only_scope,
        archived,
        where_pairs(where),
        include_superseded,
    )


class SearchTools(ToolGroup):
    """search_mem, list_mem and export_mem over one vault."""

    @tool(
        "search_mem",
        "Search memories",
        READ,
        "Full-text search over every memory, best first. Ask in plain words; also supports "
        '"exact phrase", prefix*, -excluded and OR. Filter by category or tags (all must '
        "match); scope gives that scope's memories plus global ones (only_scope: just the "
        "scope's). Archived and expired memories are left out unless archived=true. Search "
        "before answering about earlier work or decisions. " + WHERE_GUIDE + "Example: "
        'search_mem(query="payment retry policy", category="decision")',
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
        where: Where | None = None,
        include_superseded: bool = False,
    ) -> Annotated[CallToolResult, SearchOut]:
        with tool_errors():
            covered = covering(
                category, tags, scope, only_scope, archived, where, include_superseded
            )
            page = self.vault.search(query, limit, 0, covered, mode)
        lines = [search_heading(page, query), *(f"- {hit_line(hit)}" for hit in page.results)]
        return reply(SearchOut.of(page), "\n".join(lines))

    @tool(
        "list_mem",
        "List memories",
        READ,
        "List memories without a query, newest first (sort: updated, created, title, or "
        "usage: most used first), optionally in one category, with all of the given tags, "
        "or in a scope (plus global ones unless only_scope); archived=true lists the "
        "archive instead. " + WHERE_GUIDE + "Page with limit/offset. "
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
        where: Where | None = None,
        include_superseded: bool = False,
    ) -> Annotated[CallToolResult, ListOut]:
        with tool_errors():
            covered = covering(
                category, tags, scope, only_scope, archived, where, include_superseded
            )
            rows, total = self.vault.list_memories(covered, sort, limit, offset)
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
            category,
            tuple(tags or ()),
            scope,
            False,
            None if include_archived else False,
            include_superseded=True,
        )
        with tool_errors():
            records = list(export_records(self.vault, where))
        return reply(ExportOut.of(records), "".join(dump(records, "json")))
