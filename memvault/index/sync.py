"""The indexer: brings the index in step with the files, by a full rebuild or an incremental sync.

What changed is a diff of (path, size, mtime_ns) lists, as zk does: `diff` is pure, `changes`
walks and reads the index to feed it, `sync` reads only what differs. A rebuild parses files in
worker processes (`workers.py`) while this process writes to SQLite.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import BrokenExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from memvault import workers
from memvault.core.document import parse_document
from memvault.core.memory import content_hash, memory_from
from memvault.core.records import FileInfo, Progress, Skipped
from memvault.core.reports import RebuildSummary, SyncSummary
from memvault.errors import MemvaultError
from memvault.index.database import Index
from memvault.index.rows import NoteRows, note_rows, redated
from memvault.storage.files import VaultStore
from memvault.storage.regular_files import NotRegular, read_regular

log = logging.getLogger(__name__)

BATCH = 500
PARALLEL_FROM = 2000
PARALLEL_BATCH = 4000

Stat = tuple[str, int, int]


@dataclass
class Changes:
    """What a walk found different from the index: files to read, paths gone, and folders or
    files it could not read."""

    changed: list[FileInfo]
    gone: list[str]
    skipped: list[Skipped]


def diff(indexed: set[Stat], files: Iterable[Stat], skipped: list[Skipped]) -> Changes:
    """The files to read and the paths gone, from the index's and the disk's (path, size,
    mtime_ns), compared as plain tuples by set operations. A path inside a folder that could
    not be read is never taken for gone."""
    on_disk = list(files)
    changed = [FileInfo._make(f) for f in on_disk if f not in indexed]
    # Indexed states no file has now: each is a changed file's old state or a file gone.
    outdated = indexed.difference(on_disk)
    kept = {f.path for f in changed}
    blocked = [s.path for s in skipped]
    gone = [p for p, _, _ in outdated if p not in kept and not _inside_any(p, blocked)]
    return Changes(changed, sorted(gone), skipped)


def changes(index: Index, store: VaultStore, sweep: bool = False) -> Changes:
    """What differs between the disk and the index, by size and mtime (no file is read).

    In a big vault, where workers fork, a helper walks half the folders while this process
    reads the index; the helper's half crosses the pipe as plain tuples, which pickle fast.
    `sweep` removes temp files a crash left behind on the way (upkeep, never a read).
    """
    helper = None
    with ExitStack() as stack:
        if index.entries.rowid_high() >= PARALLEL_FROM and workers.forks():
            pool = stack.enter_context(workers.pool(1))
            helper = pool.submit(walked, store.root, (1, 2), sweep)
        indexed = index.entries.indexed_files()
        skipped: list[Skipped] = []
        files: list[Stat] = list(store.walk(skipped, (0, 2) if helper else (0, 1), sweep))
        if helper is not None:
            more, more_skipped = helper.result()
            files += more
            skipped += more_skipped
    return diff(indexed, files, skipped)


def sync(
    index: Index, store: VaultStore, found: Changes | None = None, sweep: bool = False
) -> SyncSummary:
    """Index only what changed on disk since the last pass: size and mtime first, then hash.

    A file renamed outside memvault keeps its kept state (same id, or same content for a
    note without an id). A file or folder that cannot be read is reported, never deleted.
    `found` is what `changes` returned just before, when the caller has it already.
    """
    started = time.perf_counter()
    if found is None:
        found = changes(index, store, sweep)
    summary = SyncSummary(skipped=list(found.skipped))
    if found.changed or found.gone:
        _apply(index, store, found, summary)
    read = {info.path for info in found.changed}
    summary.skipped += [
        Skipped(path, f"indexed read-only: {problem}")
        for path, problem in index.reports.problems()
        if path in read
    ]
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


def _apply(index: Index, store: VaultStore, found: Changes, summary: SyncSummary) -> None:
    """Index what `changes` found, in one write transaction (none when nothing changed, so a
    sync of an index in step with the files writes nothing)."""
    with index.pool.transaction() as db:
        new_ids: dict[str, str] = {}
        for info in found.changed:
            try:
                text = store.load(info)
            except MemvaultError as exc:
                summary.skipped.append(Skipped(info.path, str(exc)))
                continue
            outcome = index.entries.apply(db, info, text, index.entries.state(db, info.path))
            if outcome == "added":
                summary.added += 1
                new_ids[content_hash(text)] = info.path
            elif outcome == "updated":
                summary.updated += 1
        for path in found.gone:
            old = index.entries.gone_state(db, path)
            if old is None:
                continue
            moved_to = new_ids.pop(old[0], None)
            if moved_to is None:
                summary.removed += 1
            else:
                summary.moved += 1
                summary.added -= 1
                index.entries.move_usage(db, old[1], moved_to)
            index.entries.drop(db, path)


def rebuild(
    index: Index, store: VaultStore, progress: Progress | None = None, sweep: bool = False
) -> RebuildSummary:
    """Make the index again from every file in the vault, in one transaction. `sweep` removes
    temp files a crash left behind on the way (upkeep: `reindex`, never the first read)."""
    started = time.perf_counter()
    summary = RebuildSummary()
    files = list(store.walk(summary.skipped, sweep=sweep))
    seen = index.entries.seen_files()
    with index.entries.rebuilding() as db:
        jobs = [(str(store.root), f.path, f.size, f.mtime_ns) for f in files]
        for done, rows in enumerate(_parsed(jobs), start=1):
            if isinstance(rows, Skipped):
                summary.skipped.append(rows)
                continue
            if rows.problem:
                path = str(rows.note[0])
                summary.skipped.append(Skipped(path, f"indexed read-only: {rows.problem}"))
            index.entries.write_rows(db, redated(rows, seen) if seen else rows)
            summary.notes += 1
            if progress is not None and (done % BATCH == 0 or done == len(files)):
                progress(done, len(files))
    summary.links, summary.unresolved_links, summary.attachments = index.reports.link_counts()
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


def refresh(index: Index, store: VaultStore, path: str) -> str:
    """Bring one path up to date with the disk: 'added', 'updated', 'removed', 'unchanged',
    or 'skipped' for a file that exists but cannot be read (it keeps its entry). Why a file
    is not indexed (a symlink loop, bytes that are not UTF-8) is logged as a warning."""
    skipped: list[Skipped] = []
    info = store.stat(path, skipped)
    for item in skipped:
        log.warning("%s: %s", item.path, item.reason)
    state = index.entries.file_state(path)
    if info is None:
        if state is None:
            return "unchanged"
        index.entries.remove(path)
        return "removed"
    if state is not None and (state[0], state[1]) == (info.size, info.mtime_ns):
        index.entries.touch(path)  # indexed by another process: its vectors may be new too
        return "unchanged"
    try:
        text = store.load(info)
    except MemvaultError as exc:
        log.warning("%s: not indexed: %s", path, exc)
        return "skipped"
    with index.pool.transaction() as db:
        index.entries.apply(db, info, text, state)
    return "added" if state is None else "updated"


def file_rows(job: tuple[str, str, int, int]) -> NoteRows | Skipped:
    """Read and parse one file (root, path, size, mtime_ns): the unit of work of a rebuild,
    run in worker processes."""
    root, path, size, mtime_ns = job
    try:
        # os.path, not a Path made for each file: that cost 7 % of the parsing (137 -> 127 µs).
        text = read_regular(os.path.join(root, path), _resolved(root)).decode("utf-8")
    except NotRegular as exc:
        return Skipped(path, exc.reason)
    except OSError as exc:
        return Skipped(path, f"cannot read: {exc.strerror}")
    except UnicodeDecodeError:
        return Skipped(path, "not UTF-8 text")
    digest = content_hash(text)
    memory = memory_from(path, parse_document(text), mtime_ns, digest)
    return note_rows(memory, size, mtime_ns, digest)


@functools.cache
def _resolved(root: str) -> str:
    """The vault folder with every symlink resolved, once per worker process and vault."""
    return os.path.realpath(root)


def walked(root: Path, share: tuple[int, int], sweep: bool) -> tuple[list[Stat], list[Skipped]]:
    """One share of a walk of the vault at `root` (run by a helper process), as plain tuples:
    they pickle several times faster than FileInfo, whose class pickle calls per file."""
    skipped: list[Skipped] = []
    files = VaultStore(root).walk(skipped, share, sweep)
    return [(f.path, f.size, f.mtime_ns) for f in files], skipped


def changes_on_disk(root: Path, index_path: Path, sweep: bool) -> Changes:
    """`changes` for the vault at `root` and an existing index: a module-level function of
    plain values, so another process can run it (the server does while it imports)."""
    index = Index(index_path)
    try:
        return changes(index, VaultStore(root), sweep)
    finally:
        index.close()


def _parsed(jobs: list[tuple[str, str, int, int]]) -> Iterator[NoteRows | Skipped]:
    """Each file's rows, in order. Big vaults are parsed by worker processes a batch ahead of
    the writer, so parsing and SQLite share the cores and memory stays bounded by two batches.
    If a worker dies, the rest is parsed here, in this process."""
    count = workers.parallelism()
    if count == 0 or len(jobs) < PARALLEL_FROM:
        yield from map(file_rows, jobs)
        return
    done = 0
    try:
        with workers.pool(count, low_priority=True) as pool:
            batches = [jobs[i : i + PARALLEL_BATCH] for i in range(0, len(jobs), PARALLEL_BATCH)]
            pending = pool.map(file_rows, batches[0], chunksize=64)
            for following in [*batches[1:], None]:
                current = pending
                if following is not None:
                    pending = pool.map(file_rows, following, chunksize=64)
                for rows in current:
                    done += 1
                    yield rows
    except BrokenExecutor:  # a process pool's (concurrent.futures.process, not imported up front)
        log.warning("a parsing worker died; parsing the remaining %d files here", len(jobs) - done)
        yield from map(file_rows, jobs[done:])


def _inside_any(path: str, folders: list[str]) -> bool:
    """Whether `path` is one of `folders` or lies below one of them ('.' is the whole vault)."""
    return any(f in (".", path) or path.startswith(f + "/") for f in folders)
