"""VaultService: the one entry point to a vault for the faces (CLI, MCP) and the features.

It opens and reads the vault itself and hands the faces its parts' methods for the rest: the
writes (service/memory_writes.py), search (service/hybrid_search.py) and upkeep
(service/upkeep.py); the store, the index and the services under it are its own and stay
private. Reads never write a file; upkeep that does (finishing an interrupted rename,
archiving expired memories) runs only in `maintain`, at server start and on explicit commands.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from memvault import workers
from memvault.config import Settings, cached_index
from memvault.core.memory import Limits, Memory
from memvault.core.records import Filter, Head, LinkRow, NoteRow, Recall, Stats, Succession, Usage
from memvault.core.reports import Maintenance
from memvault.errors import Invalid, NotAVault
from memvault.index import sync
from memvault.index.database import Index
from memvault.index.search_sql import SORTS
from memvault.policies import Policies
from memvault.semantic.model import OFF
from memvault.service.hybrid_search import MAX_OFFSET, HybridSearch, dated
from memvault.service.memory_writes import MemoryWrites
from memvault.service.parts import VaultParts
from memvault.service.upkeep import Upkeep
from memvault.storage.files import VaultStore
from memvault.words import Message, Term, command

log = logging.getLogger(__name__)


def not_a_vault(root: Path) -> Message:
    """Why a folder cannot be read as a vault, and how to start one there."""
    why = "does not exist" if not root.exists() else "holds no markdown notes and no index"
    return (
        f"{root} is not a vault: it {why}; check the path, or start a vault there with ",
        command("write_mem", "write"),
        " (or ",
        Term("create=true", "--create, before the command"),
        ")",
    )


class VaultService:
    """The memories of one vault, as files on disk mirrored by the index."""

    def __init__(
        self,
        store: VaultStore,
        index: Index,
        limits: Limits | None = None,
        embed_model: str | None = OFF,
        policies: Policies | None = None,
        rerank_model: str | None = None,
    ):
        parts = VaultParts.make(
            store, index, limits or Limits(), embed_model, policies or Policies(), rerank_model
        )
        self._store = store
        self._index = index
        self._semantic = parts.semantic
        self._lookup = parts.lookup
        self._succession = parts.succession
        self.limits = parts.limits
        self.policies = parts.policies
        # The faces call these as the vault's own: the parts' methods, not copies forwarding.
        searching = HybridSearch(index, self._semantic, self._lookup)
        self.search = searching.search
        self.similar = searching.similar
        self.semantic_status = searching.semantic_status
        self.embed = searching.embed
        self.embed_written = searching.embed_written
        self.embed_if_quick = searching.embed_if_quick
        self.serve_semantic = searching.serve_semantic
        writes = MemoryWrites(parts)
        self.create = writes.create
        self.write = writes.write
        self.update = writes.update
        self.restore = writes.restore
        self.verify = writes.verify
        self.archive = writes.archive
        self.archivable = writes.archivable
        self.archive_all = writes.archive_all
        self.group = self._lookup.group
        self.delete = writes.delete
        self.link = writes.link
        self.unlink = writes.unlink
        self.merge = writes.merge
        # Sync, rebuild, archiving, check: the faces reach the part (`vault.upkeep.sync()`).
        self.upkeep = Upkeep(parts, writes.archive)

    @classmethod
    def open(cls, settings: Settings, fill: bool = True, start: bool = True) -> VaultService:
        """Open (and create if needed) the vault and index, and fill the index (`Upkeep.fill`)
        unless `fill` is off (for a caller about to rebuild, or with a walk to fill from).

        Unless `start`, a folder that is not a vault yet (no index, no markdown note: /etc, a
        typo, an empty folder) is NotAVault and nothing is created: only a caller that adds
        memories starts a vault."""
        store = VaultStore(settings.vault)
        if not start and not (store.holds_vault() or settings.index_file.exists()):
            raise NotAVault(not_a_vault(store.root))
        store.ensure()
        fallback = cached_index(Path(settings.vault))
        index = Index(settings.index_file, settings.query_timeout, fallback)
        vault = cls(
            store,
            index,
            settings.limits,
            settings.embed_model,
            settings.policies,
            settings.rerank_model,
        )
        if fill:
            vault.upkeep.fill()
        return vault

    @classmethod
    def start(cls, settings: Settings) -> Starting:
        """Open a vault for serving: a child process looks for what changed on disk while the
        caller goes on starting up; `Starting.finish` then syncs and runs `maintain`."""
        return Starting(cls.open(settings, fill=False))

    def close(self) -> None:
        """Stop embedding, save the uses counted in memory and close the index."""
        self._semantic.close()
        self._index.close()

    @property
    def root(self) -> Path:
        """The vault folder."""
        return self._store.root

    def file_text(self, identifier: str) -> str:
        """The markdown file of the memory an identifier names exactly, byte for byte."""
        return self._store.read_text(self.locate(identifier))

    def record_use(self, ids: Iterable[str]) -> None:
        """Count one use of each memory (kept state, never written into the files)."""
        self._index.usage.record(ids)

    def usage(self) -> dict[str, Usage]:
        """Kept state of every memory used at least once, by id."""
        return self._index.usage.by_id()

    def restore_usage(self, memory_id: str, usage: Usage) -> None:
        """Set a memory's kept state (import), never lowering a count already here."""
        self._index.usage.restore(memory_id, usage.access_count, usage.last_access)

    def has_id(self, memory_id: str) -> bool:
        """Whether a memory with this exact id is indexed."""
        return self._index.names.has_id(memory_id)

    def stats(self) -> Stats:
        """The vault's figures, with how far semantic search's embedding is (the model is not
        loaded for it: `semantic_status` is the check that it runs)."""
        return replace(self._index.reports.stats(), semantic=self._semantic.status(load=False))

    # -- reading ---------------------------------------------------------------------------

    def locate(self, identifier: str) -> str:
        """The path of the one memory an identifier names exactly, or NotFound with suggestions."""
        return self._lookup.locate(identifier)

    def get(self, identifier: str) -> Memory:
        """The memory an identifier names exactly, read fresh from its file."""
        return self._lookup.read(self.locate(identifier))

    def head(self, identifier: str, limit: int) -> Head:
        """The memory an identifier names exactly, read from at most `limit` bytes of its file:
        a hand-made note too big to show whole comes with its body cut there (`Head.cut`),
        never read whole."""
        return self._lookup.read_head(self.locate(identifier), limit)

    def passages(self, path: str, text: str, margin: int) -> list[str]:
        """The places `text` stands in the body of the memory at `path`, each with `margin`
        characters either side, as the index holds the body: what surrounds a search hit's
        snippet, without reading its file (`Bodies.passages`)."""
        return self._index.bodies.passages(path, text, margin)

    def recall(self, identifier: str, scope: str | None = None) -> Recall:
        """The memory an identifier names, or, when none does exactly, the one it most likely
        means if that one is clearly ahead (with its confidence); else NotFound listing the
        candidates. `category:key` looks only in that category, `scope:key` only in that
        scope; a name several memories share is the one in `scope` (a server's default) when
        only one is there. Reads only: writes and deletes use `locate`, which never guesses."""
        found = self._lookup.recall(identifier, scope)
        self._index.usage.record([found.memory.id])
        return found

    def outgoing(self, memory: Memory) -> list[LinkRow]:
        """The links in a memory's file, as the index holds them."""
        return self._index.names.outgoing(memory.path)

    def backlinks(self, memory: Memory) -> list[LinkRow]:
        """The links to a memory from other memories' files, as the index holds them."""
        return self._index.names.backlinks(memory.path)

    def list_memories(
        self,
        where: Filter | None = None,
        sort: str = "updated",
        limit: int = 50,
        offset: int = 0,
        counted: bool = True,
    ) -> tuple[list[NoteRow], int]:
        """A page of the memories under `where`, in the order `sort` names, and how many
        there are in all (unless not `counted`: then the page's length, a scan saved)."""
        if sort not in SORTS:
            raise Invalid(f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
        page = min(offset, MAX_OFFSET)
        return self._index.search.list_notes(dated(where), sort, limit, page, counted)

    def succession(self, memory: Memory) -> Succession:
        """The memories this one supersedes and the one that superseded it, by the links in
        its `supersedes` and `superseded_by` properties."""
        return self._succession.of(memory)

    def category_links(self) -> list[tuple[str, str, int]]:
        """How many links go from each category (folder, '' at the root) to each other one."""
        return self._index.reports.category_links()

    def changes(self) -> str:
        """A short text that changes whenever any memory is added, removed, moved or edited,
        by memvault or any other program once the index follows it (polled by the web page)."""
        return self._index.reports.fingerprint()


class Starting:
    """A vault being opened for serving, with a look for changes on disk under way in a worker
    process (most of a second at 100k notes, which the server spends importing the MCP SDK)."""

    def __init__(self, vault: VaultService):
        self.vault = vault
        self._pool = workers.pool(1)
        self._finding = (
            None
            if vault._index.pool.fresh
            else self._pool.submit(sync.changes_on_disk, vault.root, vault._index.pool.path, True)
        )

    def finish(self) -> tuple[VaultService, Maintenance]:
        """The vault, synced with the disk, and what upkeep did to its files."""
        try:
            found = self._finding.result() if self._finding is not None else None
        finally:
            self._pool.shutdown()
        self.vault.upkeep.fill(found)
        upkeep = self.vault.upkeep.maintain()
        self.vault.serve_semantic()
        return self.vault, upkeep
