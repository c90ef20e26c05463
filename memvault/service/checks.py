"""`memvault check`: what is wrong in a vault (broken, one-sided and ambiguous links, duplicate
ids, frontmatter memvault cannot parse, files it cannot read, appends an editor saved over, with
`--secrets` files holding secrets), and the repairs `check --fix` makes."""

from __future__ import annotations

from datetime import timedelta

from memvault.core import clock
from memvault.core.document import Document
from memvault.core.markdown import find_links
from memvault.core.memory import new_id
from memvault.core.records import Skipped
from memvault.core.reports import (
    AmbiguousLink,
    BrokenLink,
    CheckReport,
    DuplicateId,
    FileSecret,
    LinkPair,
    LostAppend,
    Malformed,
)
from memvault.core.secrets import find_secrets
from memvault.errors import MemvaultError
from memvault.index.appends import APPEND_DAYS
from memvault.index.database import Index
from memvault.index.rows import link_key
from memvault.storage.files import VaultStore
from memvault.writes.links import LinkService
from memvault.writes.writer import Writer


def find_problems(
    index: Index, store: VaultStore, links: LinkService, skipped: list[Skipped]
) -> CheckReport:
    """Everything `check` reports, read from the index (no file is written; only the files of
    memories appended to lately are read), with the files the last walk of the vault skipped
    (`skipped`) that the index has no problem for."""
    malformed = [Malformed(*found) for found in index.reports.problems()]
    known = {bad.path for bad in malformed}
    return CheckReport(
        broken_links=broken_links(index, store),
        one_sided_links=[LinkPair(*pair) for pair in links.one_sided()],
        duplicate_ids=[DuplicateId(*found) for found in index.reports.duplicate_ids()],
        malformed=malformed,
        ambiguous_links=[AmbiguousLink(*found) for found in index.reports.ambiguous()],
        unreadable=[s for s in skipped if s.path not in known],
        lost_appends=lost_appends(index, store),
    )


def broken_links(index: Index, store: VaultStore) -> list[BrokenLink]:
    """Every link to no note, once for each note and name (`[[Gone]]` twice, or `[[gone]]`
    and `[[Gone.md]]`, are one), with the lines of the file it is on: the files of notes
    with broken links are read, each once."""
    written: dict[tuple[str, str], list[str]] = {}
    for source, raw in index.reports.dangling():
        written.setdefault((source, link_key(raw)), []).append(raw)
    docs: dict[str, Document | None] = {}
    found = []
    for (source, _key), names in written.items():
        if source not in docs:
            docs[source] = _document(store, source)
        doc = docs[source]
        found.append(BrokenLink(source, names[0], [] if doc is None else _lines(doc, set(names))))
    return found


def _document(store: VaultStore, path: str) -> Document | None:
    """A note's parsed file, or None when it went or cannot be read since it was indexed."""
    try:
        return store.read(path)[1]
    except (OSError, MemvaultError):
        return None


def _lines(doc: Document, names: set[str]) -> list[int]:
    """The lines of the file (from 1, the frontmatter counted) of the links in its body to a
    target written as one of `names`."""
    first = doc.head.count("\n") + 1
    body = doc.body
    return sorted(
        {
            first + body.count("\n", 0, link.start)
            for link in find_links(body)
            if link.target in names and not link.is_attachment
        }
    )


def lost_appends(index: Index, store: VaultStore) -> list[LostAppend]:
    """The appends memvault acknowledged in the last APPEND_DAYS that their memory no longer
    holds, in any file with its id: an editor read it before the append and saved that copy
    over it later. memvault's own changes forget what they take out (`Appends.forget_taken_out`);
    a memory gone, or a file that cannot be read now, is left to the other checks."""
    since = clock.iso(clock.now() - timedelta(days=APPEND_DAYS))
    bodies: dict[str, str | None] = {}
    lost: dict[int, LostAppend] = {}
    held: set[int] = set()
    for record, path, at, text in index.appends.since(since):
        if path not in bodies:
            memory = store.read_if_readable(path)
            bodies[path] = None if memory is None else memory.body
        body = bodies[path]
        if body is None or text in body:
            held.add(record)
        else:
            lost.setdefault(record, LostAppend(path, at, text))
    return [found for record, found in lost.items() if record not in held]


def secrets_in_files(index: Index, store: VaultStore) -> list[FileSecret]:
    """Every secret in the vault's files (frontmatter included), by path and line; a file gone
    or unreadable since it was indexed is left to the other checks."""
    found = []
    for path in sorted(path for path, _size, _mtime in index.entries.indexed_files()):
        try:
            text = store.read_text(path)
        except MemvaultError:
            continue
        found += [FileSecret(path, s.kind, s.line) for s in find_secrets(text)]
    return found


def repair(index: Index, store: VaultStore, writer: Writer, links: LinkService) -> list[str]:
    """Add the missing side of one-sided links and give duplicated ids fresh ones; what was
    done, one line each. The caller holds the vault lock."""
    fixed = [f"linked back {b} -> {a}" for a, b in links.repair()]
    return fixed + _fix_duplicate_ids(index, store, writer)


def _fix_duplicate_ids(index: Index, store: VaultStore, writer: Writer) -> list[str]:
    """Give every copy after the first (oldest, then by path) a fresh id."""
    fixed = []
    for memory_id, paths in index.reports.duplicate_ids():
        copies = [store.read_for_edit(p) for p in paths]
        copies.sort(key=lambda c: (c[0].created_at or "", c[0].path))
        for memory, doc, base in copies[1:]:
            if doc.writable:
                fresh = new_id()
                writer.save(memory.path, doc, memory.body, {"id": fresh}, base)
                fixed.append(f"new id {fresh} for {memory.path} (was {memory_id})")
    return fixed
