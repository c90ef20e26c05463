"""Memories by their names: ids, paths, file names, titles, aliases and property values, the
links between notes, and a note's row as the NoteRow callers get (its unsaved uses added)."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterable

from memvault.core import clock
from memvault.core.markdown import Link
from memvault.core.memory import VERSION_LENGTH
from memvault.core.records import Filter, LinkRow, NoteRow
from memvault.index import link_resolution
from memvault.index.connections import ConnectionPool
from memvault.index.rows import link_key
from memvault.index.search_sql import NOTE_OF_ROW, filter_sql
from memvault.index.usage_counts import Tally, Uses, merged
from memvault.search.filters import scopes_term

# The columns of `notes n LEFT JOIN usage u` that make a NoteRow (`note_row`).
NOTE_COLUMNS = (
    f"n.id, n.title, n.path, substr(n.hash, 1, {VERSION_LENGTH}) AS version,"
    " n.folder AS category, n.tags, n.created_at, n.updated_at,"
    " n.last_reviewed, n.scope, n.expires_at, coalesce(u.access_count, 0) AS access_count,"
    " u.last_access, n.problem, n.created_by, n.updated_by, n.superseded_by"
)
_ROW_FIELDS = [f.name for f in dataclasses.fields(NoteRow) if f.name != "age"]
_BY_TITLE = "SELECT path FROM notes WHERE title_key = ? ORDER BY length(path), path"


class Names:
    """Lookups of memories by what they are called, and of the links between them."""

    def __init__(self, pool: ConnectionPool, uses: Tally):
        """The names in the index `pool` connects to; `uses` holds the uses not saved yet."""
        self._pool = pool
        self._uses = uses

    def resolve(self, identifier: str) -> list[str]:
        """Paths of the memories an identifier names exactly, by the first rule that matches:
        id, relative path, file stem, title, alias (all but the id case-insensitive)."""
        ident = identifier.strip()
        key = link_key(ident)
        for sql, value in (
            ("SELECT path FROM notes WHERE id = ? ORDER BY path", ident),
            ("SELECT path FROM notes WHERE path_key = ? ORDER BY path", key),
            ("SELECT path FROM notes WHERE stem_key = ? ORDER BY length(path), path", key),
            (_BY_TITLE, ident.lower()),
            (
                "SELECT DISTINCT n.path FROM aliases a JOIN notes n ON n.rowid = a.note"
                " WHERE a.alias_key = ? ORDER BY n.path",
                ident.lower(),
            ),
        ):
            rows = self._pool.query(sql, (value,))
            if rows:
                return [r[0] for r in rows]
        return []

    def titled(self, title: str) -> list[str]:
        """Paths of every memory with this title (case ignored), in any scope: what `resolve`
        gives only when no file stem or path is named so."""
        return [r[0] for r in self._pool.query(_BY_TITLE, (title.strip().lower(),))]

    def resolve_link(self, source: str, link: Link) -> str | None:
        """The path a link in `source` resolves to, by the same rules as the bulk resolution."""
        with self._pool.transaction() as db:
            rowid = link_resolution.resolve_one(db, source, link)
            found = db.execute("SELECT path FROM notes WHERE rowid = ?", (rowid,)).fetchone()
        return found[0] if found else None

    def note(self, path: str) -> NoteRow | None:
        """What the index holds of the note at `path`, with its uses; None when not indexed."""
        rows = self._pool.query(
            f"SELECT {NOTE_COLUMNS} FROM notes n LEFT JOIN usage u ON u.id = n.id WHERE path = ?",
            (path,),
        )
        return note_row(rows[0], self._uses.snapshot()) if rows else None

    def holding(self, keys: Iterable[str], value: str) -> list[tuple[str, str]]:
        """(path, key) of each note whose property among `keys` holds `value` (case ignored)."""
        wanted = list(keys)
        marks = ", ".join("?" for _ in wanted)
        rows = self._pool.query(
            "SELECT DISTINCT n.path, p.key FROM properties p JOIN notes n ON n.rowid = p.note"
            f" WHERE p.key IN ({marks}) AND p.value = ? ORDER BY n.path, p.key",
            [*wanted, value],
        )
        return [(r[0], r[1]) for r in rows]

    def rowid(self, path: str) -> int | None:
        """The note's row in the index (its vectors' key), None when it is not indexed."""
        rows = self._pool.query("SELECT rowid FROM notes WHERE path = ?", (path,))
        return int(rows[0][0]) if rows else None

    def has_id(self, memory_id: str) -> bool:
        """Whether a note with exactly this id is indexed."""
        return bool(self._pool.query("SELECT 1 FROM notes WHERE id = ? LIMIT 1", (memory_id,)))

    def stem_taken(self, stem: str) -> bool:
        """Whether a note's file name is `stem` (ignoring case)."""
        return bool(self._pool.query("SELECT 1 FROM notes WHERE stem_key = ?", (stem.lower(),)))

    def stem_paths(self, stem: str) -> list[str]:
        """The paths of the notes whose file name is `stem` (ignoring case)."""
        sql = "SELECT path FROM notes WHERE stem_key = ? ORDER BY path"
        return [row[0] for row in self._pool.query(sql, (stem.lower(),))]

    def every(
        self, where: Filter = Filter(archived=None, include_superseded=True)
    ) -> list[tuple[str, str]]:
        """(path, name) for every title, file name and alias, for fuzzy recall."""
        sql_where, params = filter_sql(where, clock.now_iso())
        rows = self._pool.query(
            f"SELECT path, title FROM notes n WHERE 1 {sql_where}"
            f" UNION ALL SELECT path, stem_key FROM notes n WHERE 1 {sql_where}"
            " UNION ALL SELECT n.path, a.alias FROM aliases a JOIN notes n ON n.rowid = a.note"
            f" WHERE 1 {sql_where}",
            params * 3,
        )
        return [(r[0], r[1]) for r in rows]

    def with_all_words(
        self,
        words: list[str],
        limit: int,
        largest: int,
        scopes: Iterable[str | None] | None = None,
    ) -> list[str]:
        """Paths of notes of at most `largest` bytes containing every one of `words`
        (candidates for a duplicate), of any scope or only of `scopes` (None among them: the
        global notes)."""
        if not words:
            return []
        terms = [f'"{w}"' for w in words]
        expression = " AND ".join(terms if scopes is None else [*terms, scopes_term(scopes)])
        rows = self._pool.query(
            f"SELECT DISTINCT n.path FROM notes_fts JOIN notes n ON n.rowid = {NOTE_OF_ROW}"
            " WHERE notes_fts MATCH ? AND n.size <= ? LIMIT ?",
            (expression, largest, limit),
        )
        return [r[0] for r in rows]

    def outgoing(self, path: str) -> list[LinkRow]:
        """The links in the note at `path` to other notes (resolved or not), in order."""
        return self._links("s.path = ?", path)

    def backlinks(self, path: str) -> list[LinkRow]:
        """The links from other notes that resolve to the note at `path`."""
        return self._links("t.path = ?", path)

    def _links(self, where: str, path: str) -> list[LinkRow]:
        """The links between notes (attachments left out) that `where` picks."""
        rows = self._pool.query(
            "SELECT s.path, s.id, s.title, l.raw, t.path, t.id, t.title, l.related FROM links l"
            " JOIN notes s ON s.rowid = l.source LEFT JOIN notes t ON t.rowid = l.target"
            f" WHERE {where} AND NOT l.attachment ORDER BY s.path, l.rowid",
            (path,),
        )
        return [LinkRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7])) for r in rows]


def note_row(row: sqlite3.Row, unsaved: dict[str, Uses]) -> NoteRow:
    """A row with NOTE_COLUMNS as a record: those columns are NoteRow's fields but `age`;
    its uses not saved yet are added to the saved ones."""
    fields = {name: row[name] for name in _ROW_FIELDS}
    fields.update(category=fields["category"] or None, tags=json.loads(fields["tags"]))
    uses = unsaved.get(fields["id"])
    if uses is not None:
        count, last = merged((fields["access_count"], fields["last_access"] or ""), uses)
        fields.update(access_count=count, last_access=last)
    return NoteRow(**fields, age=clock.age(fields["updated_at"]))
