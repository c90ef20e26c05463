"""Watch the vault while serving, so edits made in Obsidian (or vim, git, a sync tool) reach the
index within a second or two.

Events are only hints: after a quiet spell (the debounce) each touched path is compared with the
index and re-read if its size or mtime changed, so editors' odd saves (temp file + rename,
delete + create, bursts of events) all end in the same state, and memvault's own writes, already
indexed, cost one stat each. Folder events (a folder renamed or deleted) run a full sync.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from memvault.config import STATE_DIR
from memvault.service.vault import VaultService

log = logging.getLogger(__name__)

DEBOUNCE = 0.3
RETRY = 5.0


class VaultWatcher(FileSystemEventHandler):
    """Collects file-system events and applies them to the index on a worker thread."""

    def __init__(self, vault: VaultService, debounce: float = DEBOUNCE):
        self.vault = vault
        self.debounce = debounce
        self._root = vault.root
        self._pending: set[str] = set()
        self._full_sync = False
        self._last_event = 0.0
        self._wake = threading.Condition()
        self._stopping = False
        self._observer = Observer()
        self._worker = threading.Thread(target=self._run, name="memvault-watch", daemon=True)

    def start(self) -> None:
        self._observer.schedule(self, str(self._root), recursive=True)
        self._observer.start()
        self._worker.start()
        log.info("watching %s", self._root)

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify()
        self._observer.stop()
        self._observer.join(timeout=5)
        self._worker.join(timeout=5)

    def on_any_event(self, event: FileSystemEvent) -> None:
        """Called on watchdog's thread: note what changed and wake the worker."""
        if event.event_type in ("opened", "closed_no_write"):
            return
        paths = [event.src_path, getattr(event, "dest_path", "")]
        relative = [r for r in (self._relative(p) for p in paths if p) if r is not None]
        if not relative:
            return
        with self._wake:
            if event.is_directory and event.event_type in ("moved", "deleted", "created"):
                self._full_sync = True
            else:
                self._pending.update(r for r in relative if r.lower().endswith(".md"))
            self._last_event = time.monotonic()
            self._wake.notify()

    def _relative(self, path: str | bytes) -> str | None:
        """The vault-relative path, or None for what memvault ignores (dot-folders, outside)."""
        text = path.decode() if isinstance(path, bytes) else path
        try:
            relative = Path(text).relative_to(self._root).as_posix()
        except ValueError:
            return None
        parts = relative.split("/")
        if relative == "." or any(p.startswith(".") for p in parts) or parts[0] == STATE_DIR:
            return None
        return relative

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._stopping and not (self._pending or self._full_sync):
                    self._wake.wait()
                if self._stopping:
                    return
                quiet = time.monotonic() - self._last_event
                if quiet < self.debounce:
                    self._wake.wait(self.debounce - quiet)
                    continue
                paths, full = sorted(self._pending), self._full_sync
                self._pending, self._full_sync = set(), False
            self._apply(paths, full)

    def _apply(self, paths: list[str], full: bool) -> None:
        """Never lets an error end the watcher: the next event or sync tries again."""
        try:
            if full:
                summary = self.vault.upkeep.sync()
                log.info(
                    "watch: synced (%d added, %d updated, %d moved, %d removed)",
                    summary.added,
                    summary.updated,
                    summary.moved,
                    summary.removed,
                )
                for item in summary.skipped:
                    log.warning("watch: %s: %s", item.path, item.reason)
                return
            for path in paths:
                outcome = self.vault.upkeep.refresh(path)
                if outcome != "unchanged":
                    log.info("watch: %s %s", outcome, path)
        except Exception:
            log.exception(
                "watch: could not apply changes to %s; a full sync follows in %ss",
                paths or "the vault",
                RETRY,
            )
            with self._wake:
                self._full_sync = True
                self._last_event = time.monotonic() + RETRY
