"""The SQL of searches and listings: what a query and a filter become, as (sql, parameters).

Pure functions, so a test can print the SQL of a search and pin it (as sqlite-utils'
`search_sql()` does); `Index.search` runs them. The query's words come from `search.py`, the
filter's terms from `facets.py`; every term is a quoted FTS5 string, so no input is an error.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from .facets import filter_terms
from .model import ARCHIVE
from .records import Filter
from .rows import SECTION_BITS
from .search import display_text, parse_query

# bm25 weights for (title, aliases, tags, body, facets): a title match outranks a body match;
# facets (filters, see facets.py) never count.
WEIGHTS = (10.0, 6.0, 4.0, 1.0, 0.0)
_WEIGHTS = ", ".join(str(w) for w in WEIGHTS)
# Snippet highlight marks no text contains, turned into ** once the best snippet is chosen.
OPEN, CLOSE = "\x02", "\x03"

Statement = tuple[str, list[object]]
# The note an FTS row belongs to: a long body has several rows (rows.sections).
NOTE_OF_ROW = f"(notes_fts.rowid >> {SECTION_BITS})"

# A folder in the archive, as SQL on `folder`.
ARCHIVED = f"(folder = '{ARCHIVE}' OR substr(folder, 1, {len(ARCHIVE) + 1}) = '{ARCHIVE}/')"
# The orders a listing can take, as SQL on notes `n` and the listing's `uses` and `used` (the
# saved and unsaved uses of each note, and the last).
SORTS = {
    "updated": "n.updated_at DESC, n.path",
    "created": "n.created_at DESC, n.path",
    "title": "n.title_key, n.path",
    "usage": "uses DESC, used DESC, n.path",
    "reviewed": "coalesce(n.last_reviewed, n.created_at, n.updated_at), n.path",
}


@dataclass(frozen=True)
class SearchPlan:
    """A query and filter as FTS5 expressions: `strict` needs every word, `loose` any of them
    (the same when the query has one word); `live` leaves out expired memories."""

    strict: str
    loose: str
    live: bool


def search_plan(text: str, where: Filter) -> SearchPlan | None:
    """The FTS5 expressions for a user's query under a filter; None when nothing is left to
    search for (an empty query, or only excluded words)."""
    query = parse_query(text)
    if query.empty:
        return None
    required, excluded = filter_terms(
        where.category,
        where.tags,
        where.scope,
        where.only_scope,
        where.archived,
        where.where,
        where.include_superseded,
    )
    strict, loose = (_filtered(e, required, excluded) for e in (query.strict(), query.loose()))
    return SearchPlan(strict, loose, where.archived is False)


def search_sql(
    expression: str, live: bool, limit: int, now: str, first: Sequence[int] = ()
) -> Statement:
    """The best `limit` notes matching `expression`, by the bm25 of their best section, with
    that section's snippets (made only for those `limit` sections), the notes in `first` ahead
    of the rest. Those go as one JSON parameter, not one per rowid: a deep page may hold more
    than SQLite's limit of parameters."""
    matching, params = _matching(expression, live, now)
    preferred = "note IN (SELECT value FROM json_each(?))" if first else "0"
    return (
        f"WITH sections AS MATERIALIZED (SELECT {NOTE_OF_ROW} AS note, notes_fts.rowid AS section,"
        f" bm25(notes_fts, {_WEIGHTS}) AS section_rank FROM notes_fts WHERE {matching}),"
        f" best AS (SELECT note, section, min(section_rank) AS best_rank, {preferred} AS preferred"
        " FROM sections GROUP BY note ORDER BY preferred DESC, best_rank LIMIT ?)"
        f" SELECT note, best_rank, snippet(notes_fts, 3, '{OPEN}', '{CLOSE}', '…', 16),"
        f" snippet(notes_fts, 0, '{OPEN}', '{CLOSE}', '…', 16) FROM best"
        " JOIN notes_fts ON notes_fts.rowid = best.section WHERE notes_fts MATCH ?"
        " ORDER BY preferred DESC, best_rank",
        [*params, *([json.dumps(list(first))] if first else []), limit, expression],
    )


def matches_sql(expression: str, live: bool, limit: int, now: str) -> Statement:
    """Up to `limit` rowids of the notes matching `expression`, unranked (cheap: no bm25)."""
    matching, params = _matching(expression, live, now)
    return (
        f"SELECT DISTINCT {NOTE_OF_ROW} FROM notes_fts WHERE {matching} LIMIT ?",
        [*params, limit],
    )


def count_sql(expression: str, live: bool, now: str) -> Statement:
    """How many notes match `expression`."""
    matching, params = _matching(expression, live, now)
    return f"SELECT count(DISTINCT {NOTE_OF_ROW}) FROM notes_fts WHERE {matching}", params


def _matching(expression: str, live: bool, now: str) -> Statement:
    """The WHERE clause, and its parameters, for the FTS rows matching `expression`; `live`
    leaves out memories past their expiry that are not archived yet (few, found by index)."""
    if not live:
        return "notes_fts MATCH ?", [expression]
    expired = "SELECT rowid FROM notes WHERE expires_at <= ?"
    return f"notes_fts MATCH ? AND {NOTE_OF_ROW} NOT IN ({expired})", [expression, now]


def _filtered(expression: str, required: list[str], excluded: list[str]) -> str:
    """A query's FTS5 expression with the filter's terms. Its words cannot match the facets
    column (see facets.py), so they need no column filter."""
    combined = f"({expression})"
    for term in required:
        combined = f"({combined}) AND ({term})"
    for term in excluded:
        combined = f"({combined}) NOT ({term})"
    return combined


def filter_sql(filter: Filter, now: str) -> Statement:
    """SQL conditions on notes `n` (each starting with AND) and their parameters for a
    listing's Filter; `facets.filter_terms` gives a search the same rules as FTS5 terms."""
    archived = ARCHIVED.replace("folder", "n.folder")
    params: list[object] = []
    if filter.archived is None:
        where = ""
    elif filter.archived:
        where = f" AND {archived}"
    else:
        where = f" AND NOT {archived} AND (n.expires_at IS NULL OR n.expires_at > ?)"
        params.append(now)
    if filter.scope:
        where += " AND (n.scope = ? COLLATE NOCASE" + (
            ")" if filter.only_scope else " OR n.scope IS NULL)"
        )
        params.append(filter.scope)
    category = filter.category
    tags = filter.tags
    if category:
        folder = category.strip("/").lower()
        where += " AND (lower(n.folder) = ? OR substr(lower(n.folder), 1, ?) = ?)"
        params += [folder, len(folder) + 1, folder + "/"]
    for tag in tags or []:
        tag = tag.strip().lstrip("#")
        where += (
            " AND n.rowid IN (SELECT note FROM tags WHERE tag = ?"
            " OR substr(tag, 1, ?) = ? COLLATE NOCASE)"
        )
        params += [tag, len(tag) + 1, tag + "/"]
    for key, value in filter.where:
        where += " AND n.rowid IN (SELECT note FROM properties WHERE key = ? AND value = ?)"
        params += [key, value]
    if not filter.include_superseded:
        where += " AND n.superseded_by IS NULL"
    return where, params


def snippet_text(body: str | None, title: str | None) -> str:
    """The body's snippet, or the title's when only the title has the query's words."""
    chosen = body or ""
    if OPEN not in chosen and OPEN in (title or ""):
        chosen = title or ""
    return display_text(chosen.replace(OPEN, "**").replace(CLOSE, "**"))
