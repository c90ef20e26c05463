"""The SQL of searches and listings: what a query and a filter become, as (sql, parameters).

Pure functions, so a test can print the SQL of a search and pin it (as sqlite-utils'
`search_sql()` does); `searching.Search.page` runs them. The query's words come from
`search/query.py`, the filter's terms from `search/filters.py`; every term is a quoted FTS5
string, so no input is an error.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from memvault.core.markdown import plain_snippet
from memvault.core.memory import ARCHIVE, category_spellings
from memvault.core.records import Filter
from memvault.index.rows import SECTION_BITS, section_rowids
from memvault.search.filters import filter_terms
from memvault.search.query import TOKENIZE, display_text, parse_query

# bm25 weights for (title, aliases, tags, body, facets): a title match outranks a body match;
# facets (filters, see search/filters.py) never count.
WEIGHTS = (10.0, 6.0, 4.0, 1.0, 0.0)
_WEIGHTS = ", ".join(str(w) for w in WEIGHTS)
# Snippet highlight marks no text contains, turned into ** once the best snippet is chosen.
OPEN, CLOSE = "\x02", "\x03"

Statement = tuple[str, list[object]]
# The note an FTS row belongs to: a long body has several rows (rows.sections).
NOTE_OF_ROW = f"(notes_fts.rowid >> {SECTION_BITS})"

# A folder in the archive, as SQL on `folder`.
ARCHIVED = f"(folder = '{ARCHIVE}' OR substr(folder, 1, {len(ARCHIVE) + 1}) = '{ARCHIVE}/')"
# A note in a folder or below it, as SQL on notes `n` with (folder, folder/, folder0): a range
# of `lower(folder)` ('0' follows '/'), which the index notes_folder_key finds.
_UNDER = "lower(n.folder) = ? OR (lower(n.folder) > ? AND lower(n.folder) < ?)"
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
    (the same when the query has one word), and the `ranked` pair of the two matches the same
    notes with the phrases that only rank added (search.Query); `live` leaves out expired
    memories; `text` is the query as typed; `period` is the SQL of a time window on notes `n`
    (period_sql)."""

    strict: str
    loose: str
    ranked: tuple[str, str]
    live: bool
    text: str
    period: Statement = ("", [])


def search_plan(text: str, where: Filter) -> SearchPlan | None:
    """The FTS5 expressions for a user's query under a filter; None when nothing is left to
    search for (an empty query, or only excluded words)."""
    query = parse_query(text)
    if query.empty:
        return None
    required, excluded = _terms(where)
    strict, loose, ranked_strict, ranked_loose = (
        _filtered(e, required, excluded)
        for e in (query.strict(), query.loose(), query.strict(True), query.loose(True))
    )
    return SearchPlan(
        strict,
        loose,
        (ranked_strict, ranked_loose),
        where.archived is False,
        text,
        period_sql(where),
    )


def admitted_sql(where: Filter, now: str) -> Statement | None:
    """The rowids of the notes a filter lets through, found by its facet terms in the
    full-text index (a seek of each term's list of notes, where conditions on `notes` read
    every note: 6 ms of CPU a search at 10k notes, 0.7 ms so); None for a filter without a
    term a note must match (NOT alone is no FTS5 query). A note of several sections comes once
    a section: the caller makes a set of them, which costs less than SQL's DISTINCT (a
    temporary B-tree: 12 ms of 14 for the 22k notes of a common tag at 100k)."""
    required, excluded = _terms(where)
    if not required:
        return None
    expression = _filtered(required[0], required[1:], excluded)
    matching, params = _matching(expression, where.archived is False, now, period_sql(where))
    return f"SELECT {NOTE_OF_ROW} FROM notes_fts WHERE {matching}", params


def left_out_sql(now: str) -> Statement:
    """The rowids of the notes the default filter leaves out: archived or superseded (by
    their facet terms), or past their expiry (by the index on it). Few, in any vault."""
    _required, excluded = _terms(Filter())
    return (
        f"SELECT DISTINCT {NOTE_OF_ROW} FROM notes_fts WHERE notes_fts MATCH ?"
        " UNION SELECT rowid FROM notes WHERE expires_at <= ?",
        [" OR ".join(f"({term})" for term in excluded), now],
    )


def _terms(where: Filter) -> tuple[list[str], list[str]]:
    """The FTS5 terms a note must match, and those it must not, under `where`
    (search/filters.py)."""
    return filter_terms(
        where.categories,
        where.tags,
        where.scopes,
        where.only_scope,
        where.archived,
        where.where,
        where.include_superseded,
    )


def search_sql(
    expression: str,
    live: bool,
    rows: int,
    now: str,
    first: Sequence[int] = (),
    period: Statement = ("", []),
    lowest: int = 0,
) -> Statement:
    """The best `rows` FTS rows (sections) matching `expression` by bm25, as (note, rank,
    section), those of the notes in `first` ahead of the rest: SQLite keeps the best `rows` as
    it goes (a note's best section is its first row in this order: the caller keeps that one),
    where grouping by note first put every match in a temporary table and sorted it (2-3 ms of
    4-7 at 10k notes for a common word). The notes in `first` go as one JSON parameter, not one
    per rowid: a deep page may hold more than SQLite's limit of parameters. A `lowest` rowid
    ranks only the rows from there on (the window of `window_sql`), and those of `first`."""
    matching, params = _matching(expression, live, now, period)
    chosen = json.dumps(list(first))
    preferred = "note IN (SELECT value FROM json_each(?))"
    if lowest and first:
        matching += (
            f" AND (notes_fts.rowid >= ? OR {NOTE_OF_ROW} IN (SELECT value FROM json_each(?)))"
        )
        params += [lowest, chosen]
    elif lowest:
        matching += " AND notes_fts.rowid >= ?"  # a range FTS5 seeks to: the rest is never read
        params.append(lowest)
    return (
        f"SELECT {NOTE_OF_ROW} AS note, bm25(notes_fts, {_WEIGHTS}) AS section_rank,"
        f" notes_fts.rowid AS section FROM notes_fts WHERE {matching}"
        f" ORDER BY {f'{preferred} DESC, ' if first else ''}section_rank LIMIT ?",
        [*params, *([chosen] if first else []), rows],
    )


# How many FTS rows (sections) the index holds: FTS5 keeps one row a section in its docsize
# table, which SQLite counts without reading the rows (5 µs at 10k notes, 15 at 100k).
FTS_ROWS = "SELECT count(*) FROM notes_fts_docsize"


def window_sql(
    expression: str, live: bool, now: str, size: int, period: Statement = ("", [])
) -> Statement:
    """The rowid of the `size`th FTS row matching `expression`, from the last: a search ranks
    the rows from there on (search.RANKED); no row when fewer match. Rowids alone, in the order
    FTS5 keeps them: no bm25, no positions."""
    matching, params = _matching(expression, live, now, period)
    return (
        f"SELECT notes_fts.rowid FROM notes_fts WHERE {matching}"
        " ORDER BY notes_fts.rowid DESC LIMIT 1 OFFSET ?",
        [*params, size - 1],
    )


def matches_sql(
    expression: str, live: bool, limit: int, now: str, period: Statement = ("", [])
) -> Statement:
    """Up to `limit` rowids of the notes matching `expression`, unranked (cheap: no bm25)."""
    matching, params = _matching(expression, live, now, period)
    return (
        f"SELECT DISTINCT {NOTE_OF_ROW} FROM notes_fts WHERE {matching} LIMIT ?",
        [*params, limit],
    )


def count_sql(
    expression: str, live: bool, now: str, most: int, period: Statement = ("", [])
) -> Statement:
    """How many notes match `expression`, counted up to `most`: counting stops there, so a
    word most notes hold costs no more than a rare one."""
    sql, params = matches_sql(expression, live, most, now, period)
    return f"SELECT count(*) FROM ({sql})", params


def word_groups(text: str) -> list[str]:
    """The FTS5 expression of each word group of a query (a word, phrase or OR-group), as
    `search_plan` reads it: what relevance counts (search/relevance.py)."""
    return parse_query(text).each_group()


# A scratch FTS5 table of one page's text, cut into tokens as notes_fts is: relevance matches
# each word group there, not in the index, where a prefix (`a*`) expands over the whole vault's
# words and costs as much as the search again for each group. Contentless (only rowids are read
# back), so it is emptied in one step for the next page.
PAGE_TABLE = (
    "CREATE VIRTUAL TABLE page USING fts5(title, aliases, tags, body, content = '',"
    f" tokenize = '{TOKENIZE}')"
)
PAGE_ROW = "INSERT INTO page (rowid, title, aliases, tags, body) VALUES (?, ?, ?, ?, ?)"
PAGE_EMPTIED = "INSERT INTO page (page) VALUES ('delete-all')"
# A second scratch table, of the sections shown on a page, with their text: their snippets are
# made there. In the index, each section's snippet cost a match of the whole query again
# (0.3 ms a section at 100k notes; 14 ms for a hybrid search's 50 candidates, against 3 for
# ranking them); here the query matches a page's few rows. The text is kept in a plain table
# beside it (external content), so both are emptied in one step each (deleting rows from an
# FTS5 table that holds its text reads and tokenizes each one again).
SHOWN_TABLES = (
    "CREATE TABLE shown_text (rowid INTEGER PRIMARY KEY, title, aliases, tags, body)",
    "CREATE VIRTUAL TABLE shown USING fts5(title, aliases, tags, body, content = 'shown_text',"
    f" tokenize = '{TOKENIZE}')",
)
SHOWN_ROWS = tuple(
    f"INSERT INTO {table} (rowid, title, aliases, tags, body) VALUES (?, ?, ?, ?, ?)"
    for table in ("shown_text", "shown")
)
SHOWN_EMPTIED = ("INSERT INTO shown (shown) VALUES ('delete-all')", "DELETE FROM shown_text")


def shown_rows_sql(sections: Sequence[int]) -> Statement:
    """Each of `sections` (FTS rows of the index) as SHOWN_ROWS take it: read by rowid, no
    match."""
    return (
        "SELECT rowid, title, aliases, tags, body FROM notes_fts"
        " WHERE rowid IN (SELECT value FROM json_each(?))",
        [json.dumps(list(sections))],
    )


def shown_snippets_sql(text: str) -> Statement | None:
    """The body's and the title's snippet of each shown section that matches the query `text`
    (its own words, as its ranking matched them, without a filter's terms: those only match
    the index's facets column), its words marked; None when the query has no words."""
    query = parse_query(text)
    if query.empty:
        return None
    return (
        f"SELECT rowid, snippet(shown, 3, '{OPEN}', '{CLOSE}', '…', 16),"
        f" snippet(shown, 0, '{OPEN}', '{CLOSE}', '…', 16) FROM shown WHERE shown MATCH ?",
        [query.loose(True)],
    )


def sections_sql(note: int) -> Statement:
    """Each FTS row of note `note` (its sections, in order), as PAGE_ROW takes it."""
    return (
        "SELECT rowid, title, aliases, tags, body FROM notes_fts WHERE rowid BETWEEN ? AND ?",
        list(section_rowids(note)),
    )


def holding_sql(note: int, text: str, most: int) -> Statement:
    """The first `most` sections of note `note` (rowid and body, in order) whose body holds the
    words of `text` one after another (FTS text: `search.fts_text`)."""
    first, last = section_rowids(note)
    phrase = '"' + text.replace('"', '""') + '"'
    return (
        "SELECT rowid, body FROM notes_fts WHERE notes_fts MATCH ? AND rowid BETWEEN ? AND ?"
        " ORDER BY rowid LIMIT ?",
        [f"body : {phrase}", first, last, most],
    )


def page_held_sql(group: str) -> Statement:
    """The notes of the scratch table that hold the word group `group`."""
    return f"SELECT DISTINCT rowid >> {SECTION_BITS} FROM page WHERE page MATCH ?", [group]


def _matching(expression: str, live: bool, now: str, period: Statement) -> Statement:
    """The WHERE clause, and its parameters, for the FTS rows matching `expression`; `live`
    leaves out memories past their expiry that are not archived yet (few, found by index);
    `period` keeps only the notes in a time window (period_sql)."""
    where, params = "notes_fts MATCH ?", list[object]([expression])
    if live:
        where += f" AND {NOTE_OF_ROW} NOT IN (SELECT rowid FROM notes WHERE expires_at <= ?)"
        params.append(now)
    if period[0]:
        # Looked up by rowid for each match: as cheap as the match itself, where a list of the
        # notes in the window costs the window's size (the whole vault for `since=1y`).
        where += f" AND EXISTS (SELECT 1 FROM notes n WHERE n.rowid = {NOTE_OF_ROW}{period[0]})"
        params += period[1]
    return where, params


def period_sql(filter: Filter) -> Statement:
    """SQL conditions on notes `n` (each starting with AND) for the filter's time window:
    `since` (inclusive) and `until` (exclusive), as UTC timestamps, on the updated or the
    created time (a note without a created time counts by its updated time)."""
    column = "coalesce(n.created_at, n.updated_at)"
    if filter.time_field == "updated":
        column = "n.updated_at"
    where, params = "", list[object]()
    if filter.since:
        where += f" AND {column} >= ?"
        params.append(filter.since)
    if filter.until:
        where += f" AND {column} < ?"
        params.append(filter.until)
    return where, params


def _filtered(expression: str, required: list[str], excluded: list[str]) -> str:
    """A query's FTS5 expression with the filter's terms. Its words cannot match the facets
    column (see search/filters.py), so they need no column filter."""
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
    if filter.scopes:
        # One IN, not an OR of `=` (SQLite 3.40 turned that OR into an IN that lost NOCASE).
        # With the global memories too (`+`: no index), the scope index would hand SQLite
        # every unscoped note to sort, where the order's or a category's index does better.
        marks = ", ".join("?" for _ in filter.scopes)
        where += (
            f" AND n.scope COLLATE NOCASE IN ({marks})"
            if filter.only_scope
            else f" AND (+n.scope COLLATE NOCASE IN ({marks}) OR +n.scope IS NULL)"
        )
        params += filter.scopes
    folders = [name for category in filter.categories for name in category_spellings(category)]
    if folders:
        where += " AND (" + " OR ".join(_UNDER for _ in folders) + ")"
        for folder in folders:
            params += [folder, folder + "/", folder + "0"]
    period, period_params = period_sql(filter)
    where += period
    params += period_params
    for tag in filter.tags:
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
    """The body's snippet, or the title's when only the title has the query's words, in
    plain text (core/markdown.py's `plain_snippet`), the query's words between `**` (words
    side by side marked as one)."""
    chosen = body or ""
    if OPEN not in chosen and OPEN in (title or ""):
        chosen = title or ""
    plain = plain_snippet(display_text(chosen))
    return plain.replace(f"{CLOSE} {OPEN}", " ").replace(OPEN, "**").replace(CLOSE, "**")
