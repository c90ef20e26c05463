"""Where a memory's file goes: a new one's first free path, and a renamed or moved one's."""

from __future__ import annotations

from typing import Any

from memvault.core.memory import Memory, is_memory_path, slug_for, stem_of
from memvault.index.database import Index
from memvault.storage.files import VaultStore


def moved_path(store: VaultStore, index: Index, memory: Memory, fields: dict[str, Any]) -> str:
    """The path of `memory` once `fields` (a new title, a new category) are written: its own
    when neither changes where it goes, else a free one."""
    folder = fields.get("category", memory.category)
    stem = slug_for(fields["title"]) if "title" in fields else memory.stem
    if folder == memory.category and stem == memory.stem:
        return memory.path
    if stem == memory.stem:
        moved = join(folder, f"{stem}.md")
        # An expired note whose archive path is taken goes to a free name (outage-2.md).
        free = is_memory_path(moved) and not store.exists(moved)
        return moved if free else free_path(store, index, folder, stem)
    return free_path(store, index, folder, stem, memory.path)


def free_path(
    store: VaultStore, index: Index, folder: str | None, stem: str, current: str | None = None
) -> str:
    """`folder/stem.md`, numbered `-2`, `-3`... until the stem is unused across the vault (the
    memory at `current` may keep its own)."""
    n = 1
    while True:
        candidate = stem if n == 1 else f"{stem}-{n}"
        path = join(folder, f"{candidate}.md")
        own = current is not None and stem_of(current).lower() == candidate.lower()
        if is_memory_path(path) and (
            own or (not index.names.stem_taken(candidate) and not store.exists(path))
        ):
            return path
        n += 1


def join(folder: str | None, name: str) -> str:
    """`name` in `folder` ('' or None: the vault's root)."""
    return f"{folder}/{name}" if folder else name
