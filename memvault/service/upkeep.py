"""The upkeep of a vault: the index brought up to date with the files (fill, sync, refresh,
rebuild), the files kept (renames a crash cut short, archiving), and `check`."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import replace

from memvault.core import clock
from memvault.core.memory import Memory
from memvault.core.records import Progress, Skipped
from memvault.core.reports import (
    CheckReport,
    DuplicatePair,
    Maintenance,
    RebuildSummary,
    SyncSummary,
)
from memvault.errors import ReadOnly
from memvault.index import sync
from memvault.index.sync import Changes
from memvault.semantic import prune
from memvault.service import checks, near_duplicates
from memvault.service.parts import VaultParts

log = logging.getLogger(__name__)


class Upkeep:
    """What keeps one vault's index and files in order, run at start, by commands and by the
    watcher; `archive` is the write that moves a memory to archive/ (MemoryWrites.archive)."""

    def __init__(self, parts: VaultParts, archive: Callable[[str], Memory]):
        self._parts = parts
        self._index = parts.index
        self._store = parts.store
        self._archive = archive

    @property
    def built(self) -> bool:
        """Whether the index holds the vault yet: a new index is empty until its first fill."""
        return not self._index.pool.fresh

    def fill(self, found: Changes | None = None, progress: Progress | None = None) -> list[Skipped]:
        """Bring the index up to date with the files: a full build for a new index (reporting
        to `progress`), else an incremental sync (of `found` when the caller looked for changes
        already). Only the index changes: no file is written (see `maintain`). The files it
        skipped, and why."""
        if self._index.pool.fresh:
            return sync.rebuild(self._index, self._store, progress).skipped
        return sync.sync(self._index, self._store, found).skipped

    def maintain(self) -> Maintenance:
        """Upkeep that writes files, run when the server starts and on explicit commands:
        finish renames a crash cut short, and move expired memories (and, where the vault's
        policies ask, unused ones) to the archive. A read-only vault skips it with one
        warning: reads still work."""
        try:
            with self._parts.lock.locked():
                finished = self._parts.links.recover()
            archived = self.archive_expired() + self.archive_unused()
            return Maintenance(finished_renames=finished, archived=archived)
        except ReadOnly as exc:
            log.warning("upkeep skipped: %s", exc)
            return Maintenance()

    def archive_expired(self) -> list[str]:
        """Move every memory past its `expires_at` to archive/ (links follow); never deletes."""
        return [self._archive(path).path for path in self._index.reports.expired(clock.now_iso())]

    def archive_unused(self) -> list[str]:
        """Move to archive/ every live memory nobody used (read, found, briefed) or changed for
        the policies' `archive_unused_days`; none unless the vault's policies set it."""
        days = self._parts.policies.archive_unused_days
        if days is None:
            return []
        cutoff = clock.iso(clock.now() - dt.timedelta(days=days))
        return [self._archive(path).path for path, _ in self._index.reports.unused(cutoff)]

    def near_duplicates(self, limit: int = 20) -> list[DuplicatePair]:
        """Pairs of memories whose texts are near duplicates, most alike first (to merge)."""
        return near_duplicates.near_duplicates(self._index, self._store, limit)

    def rebuild(self, progress: Progress | None = None) -> RebuildSummary:
        """Make the index again from the files (kept state survives), remove temp files a
        crash left behind, and drop the vectors no note uses any more."""
        summary = sync.rebuild(self._index, self._store, progress, sweep=True)
        summary.dropped_vectors = prune.prune(self._index, thorough=True)
        return summary

    def sync(self) -> SyncSummary:
        """Index what changed on disk since the last pass (edits made outside memvault), and
        remove temp files a crash left behind."""
        summary = sync.sync(self._index, self._store, sweep=True)
        self._parts.semantic.embedding.wake()
        return summary

    def refresh(self, path: str) -> str:
        """Bring one file's index entry up to date with the disk (the watcher's unit of work)."""
        outcome = sync.refresh(self._index, self._store, path)
        self._parts.semantic.embedding.wake()
        return outcome

    def check(self, fix: bool = False, secrets: bool = False) -> CheckReport:
        """Broken, one-sided and ambiguous links, duplicate ids, malformed frontmatter; with
        `fix`, upkeep and the repairs first, and what they did in `fixed`; with `secrets`,
        the files holding secrets (reads every file). The index is brought up to date first,
        so every file that cannot be read is named."""
        skipped = self.fill()
        links = self._parts.links
        fixed = []
        if fix:
            fixed = self.maintain().lines()
            with self._parts.lock.writing():
                fixed += checks.repair(self._index, self._store, self._parts.writer, links)
        report = checks.find_problems(self._index, self._store, links, skipped)
        if secrets:
            report = replace(report, secrets=checks.secrets_in_files(self._index, self._store))
        report.fixed = fixed
        return report
