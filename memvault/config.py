"""Where the vault and its index live, and the limits that apply (flags > env > defaults)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .model import Limits

DEFAULT_VAULT = Path("memories")
# memvault's own folder inside the vault (index, lock, journal); a dot-folder Obsidian ignores.
STATE_DIR = ".memvault"
INDEX_FILE = "index.sqlite3"
# Seconds a query may run before it is stopped with an error (MEMVAULT_QUERY_TIMEOUT).
QUERY_TIMEOUT = 10.0


@dataclass(frozen=True)
class ContextSettings:
    """What the session briefing surfaces: always-surface categories, what counts as recent,
    and after how long a memory nobody verified is flagged."""

    always: tuple[str, ...] = ("gotcha",)
    recent_days: float = 7.0
    stale_days: float = 90.0


@dataclass(frozen=True)
class Settings:
    """Everything a memvault process needs to open a vault."""

    vault: Path = DEFAULT_VAULT
    index_path: Path | None = None
    query_timeout: float = QUERY_TIMEOUT
    limits: Limits = field(default_factory=Limits)
    context: ContextSettings = field(default_factory=ContextSettings)

    @property
    def index_file(self) -> Path:
        """The SQLite file: `--index-path`, or hidden inside the vault where Obsidian ignores it."""
        if self.index_path is not None:
            return Path(self.index_path).expanduser()
        return Path(self.vault).expanduser() / STATE_DIR / INDEX_FILE
