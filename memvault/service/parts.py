"""What the service's parts share of one vault: its files, its index, semantic search, the
writer and link keeping under them, the vault lock, the limits and the policies."""

from __future__ import annotations

from dataclasses import dataclass

from memvault.core.memory import Limits
from memvault.index.database import Index
from memvault.policies import Policies
from memvault.semantic.engine import Semantic
from memvault.service.lookup import Lookup
from memvault.service.write_lock import WriteLock
from memvault.storage.files import VaultStore
from memvault.storage.journal import Journal
from memvault.writes.links import LinkService
from memvault.writes.supersedes import SuccessionService
from memvault.writes.writer import Writer


@dataclass(frozen=True)
class VaultParts:
    """One vault's store, index and the services over them, made once and shared."""

    store: VaultStore
    index: Index
    semantic: Semantic
    writer: Writer
    links: LinkService
    lookup: Lookup
    succession: SuccessionService
    lock: WriteLock
    limits: Limits
    policies: Policies

    @classmethod
    def make(
        cls,
        store: VaultStore,
        index: Index,
        limits: Limits,
        embed_model: str | None,
        policies: Policies,
        rerank_model: str | None = None,
    ) -> VaultParts:
        """The parts over `store` and `index`, semantic search with `embed_model` (and the
        reranker `rerank_model` names, if any)."""
        semantic = Semantic(index, store, embed_model, rerank_model)
        writer = Writer(store, index)
        links = LinkService(store, index, writer, Journal(store.state_dir / "journal"))
        succession = SuccessionService(store, index, writer)
        lock = WriteLock(store, writer, links, semantic)
        lookup = Lookup(store, index)
        return cls(
            store, index, semantic, writer, links, lookup, succession, lock, limits, policies
        )
