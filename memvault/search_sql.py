"""The SQL of a search: what a query and a filter become in SQLite, as (sql, parameters).

Pure functions, so a test can print the SQL of a search and pin it (as sqlite-utils'
`search_sql()` does); `Index.search` runs them. The query's words come from `search.py`, the
filter's terms from `facets.py`; every term is a quoted FTS5 string, so no input is an error.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from .facets import filter_terms
from .records import Filter
from .search import parse_query

# bm25 weights for (title, aliases, tags, body, facets): a title match outranks a body match;
# facets (filters, see facets.py) never count.
WEIGHTS = (10.0, 6.0, 4.0, 1.0, 0.0)
_WEIGHTS = ", ".join(str(w) for w in WEIGHTS)
# Snippet highlight marks no text contains, turned into ** once the best snippet is chosen.
OPEN, CLOSE = "\x02", "\x03"

Statement = tuple[str, list[object]]


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
        where.category, where.tags, where.scope, where.only_scope, where.archived
    )
    strict, loose = (_filtered(e, required, excluded) for e in (query.strict(), query.loose()))
    return SearchPlan(strict, loose, where.archived is False)


def search_sql(
    expression: str, live: bool, limit: int, now: str, first: Sequence[int] = ()
) -> Statement:
    """The best `limit` matches of `expression` with their bm25 and snippets (SQLite makes
    snippets only for rows that enter the best `limit`), the rowids in `first` ahead of the
    rest. Those go as one JSON parameter, not one per rowid: a deep page may hold more than
    SQLite's limit of parameters."""
    matching, params = _matching(expression, live, now)
    order = "rowid IN (SELECT value FROM json_each(?)) DESC, rank" if first else "rank"
    return (
        f"SELECT rowid, bm25(notes_fts, {_WEIGHTS}) AS rank,"
        f" snippet(notes_fts, 3, '{OPEN}', '{CLOSE}', '…', 16),"
        f" snippet(notes_fts, 0, '{OPEN}', '{CLOSE}', '…', 16) FROM notes_fts"
        f" WHERE {matching} ORDER BY {order} LIMIT ?",
        [*params, *([json.dumps(list(first))] if first else []), limit],
    )


def matches_sql(expression: str, live: bool, limit: int, now: str) -> Statement:
    """Up to `limit` rowids of the notes matching `expression`, unranked (cheap: no bm25)."""
    matching, params = _matching(expression, live, now)
    return f"SELECT rowid FROM notes_fts WHERE {matching} LIMIT ?", [*params, limit]


def count_sql(expression: str, live: bool, now: str) -> Statement:
    """How many notes match `expression`."""
    matching, params = _matching(expression, live, now)
    return f"SELECT count(*) FROM notes_fts WHERE {matching}", params


def _matching(expression: str, live: bool, now: str) -> Statement:
    """The WHERE clause, and its parameters, for the FTS rows matching `expression`; `live`
    leaves out memories past their expiry that are not archived yet (few, found by index)."""
    if not live:
        return "notes_fts MATCH ?", [expression]
    expired = "SELECT rowid FROM notes WHERE expires_at <= ?"
    return f"notes_fts MATCH ? AND rowid NOT IN ({expired})", [expression, now]


def _filtered(expression: str, required: list[str], excluded: str | None) -> str:
    """A query's FTS5 expression with the filter's terms. Its words cannot match the facets
    column (see facets.py), so they need no column filter."""
    combined = f"({expression})"
    for term in required:
        combined = f"({combined}) AND ({term})"
    return f"({combined}) NOT ({excluded})" if excluded else combined
