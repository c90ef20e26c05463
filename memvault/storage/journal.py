"""The rename journal: a change that spans several files is recorded before it starts, so that
upkeep can finish it after a crash (`.memvault/journal/`, one JSON file per operation)."""

from __future__ import annotations

import json
import logging
import secrets
import time
from pathlib import Path
from typing import Any

from memvault.storage.atomic_writes import atomic_write, write_errors

log = logging.getLogger(__name__)


class Journal:
    """Unfinished multi-file operations of one vault, oldest first."""

    def __init__(self, folder: Path):
        self.folder = folder

    def add(self, entry: dict[str, Any]) -> str:
        """Record an operation before it starts; its name, for `done`."""
        name = f"{time.time_ns()}-{secrets.token_hex(4)}.json"
        with write_errors("the rename journal"):
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write(self.folder / name, json.dumps(entry, ensure_ascii=False))
        return name

    def entries(self) -> list[tuple[str, dict[str, Any]]]:
        """Unfinished operations, oldest first (a garbled entry is dropped with a warning)."""
        if not self.folder.is_dir():
            return []
        entries = []
        for file in sorted(self.folder.glob("*.json")):
            try:
                entries.append((file.name, json.loads(file.read_text(encoding="utf-8"))))
            except (OSError, ValueError):
                log.warning("dropping unreadable journal entry %s", file)
                file.unlink(missing_ok=True)
        return entries

    def done(self, name: str) -> None:
        (self.folder / name).unlink(missing_ok=True)
