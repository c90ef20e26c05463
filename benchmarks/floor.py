"""The floor: the least work that indexes a vault for full-text search, as a yardstick.

    python benchmarks/floor.py VAULT INDEX      # build INDEX, print {"notes": n, "links": m}

It walks the vault, reads each markdown file, parses the frontmatter with PyYAML's C loader,
extracts wikilinks with one regex (counted only), and inserts title and body into one FTS5
table in one transaction. `search` is one bm25 query on that table.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
from pathlib import Path

import yaml

LINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
WORD = re.compile(r"\w+")
SCHEMA = (
    "CREATE VIRTUAL TABLE notes USING fts5("
    "title, body, tokenize = 'porter unicode61 remove_diacritics 2')"
)
TITLE_WEIGHT = 10.0


def markdown_files(root: str) -> list[str]:
    """Every .md file under root, skipping dot-folders."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found += [os.path.join(folder, f) for f in files if f.endswith(".md")]
    return found


def split(text: str, fallback: str) -> tuple[str, str]:
    """(title, body) of one note: the frontmatter's title, else the file name."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            meta = yaml.load(text[4:end], Loader=yaml.CSafeLoader)
            title = meta.get("title") if isinstance(meta, dict) else None
            return str(title or fallback), text[end + 5 :]
    return fallback, text


def build(vault: str, index: str) -> dict[str, int]:
    """Index every note of `vault` into a new SQLite file `index`."""
    db = sqlite3.connect(index, isolation_level=None)
    db.execute(SCHEMA)
    notes = links = 0
    db.execute("BEGIN")
    for path in markdown_files(vault):
        with open(path, encoding="utf-8") as f:
            title, body = split(f.read(), Path(path).stem)
        links += len(LINK.findall(body))
        db.execute("INSERT INTO notes (title, body) VALUES (?, ?)", (title, body))
        notes += 1
    db.execute("COMMIT")
    db.close()
    return {"notes": notes, "links": links}


def search(db: sqlite3.Connection, query: str, limit: int = 10) -> list[tuple[int, str, float]]:
    """The best `limit` notes containing any word of `query`, by bm25 (title weighted).

    Any word, not every word: like memvault, it still answers when one word is missing, and
    bm25 ranks the notes that match more of the words first.
    """
    expression = " OR ".join(f'"{w}"' for w in WORD.findall(query))
    return db.execute(
        f"SELECT rowid, title, bm25(notes, {TITLE_WEIGHT}, 1.0) AS score FROM notes"
        " WHERE notes MATCH ? ORDER BY score LIMIT ?",
        (expression, limit),
    ).fetchall()


if __name__ == "__main__":
    print(json.dumps(build(sys.argv[1], sys.argv[2])))
