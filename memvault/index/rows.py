"""The rows the index stores for one file: pure functions of its text, so a rebuild can make
them in worker processes while the main process writes to SQLite."""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass, replace
from typing import cast

from memvault.core.ages import Seen, update_time
from memvault.core.markdown import Link, find_links, find_tags, related_links
from memvault.core.memory import Memory, folder_of, stamp_of
from memvault.core.properties import indexed_pairs
from memvault.search.filters import note_facets
from memvault.search.query import fts_text

# One encoder for every note: json.dumps with options builds a new one per call.
_json_list = json.JSONEncoder(ensure_ascii=False).encode
LinkValues = tuple[str, str, str, str, str | None, int, int, int]
FtsRow = tuple[str, str, str, str, str]
# FTS5's snippet() weighs every match in a row against every other one, so its time grows with
# the square of a row's text (a 4 MB note took 39 s to search): a body goes into the FTS table in
# sections of at most SECTION_CHARS characters, a row each, and a note ranks by its best one.
SECTION_CHARS = 32_000
# A note's sections are FTS rows `note rowid << SECTION_BITS` plus 0, 1, 2 ...
SECTION_BITS = 20

# Positions of updated_at, the mtime and the content hash in NoteRows.note.
_UPDATED_AT = 9
_MTIME = 14
_HASH = 15


@dataclass
class NoteRows:
    """Everything one note puts in the index, ready to insert, and the `updated_at` its
    frontmatter gives (`stamp`), for `redated`."""

    note: tuple[object, ...]
    aliases: list[tuple[str, str]]
    tags: list[str]
    properties: list[tuple[str, str]]
    links: list[LinkValues]
    fts: list[FtsRow]
    problem: str | None
    stamp: str | None = None


def note_rows(memory: Memory, size: int, mtime_ns: int, digest: str) -> NoteRows:
    """The notes, aliases, tags, properties, links and full-text rows of one memory; `digest`
    is its file's `content_hash`. The category's words go into the tags column, so a word found
    only in the category (`decision`, `architecture-decision`) finds the note."""
    folder = folder_of(memory.path)
    known = {t.lower() for t in memory.tags}
    tags = memory.tags + [t for t in find_tags(memory.body) if t.lower() not in known]
    links = find_links(memory.body)
    related = {link.start for link in related_links(memory.body, links)}
    pairs = indexed_pairs(memory.metadata)
    meta = memory.metadata
    superseded_by = _text(meta.get("superseded_by"))
    facets = note_facets(folder, tags, memory.scope, pairs, superseded_by is not None)
    head, *more = sections(fts_text(memory.body))
    return NoteRows(
        note=(
            memory.path,
            link_key(memory.path),
            memory.stem.lower(),
            memory.title.lower(),
            folder,
            memory.id,
            memory.title,
            _json_list(tags),
            memory.created_at,
            memory.updated_at,
            memory.last_reviewed,
            memory.scope,
            memory.expires_at,
            size,
            mtime_ns,
            digest,
            memory.problem,
            _text(meta.get("created_by")),
            _text(meta.get("updated_by")),
            superseded_by,
        ),
        aliases=[(a, a.lower()) for a in memory.aliases],
        tags=tags,
        properties=pairs,
        links=[link_values(folder, link, link.start in related) for link in links],
        fts=[
            (
                fts_text(memory.title),
                fts_text(" ".join(memory.aliases)),
                " ".join([*tags, folder]),
                head,
                facets,
            ),
            *(("", "", "", section, facets) for section in more),
        ],
        problem=memory.problem,
        stamp=stamp_of(meta),
    )


def _text(value: object) -> str | None:
    """A frontmatter value memvault keeps in a column, as text; None when absent or empty."""
    if isinstance(value, list):
        value = value[0] if value else None
    text = "" if value is None else str(value).strip()
    return text or None


def sections(body: str) -> list[str]:
    """A body cut into pieces of at most SECTION_CHARS characters, each ending after a space or a
    line break where there is one, so no word is cut in two; one piece for most notes."""
    pieces: list[str] = []
    start = 0
    while len(body) - start > SECTION_CHARS:
        end = start + SECTION_CHARS
        cut = max(body.rfind(" ", start, end), body.rfind("\n", start, end)) + 1
        end = cut if cut > start else end
        pieces.append(body[start:end])
        start = end
    return [*pieces, body[start:]]


def section_rowids(note: int) -> tuple[int, int]:
    """The first and last FTS rowid the sections of note `note` may take."""
    first = note << SECTION_BITS
    return first, first + (1 << SECTION_BITS) - 1


def redated(rows: NoteRows, seen: dict[str, Seen]) -> NoteRows:
    """The rows with the `updated_at` that what the index `seen` of their path before gives
    (core/ages.py): a file whose mtime alone moved (copied, touched) keeps its time, one edited
    since takes its mtime. Rows are made in worker processes, which know nothing of the index."""
    note = rows.note
    before = seen.get(str(note[0]))
    if before is None:
        return rows
    updated = update_time(rows.stamp, cast(int, note[_MTIME]), str(note[_HASH]), before)
    if updated == note[_UPDATED_AT]:
        return rows
    return replace(rows, note=(*note[:_UPDATED_AT], updated, *note[_UPDATED_AT + 1 :]))


def link_key(target: str) -> str:
    """The lower-case lookup key of a link target or path: no leading '/', no '.md'."""
    key = target.strip().replace("\\", "/").lstrip("/").lower()
    return key[:-3] if key.endswith(".md") else key


def link_keys(source: str, link: Link) -> tuple[str, str, str | None, bool]:
    """(key, last segment, key from the vault root, has a path) of a link in `source`."""
    row = link_values(folder_of(source), link, False)
    return row[2], row[3], row[4], bool(row[5])


def link_values(folder: str, link: Link, related: bool) -> LinkValues:
    """A link's row without its source: (folder, raw, key, name, alt, has_path, attachment,
    related)."""
    key = link_key(link.target)
    alt: str | None = None
    if link.kind == "markdown" and (folder or key.startswith(".")):
        relative = posixpath.normpath(posixpath.join(folder.lower(), key))
        if not relative.startswith(".."):
            key, alt = relative, link_key(posixpath.normpath(link.target))
    elif link.kind == "markdown":
        key = posixpath.normpath(key)
    has_path = "/" in key
    return (
        folder,
        link.target,
        key,
        key.rsplit("/", 1)[-1],
        alt if alt != key else None,
        int(has_path),
        int(link.is_attachment),
        int(related),
    )
