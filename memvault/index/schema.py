"""The index's SQLite schema: derived tables rebuilt from the files, and kept state migrated.

Two kinds of tables live in one file. The derived ones (notes, aliases, tags, links and the FTS
table) are made again from the vault at any time, so a change to them bumps SCHEMA_VERSION and
an older index is simply rebuilt. The kept state (`usage`) exists nowhere else, so it is never
dropped: it changes by numbered migrations, applied in order and recorded in `migrations`.
"""

from __future__ import annotations

import functools
import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from memvault.errors import Unreadable
from memvault.search.query import TOKENIZE

log = logging.getLogger(__name__)

# Version of the derived tables (PRAGMA user_version); any other value means a rebuild.
SCHEMA_VERSION = 13

TABLES = f"""
CREATE TABLE notes (
    rowid INTEGER PRIMARY KEY,
    path TEXT NOT NULL,             -- vault-relative, '/'-separated; unique (notes_path)
    path_key TEXT NOT NULL,         -- lower-case path without .md: target of [[folder/note]]
    stem_key TEXT NOT NULL,         -- lower-case file name without .md: target of [[note]]
    title_key TEXT NOT NULL,
    folder TEXT NOT NULL,           -- the category; '' at the vault root
    id TEXT NOT NULL,
    title TEXT NOT NULL,
    tags TEXT NOT NULL,             -- JSON list: frontmatter tags, then inline #tags
    created_at TEXT,
    updated_at TEXT,
    last_reviewed TEXT,
    scope TEXT,                     -- project, account or fleet; NULL for a global memory
    expires_at TEXT,                -- after this the memory moves to archive/
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL,
    problem TEXT,                   -- why memvault will not rewrite the file (broken YAML)
    created_by TEXT,                -- who wrote it, and who changed it last (attribution)
    updated_by TEXT,
    superseded_by TEXT              -- the link to the memory that replaced it, as written
);
-- Every frontmatter key memvault does not keep in a column: one row per value (per list element).
CREATE TABLE properties (
    note INTEGER NOT NULL REFERENCES notes ON DELETE CASCADE,
    key TEXT NOT NULL COLLATE NOCASE,
    value TEXT NOT NULL COLLATE NOCASE
);
CREATE TABLE aliases (
    note INTEGER NOT NULL REFERENCES notes ON DELETE CASCADE,
    alias TEXT NOT NULL,
    alias_key TEXT NOT NULL
);
CREATE TABLE tags (
    note INTEGER NOT NULL REFERENCES notes ON DELETE CASCADE,
    tag TEXT NOT NULL COLLATE NOCASE
);
CREATE TABLE links (
    source INTEGER NOT NULL REFERENCES notes ON DELETE CASCADE,
    folder TEXT NOT NULL,           -- the source's folder, to prefer the nearest target
    raw TEXT NOT NULL,              -- the target as written
    key TEXT NOT NULL,              -- lower-case lookup key, without .md
    name TEXT NOT NULL,             -- last path segment of key
    alt TEXT,                       -- markdown links: the target read from the vault root
    has_path INTEGER NOT NULL,
    attachment INTEGER NOT NULL,
    related INTEGER NOT NULL,       -- listed under ## Related (written by link_mem)
    target INTEGER REFERENCES notes ON DELETE SET NULL  -- resolved note, NULL while dangling
);
-- A note's body is in sections, a row each, rowid `note << rows.SECTION_BITS` plus 0, 1, 2 ...
CREATE VIRTUAL TABLE notes_fts USING fts5(
    title, aliases, tags, body, facets, tokenize = '{TOKENIZE}'
);
-- FTS5 writes what a transaction indexed as a new segment each time its pending terms pass
-- `hashsize` (1 MB by default), and merges segments as they pile up: a rebuild with a larger
-- hashsize writes a few big segments instead of hundreds of small ones, and merges far less.
INSERT INTO notes_fts (notes_fts, rank) VALUES ('hashsize', 33554432);
"""

# A rebuild fills the tables first and sorts each index once at the end, which is several
# times faster than keeping every index up to date row by row. The notes and aliases indexes
# serve link resolution; the links indexes come after it, so resolving updates no index.
# Scope (case ignored), folder (lower-cased: a category filter) and review order serve the
# listings a SessionStart briefing makes: 45 ms of scans at 10k notes without them.
NOTE_INDEXES = """
CREATE UNIQUE INDEX notes_path ON notes(path);
CREATE INDEX notes_id ON notes(id);
CREATE INDEX notes_stem ON notes(stem_key, folder, path);
CREATE INDEX notes_path_key ON notes(path_key, folder, path);
CREATE INDEX notes_title ON notes(title_key, folder, path);
CREATE INDEX notes_updated ON notes(updated_at);
CREATE INDEX notes_scope ON notes(scope COLLATE NOCASE);
CREATE INDEX notes_folder ON notes(folder);
CREATE INDEX notes_folder_key ON notes(lower(folder));
CREATE INDEX notes_reviewed ON notes(coalesce(last_reviewed, created_at, updated_at), path);
CREATE INDEX notes_expires ON notes(expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX aliases_key ON aliases(alias_key);
CREATE INDEX aliases_note ON aliases(note);
CREATE INDEX tags_tag ON tags(tag, note);
CREATE INDEX tags_note ON tags(note);
CREATE INDEX properties_pair ON properties(key, value, note);
CREATE INDEX properties_note ON properties(note);
"""
LINK_INDEXES = """
CREATE INDEX links_source ON links(source);
CREATE INDEX links_target ON links(target);
CREATE INDEX links_key ON links(key);
CREATE INDEX links_name ON links(name);
CREATE INDEX links_alt ON links(alt);
"""

DERIVED_TABLES = ("notes", "aliases", "tags", "properties", "links", "notes_fts")

# Kept state, changed only by appending a migration: number n is KEPT_MIGRATIONS[n - 1].
# Migration 1 uses IF NOT EXISTS because indexes made before migrations were numbered
# already hold the table.
KEPT_MIGRATIONS = (
    """CREATE TABLE IF NOT EXISTS usage (
        id TEXT PRIMARY KEY,
        access_count INTEGER NOT NULL DEFAULT 0,
        last_access TEXT
    )""",
    # Semantic search (semantic/): a note's chunks by the hash of its file's content,
    # and each chunk text's vector by model. Keyed by content, not by path or rowid, so a rebuild, a
    # rename or a copied vault re-embeds nothing; kept through rebuilds like usage.
    """CREATE TABLE IF NOT EXISTS chunk_maps (
        note_hash TEXT NOT NULL,
        seq INTEGER NOT NULL,
        chunk_hash BLOB NOT NULL,
        start INTEGER NOT NULL,
        end INTEGER NOT NULL,
        PRIMARY KEY (note_hash, seq)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS embeddings (
        model TEXT NOT NULL,
        hash BLOB NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (model, hash)
    ) WITHOUT ROWID""",
    # Chunks are cut by the model's word-pieces now (semantic/chunks.py), so chunk maps name their
    # chunker. The old maps go (every note is cut again; a chunk whose text is the same finds
    # its vector). Run again after a kept table was dropped by hand, it empties the maps too:
    # the next embedding pass cuts the notes again, and re-embeds nothing unchanged.
    "DROP TABLE IF EXISTS chunk_maps",
    """CREATE TABLE IF NOT EXISTS chunk_maps (
        chunker TEXT NOT NULL,
        note_hash TEXT NOT NULL,
        seq INTEGER NOT NULL,
        chunk_hash BLOB NOT NULL,
        start INTEGER NOT NULL,
        end INTEGER NOT NULL,
        PRIMARY KEY (chunker, note_hash, seq)
    ) WITHOUT ROWID""",
    # Vectors by their text's hash alone, whatever the model, and chunk maps by the text they
    # name: a prune (semantic/prune.py) finds the vectors no map names by looking each one up,
    # without reading the vectors (26 MB, not 440, at 100k notes) or sorting every map's hash.
    "CREATE INDEX IF NOT EXISTS embeddings_hash ON embeddings(hash)",
    "CREATE INDEX IF NOT EXISTS chunk_maps_chunk ON chunk_maps(chunk_hash)",
    # The appends memvault acknowledged lately (index/appends.py keeps a window), so `check`
    # can tell when an editor saved a copy it read before one over it. By the memory's id, which a
    # rename keeps; kept through rebuilds, as the loss they show happened before them.
    """CREATE TABLE IF NOT EXISTS appends (
        note_id TEXT NOT NULL,
        at TEXT NOT NULL,
        text TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS appends_note ON appends(note_id)",
)
_MIGRATIONS_TABLE = "CREATE TABLE IF NOT EXISTS migrations (number INTEGER PRIMARY KEY)"


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, with a busy timeout
    so several memvault processes can share the file."""
    db = sqlite3.connect(path, timeout=30.0, check_same_thread=False, isolation_level=None)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA busy_timeout = 30000")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    return db


def writable_index(path: Path, fallback: Path | None) -> Path:
    """`path`, or `fallback` when this process cannot write the index there, said in one line
    with the fix: SQLite would open it read-only and fail at the first write, and give a -wal
    or -shm it makes the file's read-only mode. Unreadable when `fallback` cannot serve."""
    blocked = _unwritable(path)
    if blocked is None:
        return path
    why = f"the index {path} is read-only"
    if blocked != path:
        why = f"the index {path} cannot be written: {blocked} is read-only"
    if fallback is None or fallback == path or _unwritable(fallback) is not None:
        raise Unreadable(f"{why}; run: chmod u+w {blocked}")
    log.warning(
        "%s; using %s, made from the files, until you run: chmod u+w %s", why, fallback, blocked
    )
    return fallback


def _unwritable(path: Path) -> Path | None:
    """The first of the index file, its -wal and -shm (those that exist) and its folder (or
    the nearest one there is) that this process cannot write, or None (os.access: modes, ACLs,
    read-only mounts)."""
    for part in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        if part.is_file() and not os.access(part, os.W_OK):
            return part
    folder = path.parent
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    return None if os.access(folder, os.W_OK) else folder


def open_index(path: Path) -> tuple[sqlite3.Connection, bool]:
    """The index at `path`, ready to use, and whether its derived tables are empty and need a
    rebuild (new file, another schema version, or a damaged one, which is replaced). A folder
    at `path` is never replaced: that is a clear error."""
    if path.is_dir():
        raise Unreadable(f"the index path {path} is a folder; move it away or give --index-path")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise Unreadable(f"cannot create the index folder {path.parent}: {exc.strerror}") from exc
    db: sqlite3.Connection | None = None
    try:
        db = connect(path)
        fresh = _prepare(db)
    except sqlite3.DatabaseError as exc:
        log.warning("index %s is unreadable (%s); rebuilding it", path, exc)
        if db is not None:
            db.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        db = connect(path)
        fresh = _prepare(db)
    db.execute("PRAGMA foreign_keys = ON")
    return db, fresh


def _prepare(db: sqlite3.Connection) -> bool:
    """Bring the schema up to date; True when the derived tables were (re)created empty."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    found = _objects(db)
    missing, changed = _damage(found) if version == SCHEMA_VERSION else ([], [])
    _restore_kept(db, found)
    if version == SCHEMA_VERSION and not missing and not changed:
        db.execute("SELECT rowid FROM notes_fts LIMIT 1").fetchone()
        _migrate(db)
        return False
    if missing or changed:
        damage = [f"lacks {', '.join(missing)}"] if missing else []
        damage += [f"has another {', '.join(changed)}"] if changed else []
        log.warning("the index %s; rebuilding it", " and ".join(damage))
    elif version:
        log.warning("index schema %s is not %s; rebuilding it", version, SCHEMA_VERSION)
    drops = "".join(f"DROP TABLE IF EXISTS {t};" for t in DERIVED_TABLES)
    db.executescript(
        f"BEGIN IMMEDIATE; {drops} {TABLES} {NOTE_INDEXES} {LINK_INDEXES}"
        f" PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
    )
    _migrate(db)
    return True


def _objects(db: sqlite3.Connection) -> dict[str, str]:
    """Each table and index of a database, by name, with its SQL (whitespace collapsed)."""
    rows = db.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL")
    return {name: " ".join(sql.split()) for name, sql in rows}


@dataclass(frozen=True)
class _Shape:
    """A whole index as this version makes it: every table and index (name -> SQL, FTS5's own
    included), the kept ones by the number of the last migration that makes each (0: the
    migrations table), and what each migration drops."""

    objects: dict[str, str]
    made_by: dict[str, int]
    drops: dict[int, frozenset[str]]


@functools.cache
def _expected() -> _Shape:
    """The index this version makes, read from a fresh one made in memory."""
    with closing(sqlite3.connect(":memory:")) as db:
        db.executescript(TABLES + NOTE_INDEXES + LINK_INDEXES)
        before = after = _objects(db)
        made_by: dict[str, int] = {}
        drops: dict[int, frozenset[str]] = {}
        for number, statement in enumerate((_MIGRATIONS_TABLE, *KEPT_MIGRATIONS)):
            db.execute(statement)
            after = _objects(db)
            made_by.update({name: number for name, sql in after.items() if before.get(name) != sql})
            drops[number] = frozenset(before).difference(after)
            before = after
        made_by = {name: number for name, number in made_by.items() if name in after}
        return _Shape(after, made_by, drops)


def _damage(found: dict[str, str]) -> tuple[list[str], list[str]]:
    """The derived tables and indexes this index lacks, and those whose SQL differs from this
    version's (a hand-made change, a bad tool). FTS5's own tables are named only when the FTS
    table itself is there."""
    shape = _expected()
    expected = shape.objects
    derived = sorted(set(expected).difference(shape.made_by))
    missing = [name for name in derived if name not in found]
    changed = [name for name in derived if name in found and found[name] != expected[name]]
    shadows_too = "notes_fts" in found
    return [n for n in missing if shadows_too or not n.startswith("notes_fts_")], changed


def _restore_kept(db: sqlite3.Connection, found: dict[str, str]) -> None:
    """A kept table or index gone (dropped by hand) is made again: the migrations run again from
    the first one that made something gone (its state is lost, but the index works again),
    except one that only drops what is still here (the chunk maps an upgrade once cut again:
    run again, it would empty them, and a reindex then drop every vector). What a migration not
    yet applied will make is not gone, only new: it runs, and nothing before it."""
    shape = _expected()
    if "migrations" not in found and not _recall_done(db, found, shape):
        return
    done = {row[0] for row in db.execute("SELECT number FROM migrations")}
    gone = sorted(n for n, made_by in shape.made_by.items() if made_by in done and n not in found)
    if not gone:
        return
    log.warning("the index lacks %s (kept state); making it again", ", ".join(gone))
    first = min(shape.made_by[name] for name in gone)
    again = [
        number
        for number in sorted(done)
        if number >= first and not _would_empty(shape.drops.get(number, frozenset()), found)
    ]
    db.executemany("DELETE FROM migrations WHERE number = ?", [(n,) for n in again])


def _recall_done(db: sqlite3.Connection, found: dict[str, str], shape: _Shape) -> int:
    """An index that lost its record of migrations (dropped by hand, or copied without it):
    the migrations up to the first whose tables and indexes are not all here as this version
    makes them are recorded as done, since running them again would empty the chunk maps
    (migration 4) and a reindex then drop every vector; that first one and those after it run
    again (they only make what is missing). Returns the last number recorded; 0 for a new index
    (nothing recorded)."""
    last = 0
    for number in sorted(set(shape.made_by.values()).difference({0})):  # 0: this very table
        made = [name for name, made_by in shape.made_by.items() if made_by == number]
        if any(found.get(name) != shape.objects[name] for name in made):
            break
        last = number
    if last:
        log.warning(
            "the index lacks its record of migrations; %d found done by what it holds", last
        )
        with _transaction(db):
            db.execute(_MIGRATIONS_TABLE)
            db.executemany(
                "INSERT OR IGNORE INTO migrations (number) VALUES (?)",
                [(number,) for number in range(1, last + 1)],
            )
    return last


def _would_empty(dropped: frozenset[str], found: dict[str, str]) -> bool:
    """Whether a migration that drops `dropped` would empty what the index still holds."""
    return bool(dropped) and dropped <= set(found)


def _migrate(db: sqlite3.Connection) -> None:
    """Apply the kept-state migrations this index has not had yet, each in its transaction."""
    db.execute(_MIGRATIONS_TABLE)
    done = {row[0] for row in db.execute("SELECT number FROM migrations")}
    for number, statement in enumerate(KEPT_MIGRATIONS, start=1):
        if number in done:
            continue
        with _transaction(db):
            if not db.execute("SELECT 1 FROM migrations WHERE number = ?", (number,)).fetchone():
                db.execute(statement)
                db.execute("INSERT INTO migrations (number) VALUES (?)", (number,))


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taken at once (another process waits its turn), rolled back if
    anything in it fails."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def run_script(db: sqlite3.Connection, statements: str) -> None:
    """Run SQL statements inside the caller's transaction (executescript would commit it)."""
    pending = ""
    for line in statements.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            db.execute(pending)
            pending = ""
