"""Search and its snippets: the notes a query ranks (bm25 of each note's best section, in the
SQL `search_sql.py` builds), their snippets and relevance, the notes a filter admits, and a page
of listed notes."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
from collections import Counter
from dataclasses import dataclass

from memvault.core import clock
from memvault.core.records import Filter, NoteRow, SearchHit, SearchPage
from memvault.index.connections import ConnectionPool
from memvault.index.names import NOTE_COLUMNS, Names, note_row
from memvault.index.search_sql import (
    FTS_ROWS,
    PAGE_EMPTIED,
    PAGE_ROW,
    PAGE_TABLE,
    SHOWN_EMPTIED,
    SHOWN_ROWS,
    SHOWN_TABLES,
    SORTS,
    SearchPlan,
    admitted_sql,
    count_sql,
    filter_sql,
    left_out_sql,
    matches_sql,
    page_held_sql,
    search_plan,
    search_sql,
    sections_sql,
    shown_rows_sql,
    shown_snippets_sql,
    snippet_text,
    window_sql,
    word_groups,
)
from memvault.index.usage_counts import Tally, Uses
from memvault.search.relevance import relevance

# A hit's relevance reads this many characters of its note at most (a few sections).
RELEVANCE_CHARS = 200_000
# A search ranks at most this many FTS rows (sections) of the notes it ranks (those with every
# word, or all its matches when fewer than a page have every word): bm25 costs about half a
# microsecond a row, so a word most of a 100k-note vault holds cost 40 ms. Past it the last
# RANKED rows are ranked and the answer says so (SearchPage.ranked). An index of fewer rows
# (a vault of 10k notes has about 10k) never looks for the window.
RANKED = 20_000
# A search counts its matching notes up to this many; past it the answer says "more than"
# (SearchPage.total_capped): counting every note a common word matches cost more than ranking.
COUNTED = 1_000


@dataclass
class Match:
    """A note a query ranked (lower is better: bm25, or a fused or cosine score negated), with
    the snippet to show for it and, when semantic search found it, its cosine similarity.
    Full-text's matches name the section (FTS row) that ranked them, whose snippet they show
    once they are on the page (`Search.with_snippets`). A `whole` match holds every word
    group of the query (it matched them all): its relevance needs no reading."""

    rowid: int
    rank: float
    snippet: str
    similarity: float = 0.0
    section: int | None = None
    whole: bool = False


@dataclass
class Ranking:
    """The matches a search ranked, best first, and how many FTS rows it ranked when a window
    of RANKED rows left the others out (0 when it ranked every match)."""

    matches: list[Match]
    window: int = 0


class Search:
    """Full-text search of the index, its snippets and relevance, and listings of notes."""

    def __init__(self, pool: ConnectionPool, uses: Tally, names: Names):
        """Search the index `pool` connects to; `uses` holds the uses not saved yet, `names`
        finds a note's row."""
        self._pool = pool
        self._uses = uses
        self._names = names
        self._scratch = threading.local()

    def page(
        self, text: str, limit: int = 10, offset: int = 0, where: Filter = Filter()
    ) -> SearchPage:
        """Notes matching a query, best first: those with all the query's words, then those
        with any of them. The filter is part of the FTS5 query (see search/filters.py), so only the
        notes that pass are scored; the SQL comes from index/search_sql.py."""
        plan = search_plan(text, where)
        if plan is None or limit <= 0:
            return SearchPage([], 0)
        with self._pool.borrowed("search"):
            return self._search(plan, limit, offset)

    def _search(self, plan: SearchPlan, limit: int, offset: int) -> SearchPage:
        """The page of `plan` from `offset`, with snippets and relevance, and the total."""
        now = clock.now_iso()
        wanted = max(offset, 0) + limit
        ranking = self._matches(plan, wanted, now)
        total, capped = len(ranking.matches), False
        if total == wanted or ranking.window:
            most = max(COUNTED, wanted)
            statement = count_sql(plan.loose, plan.live, now, most + 1, plan.period)
            total = int(self._pool.query(*statement)[0][0])
            total, capped = min(total, most), total > most
        page = self.with_snippets(ranking.matches[max(offset, 0) : wanted], plan.text)
        return SearchPage(
            self.hits(page, plan.text), total, total_capped=capped, ranked=ranking.window
        )

    def candidates(self, text: str, where: Filter, limit: int) -> list[Match]:
        """The best `limit` full-text matches in search order, for a hybrid search to fuse,
        without snippets: `with_snippets` makes those of the ones shown."""
        plan = search_plan(text, where)
        if plan is None or limit <= 0:
            return []
        with self._pool.borrowed("search"):
            return self._matches(plan, limit, clock.now_iso()).matches

    def with_snippets(self, page: list[Match], text: str) -> list[Match]:
        """The page's full-text matches for the query `text` with their sections' snippets,
        the query's words marked, made in a scratch table of those sections
        (search_sql.SHOWN_TABLES)."""
        sections = [match.section for match in page if match.section is not None]
        statement = shown_snippets_sql(text)
        if not sections or statement is None:
            return page
        scratch = self._page_table()
        rows = self._pool.query(*shown_rows_sql(sections))
        with scratch:
            try:
                for insert in SHOWN_ROWS:
                    scratch.executemany(insert, rows)
                made = {
                    int(row[0]): snippet_text(row[1], row[2]) for row in scratch.execute(*statement)
                }
            finally:
                for emptied in SHOWN_EMPTIED:
                    scratch.execute(emptied)
        return [
            match
            if match.section is None
            else dataclasses.replace(match, snippet=made.get(match.section, ""))
            for match in page
        ]

    def _matches(self, plan: SearchPlan, wanted: int, now: str) -> Ranking:
        """The first `wanted` notes `plan` ranks: those with every word, then the others."""
        ranked_strict, ranked_loose = plan.ranked
        if plan.strict == plan.loose:
            return self._ranked(plan, plan.loose, ranked_loose, wanted, now)
        # A note has the same bm25 in both queries (same phrases), so when fewer than a page
        # have every word, one ranking of the loose query puts those first: bm25's statistics
        # are gathered once, not once per pass.
        strict = matches_sql(plan.strict, plan.live, wanted, now, plan.period)
        every = [int(r[0]) for r in self._pool.query(*strict)]
        if len(every) == wanted:
            return self._ranked(plan, plan.strict, ranked_strict, wanted, now)
        return self._ranked(plan, plan.loose, ranked_loose, wanted, now, every)

    def _ranked(
        self,
        plan: SearchPlan,
        matched: str,
        ranked: str,
        wanted: int,
        now: str,
        first: list[int] | None = None,
    ) -> Ranking:
        """The best `wanted` notes of the FTS5 expression `ranked` (which matches what
        `matched` does), the notes `first` ahead: the last RANKED rows of them when more match
        (or as many as the page needs). Each is `whole` when it is among `first`, or when no
        `first` was given (`matched` needs every word)."""
        size = max(RANKED, wanted)
        lowest = 0
        if int(self._pool.query(FTS_ROWS)[0][0]) > size:
            found = self._pool.query(*window_sql(matched, plan.live, now, size, plan.period))
            lowest = int(found[0][0]) if found else 0
        chosen = first or []
        holding = set(chosen)
        rows = 2 * wanted
        while True:
            statement = search_sql(ranked, plan.live, rows, now, chosen, plan.period, lowest)
            result = self._pool.query(*statement)
            best: dict[int, Match] = {}
            for note, rank, section in result:
                if note not in best:
                    whole = first is None or note in holding
                    best[note] = Match(
                        int(note), float(rank), "", section=int(section), whole=whole
                    )
            if len(best) >= wanted or len(result) < rows:
                return Ranking(list(best.values())[:wanted], size if lowest else 0)
            rows *= 4

    def admitted(self, where: Filter) -> tuple[set[int] | None, set[int]]:
        """The notes `where` lets through, for a search that is not an FTS5 query (semantic):
        (only these, or None for every note) and the notes to leave out. The default filter
        leaves out the archived and expired few instead of naming every other note."""
        now = clock.now_iso()
        if where == Filter():
            return None, set(self._pool.column(*left_out_sql(now)))
        statement = admitted_sql(where, now)
        if statement is None:
            conditions, params = filter_sql(where, now)
            statement = f"SELECT n.rowid FROM notes n WHERE 1 = 1{conditions}", params
        return set(self._pool.column(*statement)), set()

    def hits(self, page: list[Match], query: str) -> list[SearchHit]:
        """The page's matches with what the index knows of each note, and their relevance to
        `query` (search/relevance.py): the share of its word groups each note holds (all of them
        for a `whole` match, without reading it), or its cosine similarity when higher."""
        if not page:
            return []
        groups = word_groups(query)
        unknown = [match for match in page if not match.whole]
        held = self._groups_held(unknown, groups) if groups and unknown else Counter[int]()
        for match in page:
            if match.whole:
                held[match.rowid] = len(groups)
        marks = ", ".join("?" for _ in page)
        rows = self._pool.query(
            f"SELECT n.rowid AS hit, {NOTE_COLUMNS} FROM notes n LEFT JOIN usage u ON u.id = n.id"
            f" WHERE n.rowid IN ({marks})",
            [match.rowid for match in page],
        )
        unsaved = self._uses.snapshot()
        notes = {int(row["hit"]): note_row(row, unsaved) for row in rows}
        return [
            SearchHit(
                id=note.id,
                title=note.title,
                path=note.path,
                version=note.version,
                category=note.category,
                tags=note.tags,
                score=round(-match.rank, 4),
                snippet=match.snippet,
                updated_at=note.updated_at,
                last_reviewed=note.last_reviewed,
                scope=note.scope,
                age=note.age,
                relevance=relevance(held[match.rowid], len(groups), match.similarity),
                created_by=note.created_by,
                updated_by=note.updated_by,
            )
            for match in page
            if (note := notes.get(match.rowid)) is not None
        ]

    def share_held(self, match: Match, query: str) -> float:
        """The share of `query`'s word groups the note of `match` holds (0..1), as relevance
        counts them: how far a hybrid search trusts a full-text ranking this note leads
        (search/fusion.py)."""
        groups = word_groups(query)
        if not groups:
            return 0.0
        if match.whole:
            return 1.0
        return self._groups_held([match], groups)[match.rowid] / len(groups)

    def _groups_held(self, page: list[Match], groups: list[str]) -> Counter[int]:
        """How many of the word groups each note of the page holds, matched in a scratch
        FTS5 table of the page's text (search_sql.PAGE_TABLE), the first RELEVANCE_CHARS
        characters of each note. Each thread keeps its table and empties it after each page:
        a new database and table for each search cost as much as the matching."""
        scratch = self._page_table()
        with scratch:
            try:
                for match in page:
                    budget = RELEVANCE_CHARS
                    for row in self._pool.query(*sections_sql(match.rowid)):
                        if budget <= 0:
                            break
                        scratch.execute(PAGE_ROW, tuple(row))
                        budget -= len(row[4])
                return Counter(
                    int(found[0])
                    for group in groups
                    for found in scratch.execute(*page_held_sql(group))
                )
            finally:
                scratch.execute(PAGE_EMPTIED)

    def _page_table(self) -> sqlite3.Connection:
        """This thread's in-memory database holding the empty scratch table."""
        scratch: sqlite3.Connection | None = getattr(self._scratch, "db", None)
        if scratch is None:
            scratch = sqlite3.connect(":memory:")
            for table in (PAGE_TABLE, *SHOWN_TABLES):
                scratch.execute(table)
            self._scratch.db = scratch
        return scratch

    def list_notes(
        self,
        where: Filter = Filter(),
        sort: str = "updated",
        limit: int = 50,
        offset: int = 0,
        counted: bool = True,
    ) -> tuple[list[NoteRow], int]:
        """A page of notes in the order asked for, and how many match in all (unless not
        `counted`: the page's own length, for a caller that wants the page alone, as a count
        scans every note the filter lets through)."""
        order = SORTS.get(sort)
        if order is None:
            raise ValueError(f"unknown sort {sort!r}")
        if where.categories:
            # `+`: not by the order's index, which SQLite would walk over every note to find
            # the few in a folder (20 ms at 10k notes for an empty one); the folder's finds them.
            order = f"+{order}"
        sql_where, params = filter_sql(where, clock.now_iso())
        unsaved = self._uses.snapshot()
        # Sorted by use, the unsaved uses take part in the order.
        pending, pending_params = unsaved_sql(unsaved if sort == "usage" else {})
        rows = self._pool.query(
            f"{pending} SELECT {NOTE_COLUMNS}, coalesce(u.access_count, 0) +"
            " coalesce(p.uses, 0) AS uses, max(coalesce(u.last_access, ''),"
            " coalesce(p.last, '')) AS used FROM notes n LEFT JOIN usage u ON u.id = n.id"
            f" LEFT JOIN pending p ON p.id = n.id WHERE 1 {sql_where} ORDER BY {order}"
            " LIMIT ? OFFSET ?",
            [*pending_params, *params, max(limit, 0), max(offset, 0)],
        )
        if not counted:
            return [note_row(r, unsaved) for r in rows], len(rows)
        total = self._pool.query(f"SELECT count(*) FROM notes n WHERE 1 {sql_where}", params)[0][0]
        return [note_row(r, unsaved) for r in rows], int(total)


def unsaved_sql(unsaved: dict[str, Uses]) -> tuple[str, list[object]]:
    """A `pending (id, uses, last)` table of the uses not saved yet, as a WITH clause with
    one parameter (a JSON object), however many there are. GROUP BY makes SQLite build it
    once, with an index for the join, rather than read the JSON again for each note."""
    return (
        "WITH pending (id, uses, last) AS (SELECT key, json_extract(value, '$[0]'),"
        " json_extract(value, '$[1]') FROM json_each(?) GROUP BY key)",
        [json.dumps(unsaved)],
    )
