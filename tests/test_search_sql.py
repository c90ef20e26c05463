"""The SQL a search becomes, pinned by examples: what a query and a filter turn into."""

from __future__ import annotations

import pytest

from memvault.core.records import Filter
from memvault.index.search_sql import filter_sql, search_plan, search_sql, window_sql

EVERY = Filter(archived=None, include_superseded=True)
NOT_ARCHIVED = 'NOT (facets : "\ue0006929655039044768773")'
NOT_SUPERSEDED = 'NOT (facets : "\ue00011461621207089461442")'
OUTCOME = 'facets : "\ue00012361190900178608302"'
DECISION = 'facets : "\ue0001559538794693009546"'


@pytest.mark.parametrize(
    ("query", "where", "strict", "loose"),
    [
        (
            "payment retries",
            EVERY,
            '((("payment") AND ("retries")))',
            '(("payment" OR "retries"))',
        ),
        (
            "What did we decide about payment retries?",
            EVERY,
            '((("decide") AND ("payment") AND ("retries")))',
            '(("decide" OR "payment" OR "retries"))',
        ),
        (
            "What's Melanie's favourite trail? She didn't say.",
            EVERY,
            '((("Melanie") AND ("favourite") AND ("trail")))',
            '(("Melanie" OR "favourite" OR "trail"))',
        ),
        (
            "O'Brien's e-mail, we'll see",
            EVERY,
            '((("O Brien") AND ("e mail") AND ("see")))',
            '(("O Brien" OR "e mail" OR "see"))',
        ),
        (
            'retry* policy "exact phrase" queue OR topic lag',
            EVERY,
            '((("retry"*) AND ("policy") AND ("exact phrase") AND ("queue" OR "topic")'
            ' AND ("lag")))',
            '(("retry"* OR "policy" OR "exact phrase" OR "queue" OR "topic" OR "lag"))',
        ),
        (
            '"exact phrase" -draft',
            EVERY,
            '((("exact phrase")) NOT "draft")',
            '(("exact phrase") NOT "draft")',
        ),
        (
            "支付重试策略",
            EVERY,
            '((("支 付") AND ("付 重") AND ("重 试") AND ("试 策") AND ("策 略")))',
            '(("支 付" OR "付 重" OR "重 试" OR "试 策" OR "策 略"))',
        ),
        (
            "retry*",
            Filter(category="decision", archived=None, include_superseded=True),
            f'(((("retry"*)))) AND ({DECISION})',
            f'((("retry"*))) AND ({DECISION})',
        ),
        (
            "deploy",
            Filter(),
            f'((((("deploy")))) {NOT_ARCHIVED}) {NOT_SUPERSEDED}',
            f'(((("deploy"))) {NOT_ARCHIVED}) {NOT_SUPERSEDED}',
        ),
        (
            "deploy",
            Filter(archived=None, where=(("Outcome", "SUCCESS"),)),
            f'((((("deploy")))) AND ({OUTCOME})) {NOT_SUPERSEDED}',
            f'(((("deploy"))) AND ({OUTCOME})) {NOT_SUPERSEDED}',
        ),
    ],
)
def test_a_query_and_a_filter_become_fts5_expressions(
    query: str, where: Filter, strict: str, loose: str
) -> None:
    plan = search_plan(query, where)
    assert plan is not None
    assert (plan.strict, plan.loose, plan.live) == (strict, loose, where.archived is False)


@pytest.mark.parametrize(
    ("query", "strict", "loose"),
    [
        (
            "What's Melanie's favourite trail? She didn't say.",
            '((("Melanie" OR "Melanie s favourite") AND ("favourite" OR "favourite trail")'
            ' AND ("trail")))',
            '(("Melanie" OR "Melanie s favourite" OR "favourite" OR "favourite trail" OR "trail"))',
        ),
        (
            "retry* policy queue OR topic lag -draft",
            '((("retry"*) AND ("policy" OR "policy queue") AND ("queue" OR "topic") AND ("lag"))'
            ' NOT "draft")',
            '(("retry"* OR "policy" OR "policy queue" OR "queue" OR "topic" OR "lag") NOT "draft")',
        ),
    ],
)
def test_words_typed_side_by_side_are_a_phrase_in_the_ranking_only(
    query: str, strict: str, loose: str
) -> None:
    """The pair sits among its first word's alternatives: it matches no note that word does
    not, so matching and counting leave it out. A stop word, a prefix or a word OR'd to the
    one before it makes none."""
    plan = search_plan(query, EVERY)
    assert plan is not None
    assert plan.ranked == (strict, loose)


@pytest.mark.parametrize("query", ["", "   ", "-draft", "*", '""'])
def test_nothing_to_search_for_is_no_plan(query: str) -> None:
    assert search_plan(query, Filter()) is None


def test_the_ranking_sql_puts_notes_with_every_word_first_and_skips_expired_ones() -> None:
    sql, params = search_sql('"x"', live=True, rows=10, now="2026-01-01T00:00:00Z", first=[3, 4])
    assert sql == (
        "SELECT (notes_fts.rowid >> 20) AS note, bm25(notes_fts, 10.0, 6.0, 4.0, 1.0, 0.0)"
        " AS section_rank, notes_fts.rowid AS section FROM notes_fts WHERE notes_fts MATCH ?"
        " AND (notes_fts.rowid >> 20) NOT IN (SELECT rowid FROM notes WHERE expires_at <= ?)"
        " ORDER BY note IN (SELECT value FROM json_each(?)) DESC, section_rank LIMIT ?"
    )
    assert params == ['"x"', "2026-01-01T00:00:00Z", "[3, 4]", 10]
    plain_sql, plain_params = search_sql('"x"', live=False, rows=5, now="unused")
    assert plain_sql.endswith("WHERE notes_fts MATCH ? ORDER BY section_rank LIMIT ?")
    assert plain_params == ['"x"', 5]


def test_a_window_ranks_the_last_rows_only_and_keeps_the_notes_put_first() -> None:
    """A window is a rowid range FTS5 seeks to; the notes put first are ranked wherever they
    stand (a condition SQLite checks on each match instead)."""
    sql, params = search_sql('"x"', live=False, rows=5, now="unused", lowest=7 << 20)
    assert sql.endswith(
        "WHERE notes_fts MATCH ? AND notes_fts.rowid >= ? ORDER BY section_rank LIMIT ?"
    )
    assert params == ['"x"', 7 << 20, 5]
    sql, params = search_sql('"x"', live=False, rows=5, now="unused", first=[3], lowest=7 << 20)
    assert (
        " AND (notes_fts.rowid >= ? OR (notes_fts.rowid >> 20) IN (SELECT value FROM json_each(?)))"
        in sql
    )
    assert params == ['"x"', 7 << 20, "[3]", "[3]", 5]
    sql, params = window_sql('"x"', live=False, now="unused", size=100)
    assert sql == (
        "SELECT notes_fts.rowid FROM notes_fts WHERE notes_fts MATCH ?"
        " ORDER BY notes_fts.rowid DESC LIMIT 1 OFFSET ?"
    )
    assert params == ['"x"', 99]


def test_a_listing_filter_is_sql_on_notes() -> None:
    where, params = filter_sql(
        Filter(category="Work", tags=("#ops",), scope="shop", where=(("outcome", "success"),)),
        "NOW",
    )
    assert where == (
        " AND NOT (n.folder = 'archive' OR substr(n.folder, 1, 8) = 'archive/')"
        " AND (n.expires_at IS NULL OR n.expires_at > ?)"
        " AND (+n.scope COLLATE NOCASE IN (?) OR +n.scope IS NULL)"
        " AND (lower(n.folder) = ? OR (lower(n.folder) > ? AND lower(n.folder) < ?))"
        " AND n.rowid IN (SELECT note FROM tags WHERE tag = ?"
        " OR substr(tag, 1, ?) = ? COLLATE NOCASE)"
        " AND n.rowid IN (SELECT note FROM properties WHERE key = ? AND value = ?)"
        " AND n.superseded_by IS NULL"
    )
    assert params == [
        "NOW",
        "shop",
        "work",
        "work/",
        "work0",
        "ops",
        4,
        "ops/",
        "outcome",
        "success",
    ]
    assert filter_sql(EVERY, "NOW") == ("", [])
    several = Filter(
        category=("Arch_Decision", "gotcha"),
        scope=("shop", "shared"),
        only_scope=True,
        archived=None,
        since="2024-01-01T00:00:00Z",
        until="2024-02-01T00:00:00Z",
        time_field="created",
        include_superseded=True,
    )
    under = "lower(n.folder) = ? OR (lower(n.folder) > ? AND lower(n.folder) < ?)"
    created = "coalesce(n.created_at, n.updated_at)"
    assert filter_sql(several, "NOW") == (
        " AND n.scope COLLATE NOCASE IN (?, ?)"
        f" AND ({under} OR {under} OR {under})"
        f" AND {created} >= ? AND {created} < ?",
        ["shop", "shared", "arch_decision", "arch_decision/", "arch_decision0", "arch-decision",
         "arch-decision/", "arch-decision0", "gotcha", "gotcha/", "gotcha0",
         "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"],
    )  # fmt: skip
