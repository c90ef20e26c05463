"""The notes' text as the index holds it, read without their files: where a text stands in a
note (with some context either side), and a span of a note's body (a semantic hit's snippet).
The index keeps each body in sections of at most SECTION_CHARS characters (index/rows.py), in
FTS text: CJK characters stand apart, with gaps a reader must take out again."""

from __future__ import annotations

import re

from memvault.index.connections import ConnectionPool
from memvault.index.names import Names
from memvault.index.rows import SECTION_CHARS, section_rowids
from memvault.index.search_sql import holding_sql, sections_sql, shown_rows_sql
from memvault.search.query import as_written, display_text, fts_text

# A text a note holds in more places than this (a line repeated through a log) is shown around
# its first few only.
PASSAGES = 3


class Bodies:
    """Reads of the notes' bodies from the index's sections."""

    def __init__(self, pool: ConnectionPool, names: Names):
        """Read the index `pool` connects to; `names` finds a note's row by its path."""
        self._pool = pool
        self._names = names

    def passages(self, path: str, text: str, margin: int) -> list[str]:
        """Up to PASSAGES places where the words of `text` stand one after another in the body
        of the note at `path` (whatever markup lies between them: a snippet is plain text),
        each with `margin` characters either side (at most a section's), as the index holds
        the body: a few sections read, never the file."""
        note = self._names.rowid(path)
        words = re.findall(r"[^\W_]+", fts_text(text))
        if note is None or not words:
            return []
        spaced = re.compile(r"[\W_]+".join(re.escape(word) for word in words))
        margin = min(margin, SECTION_CHARS)
        first, last = section_rowids(note)
        found: list[str] = []
        for rowid, body in self._pool.query(*holding_sql(note, " ".join(words), PASSAGES)):
            for held in spaced.finditer(body):
                if len(found) == PASSAGES:
                    break
                before = body[max(held.start() - margin, 0) : held.start()]
                after = body[held.end() : held.end() + margin]
                if len(before) < margin and rowid > first:
                    before = self._section(rowid - 1)[len(before) - margin :] + before
                if len(after) < margin and rowid < last:
                    after += self._section(rowid + 1)[: margin - len(after)]
                found.append(display_text(before + held.group() + after))
        return found

    def span(self, note: int, start: int, end: int) -> str | None:
        """Characters `start` to `end` of a note's body, from the sections the index holds (a
        hit's snippet without reading its file: 0.3-0.6 ms a hit); None when the index holds
        the text before `end` otherwise than as written (CJK, held with gaps) or not at all."""
        held = ""
        for row in self._pool.query(*sections_sql(note)):
            held += row["body"] or ""
            if len(held) >= end:
                break
        if len(held) < end or not as_written(held):
            return None
        return held[start:end]

    def _section(self, rowid: int) -> str:
        """The body text of one FTS row (a section of a note); empty when there is none."""
        rows = self._pool.query(*shown_rows_sql([rowid]))
        return str(rows[0]["body"]) if rows else ""
