"""The vault lock a change holds, and what a change does around it: finish a rename a crash
cut short first, write all or nothing, fsync the folders it changed, wake the embedder."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from memvault.semantic.engine import Semantic
from memvault.storage.atomic_writes import folders_synced_at_end
from memvault.storage.files import VaultStore
from memvault.writes.links import LinkService
from memvault.writes.writer import Writer

log = logging.getLogger(__name__)


class WriteLock:
    """The vault lock of one VaultService, shared by its writes and its upkeep."""

    def __init__(self, store: VaultStore, writer: Writer, links: LinkService, semantic: Semantic):
        self._store = store
        self._writer = writer
        self._links = links
        self._semantic = semantic
        self._threads = threading.RLock()
        self._changing = threading.local()

    @contextmanager
    def locked(self) -> Iterator[None]:
        """The vault lock, which every memvault process takes to write; threads of this one
        queue for it on a lock of their own first, rather than polling the file."""
        with self._threads, self._store.lock():
            yield

    @contextmanager
    def writing(self, agent: str | None = None) -> Iterator[None]:
        """Hold the vault lock for a change by `agent` (recorded as updated_by in every file
        it writes; None for upkeep), first finishing any rename a crash cut short, so that a
        write never starts from a half-renamed vault. Reads never take this path. A write
        inside another (write_mem's replace) joins it: all or nothing together. The folders it
        changed are fsynced after the lock is released, before the caller hears back."""
        if getattr(self._changing, "active", False):
            yield
            return
        with folders_synced_at_end(), self.locked():
            for line in self._links.recover():
                log.warning("%s (interrupted earlier)", line)
            self._changing.active = True
            try:
                with self._writer.all_or_nothing(agent):
                    yield
            finally:
                self._changing.active = False
        self._semantic.embedding.wake()
