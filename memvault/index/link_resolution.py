"""Link resolution in SQL: which note each link's target names, by Obsidian's rules.

The rules, in DESIGN.md's order: exact path, path suffix, file stem, title, alias. Each tier
fills only links still unresolved, so the first tier that matches wins; within a tier a note in
the link's own folder wins, then the shortest path. These functions run inside the caller's
transaction on the index's connection.
"""

from __future__ import annotations

import sqlite3

from memvault.core.markdown import Link
from memvault.core.memory import Memory, folder_of
from memvault.index.rows import link_key, link_values

# (SQLite rejects a correlated ORDER BY here, hence the COALESCE of two lookups. The key
# indexes go on with folder and path, so the nearest-first lookup is one seek, not a walk of
# the folder.)
_TIERS = (
    ("{t}.has_path", "FROM notes n WHERE n.path_key = {t}.key"),
    ("{t}.alt IS NOT NULL", "FROM notes n WHERE n.path_key = {t}.alt"),
    (
        "{t}.has_path",
        "FROM notes n WHERE n.stem_key = {t}.name"
        " AND substr(n.path_key, -length({t}.key) - 1) = '/' || {t}.key",
    ),
    ("NOT {t}.has_path", "FROM notes n WHERE n.stem_key = {t}.key"),
    ("1", "FROM notes n WHERE n.title_key = {t}.key"),
    ("1", "FROM aliases a JOIN notes n ON n.rowid = a.note WHERE a.alias_key = {t}.key"),
)


def _tier_updates(table: str) -> list[str]:
    """One UPDATE per resolution tier for the links in `table` picked by a WHERE clause."""
    updates = []
    for condition, source in _TIERS:
        lookup = source.format(t=table)
        nearest = (
            f"coalesce((SELECT n.rowid {lookup} AND n.folder = {table}.folder"
            f" ORDER BY n.path LIMIT 1),"
            f" (SELECT n.rowid {lookup} ORDER BY length(n.path), n.path LIMIT 1))"
        )
        updates.append(
            f"UPDATE {table} SET target = {nearest} WHERE target IS NULL AND NOT attachment"
            f" AND {condition.format(t=table)} AND ({{where}})"
        )
    return updates


_LINK_TIERS = _tier_updates("links")
_PROBE_TIERS = _tier_updates("probe")


def resolve_all(db: sqlite3.Connection) -> None:
    """Resolve every link (after a rebuild loaded the notes)."""
    _resolve(db, "1")


def pick(db: sqlite3.Connection, where: str, params: tuple[object, ...]) -> None:
    """Mark the links a query's rowids name for `resolve_picked`. Each part of `where`
    (joined by UNION) then uses its own index, where one OR'ed WHERE would scan every link."""
    db.execute("CREATE TEMP TABLE IF NOT EXISTS pending (link INTEGER PRIMARY KEY)")
    db.execute(f"INSERT OR IGNORE INTO temp.pending {where}", params)


def pick_inbound(db: sqlite3.Connection, rowid: int) -> None:
    """Mark the links that resolve to a note about to go: they dangle, or find another note."""
    pick(db, "SELECT rowid FROM links WHERE target = ?", (rowid,))


def pick_affected(db: sqlite3.Connection, memory: Memory, rowid: int) -> None:
    """Mark the links to resolve again after a note was written: its own, and those that may
    name it by path, file name, title or alias."""
    keys = {link_key(memory.path), memory.stem.lower(), memory.title.lower()}
    keys |= {a.lower() for a in memory.aliases}
    marks = ", ".join("?" for _ in keys)
    where = " UNION ".join(
        f"SELECT rowid FROM links WHERE {condition}"
        for condition in ("source = ?", f"key IN ({marks})", "name = ?", "alt = ?")
    )
    pick(db, where, (rowid, *keys, memory.stem.lower(), link_key(memory.path)))


def resolve_picked(db: sqlite3.Connection) -> None:
    """Resolve the links `pick` marked, tier by tier; what stays NULL is dangling."""
    db.execute("CREATE TEMP TABLE IF NOT EXISTS pending (link INTEGER PRIMARY KEY)")
    _resolve(db, "rowid IN temp.pending")
    db.execute("DELETE FROM temp.pending")


def _resolve(db: sqlite3.Connection, picked: str) -> None:
    db.execute(f"UPDATE links SET target = NULL WHERE target IS NOT NULL AND {picked}")
    for sql in _LINK_TIERS:
        db.execute(sql.format(where=picked))


def resolve_one(db: sqlite3.Connection, source: str, link: Link) -> int | None:
    """The rowid of the note a link written in `source` resolves to, by the same rules."""
    row = (0, *link_values(folder_of(source), link, False))
    if row[7]:
        return None
    db.execute("CREATE TEMP TABLE IF NOT EXISTS probe AS SELECT * FROM links WHERE 0")
    db.execute("DELETE FROM probe")
    db.execute(
        "INSERT INTO probe (source, folder, raw, key, name, alt, has_path, attachment, related)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        row,
    )
    for sql in _PROBE_TIERS:
        db.execute(sql.format(where="1"))
    found = db.execute("SELECT target FROM probe").fetchone()
    return None if found is None or found[0] is None else int(found[0])
