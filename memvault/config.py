"""Where the vault and its index live, and the limits that apply (flags > env > defaults)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from memvault.core.memory import Limits
from memvault.policies import Policies

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
    # The embedding model: a folder, `off`, or None for the default (see semantic/model.py).
    embed_model: str | None = None
    # A cross-encoder's folder that reorders hybrid search's best hits; None: no reranking
    # (see semantic/reranker.py).
    rerank_model: str | None = None
    limits: Limits = field(default_factory=Limits)
    context: ContextSettings = field(default_factory=ContextSettings)
    policies: Policies = field(default_factory=Policies)
    # Who writes (--agent): recorded as created_by / updated_by; None lets each face decide.
    agent: str | None = None

    @property
    def state_dir(self) -> Path:
        """memvault's folder inside the vault: the index, the lock, the journal, the policies."""
        return Path(self.vault).expanduser() / STATE_DIR

    @property
    def index_file(self) -> Path:
        """The SQLite file: `--index-path`, or hidden inside the vault where Obsidian ignores it,
        or, when memvault cannot write there (a read-only vault), in the user's cache folder."""
        if self.index_path is not None:
            return Path(self.index_path).expanduser()
        state = self.state_dir
        return state / INDEX_FILE if _writable(state) else cached_index(Path(self.vault))


def cached_index(vault: Path) -> Path:
    """The index of a vault memvault cannot write to: `$XDG_CACHE_HOME/memvault/<hash of the
    vault's path>/index.sqlite3` (~/.cache when XDG_CACHE_HOME is not set)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    key = hashlib.sha256(str(vault.expanduser().resolve()).encode()).hexdigest()[:16]
    return cache / "memvault" / key / INDEX_FILE


def _writable(folder: Path) -> bool:
    """Whether this process may write in `folder`, or create it in its nearest existing parent
    (os.access says no on read-only media too)."""
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    return os.access(folder, os.W_OK)
