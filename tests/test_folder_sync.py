"""A write makes its folders durable (fsync) before it returns, but after it has released the
vault lock, so other writers do not wait for the disk: an fsync takes about as long as the
rest of a write. Every fsync is watched (and still done) to see what it syncs and whether the
vault lock was held meanwhile."""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Callable, Iterator

import pytest

from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision
from memvault.service.vault import VaultService

REAL_FSYNC = os.fsync
Synced = list[tuple[int, bool]]


def lock_held(vault: VaultService) -> bool:
    """Whether some holder has the vault lock now (a second open of the lock file cannot
    take it)."""
    fd = os.open(vault.root / ".memvault" / "lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@pytest.fixture
def synced(vault: VaultService, monkeypatch: pytest.MonkeyPatch) -> Iterator[Synced]:
    """(inode, vault lock held) of every folder fsynced from now on."""
    seen: Synced = []

    def watching(fd: int) -> None:
        found = os.fstat(fd)
        if stat.S_ISDIR(found.st_mode):
            seen.append((found.st_ino, lock_held(vault)))
        REAL_FSYNC(fd)

    monkeypatch.setattr(os, "fsync", watching)
    yield seen


@pytest.mark.parametrize(
    "change",
    [
        lambda v: v.create(Draft("Cache eviction", "Evict by size, not age.", category="ops/db")),
        lambda v: v.update("Retries", Revision(edit=BodyEdit(append="Back off exponentially."))),
        lambda v: v.delete("Retries"),
    ],
    ids=["write", "append", "delete"],
)
def test_a_change_syncs_its_folder_after_the_lock_before_it_returns(
    vault: VaultService, synced: Synced, change: Callable[[VaultService], object]
) -> None:
    vault.create(Draft("Retries", "Retry three times.", category="ops/db"))
    vault.create(Draft("Pool size", "Twenty connections at most.", category="ops/db"))
    synced.clear()
    change(vault)
    folder = (vault.root / "ops" / "db").stat().st_ino
    assert (folder, False) in synced
    assert not any(held for _, held in synced)
