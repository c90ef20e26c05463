"""Incremental sync and watching: edits made outside memvault reach the index, nothing is lost."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.core.drafts import Draft
from memvault.core.records import Usage
from memvault.features.watch import VaultWatcher
from memvault.service.vault import VaultService

from .conftest import patience, write_file


def test_sync_indexes_only_what_changed(vault: VaultService, vault_dir: Path) -> None:
    vault.create(Draft("Kept", "unchanged"))
    edited = vault.create(Draft("Edited", "old text"))
    gone = vault.create(Draft("Gone", "x"))
    write_file(vault_dir, "new/hand.md", "# Hand made\nwith zyzzyva\n")
    path = vault_dir / edited.path
    path.write_text(path.read_text().replace("old text", "new quokka text"))
    (vault_dir / gone.path).unlink()
    summary = vault.upkeep.sync()
    assert (summary.added, summary.updated, summary.removed, summary.moved) == (1, 1, 1, 0)
    assert [h.title for h in vault.search("quokka").results] == ["Edited"]
    assert [h.title for h in vault.search("zyzzyva").results] == ["Hand made"]
    again = vault.upkeep.sync()
    assert (again.added, again.updated, again.removed) == (0, 0, 0)


def test_a_touched_file_is_not_reindexed(vault: VaultService, vault_dir: Path) -> None:
    memory = vault.create(Draft("Touched", "same"))
    os.utime(vault_dir / memory.path, ns=(1, 10**18))
    summary = vault.upkeep.sync()
    assert (summary.added, summary.updated) == (0, 0)
    assert vault.search("Touched").results[0].path == memory.path
    assert vault.upkeep.sync().updated == 0


def test_a_move_outside_memvault_keeps_kept_state(vault: VaultService, vault_dir: Path) -> None:
    write_file(vault_dir, "plain.md", "No frontmatter, so the id comes from the path\n")
    vault.upkeep.sync()
    old_id = vault.get("plain").id
    vault.restore_usage(old_id, Usage(7))
    (vault_dir / "moved").mkdir()
    os.rename(vault_dir / "plain.md", vault_dir / "moved/plain.md")
    summary = vault.upkeep.sync()
    assert (summary.moved, summary.added, summary.removed) == (1, 0, 0)
    new_id = vault.get("moved/plain").id
    assert new_id != old_id
    assert {k: u.access_count for k, u in vault.usage().items()} == {new_id: 7}


def test_an_unreadable_file_is_reported_never_taken_for_deleted(
    vault: VaultService, vault_dir: Path
) -> None:
    memory = vault.create(Draft("Fragile", "readable at first"))
    (vault_dir / memory.path).write_bytes(b"\xff\xfe not utf-8 \xff")
    summary = vault.upkeep.sync()
    assert [s.path for s in summary.skipped] == [memory.path]
    assert summary.removed == 0
    assert vault.search("readable").total == 1


def test_dot_folders_and_other_files_are_ignored(vault: VaultService, vault_dir: Path) -> None:
    write_file(vault_dir, ".obsidian/plugins/x/readme.md", "plugin docs")
    write_file(vault_dir, ".trash/old.md", "trashed")
    write_file(vault_dir, "notes.txt", "text file")
    write_file(vault_dir, "image.png", "png")
    summary = vault.upkeep.sync()
    assert (summary.added, summary.skipped) == (0, [])


@pytest.fixture
def watched(vault: VaultService) -> Iterator[VaultService]:
    watcher = VaultWatcher(vault, debounce=0.1)
    watcher.start()
    yield vault
    watcher.stop()


def eventually(check: Callable[[], bool], seconds: float = 5.0) -> float:
    """Seconds until `check` holds; fails after `seconds` (widened by MEMVAULT_TEST_PATIENCE)."""
    started = time.monotonic()
    limit = patience(seconds)
    while not check():
        if time.monotonic() - started > limit:
            pytest.fail(f"not true after {limit}s")
        time.sleep(0.05)
    return time.monotonic() - started


def titles(vault: VaultService, query: str) -> list[str]:
    return [hit.title for hit in vault.search(query).results]


def test_the_watcher_applies_editor_saves(watched: VaultService, vault_dir: Path) -> None:
    write_file(vault_dir, "a.md", "# Alpha\nfirst wombat\n")
    eventually(lambda: titles(watched, "wombat") == ["Alpha"])
    temp = vault_dir / ".a.md.swp"
    temp.write_text("# Alpha\nsecond numbat\n")
    os.replace(temp, vault_dir / "a.md")
    eventually(lambda: titles(watched, "numbat") == ["Alpha"])
    (vault_dir / "a.md").unlink()
    write_file(vault_dir, "a.md", "# Alpha\nthird dingo\n")
    eventually(lambda: titles(watched, "dingo") == ["Alpha"] and not titles(watched, "numbat"))
    os.rename(vault_dir / "a.md", vault_dir / "b.md")
    eventually(lambda: [h.path for h in watched.search("dingo").results] == ["b.md"])
    (vault_dir / "b.md").unlink()
    eventually(lambda: watched.stats().memories == 0)


def test_the_watcher_follows_folder_moves_and_survives_bad_files(
    watched: VaultService, vault_dir: Path
) -> None:
    write_file(vault_dir, "dir/one.md", "# One\nkoala\n")
    eventually(lambda: titles(watched, "koala") == ["One"])
    os.rename(vault_dir / "dir", vault_dir / "renamed")
    eventually(lambda: [h.path for h in watched.search("koala").results] == ["renamed/one.md"])
    (vault_dir / "bad.md").write_bytes(b"\xff\xff")
    write_file(vault_dir, "after.md", "# After\nplatypus\n")
    eventually(lambda: titles(watched, "platypus") == ["After"])


def test_a_first_read_leaves_a_crash_s_temp_file_and_upkeep_removes_it(vault_dir: Path) -> None:
    """Opening a vault with no index yet builds one, but only upkeep deletes leftovers."""
    write_file(vault_dir, "note.md", "# Note\n")
    leftover = write_file(vault_dir, ".note.md.1a2b3c4d.memvault-tmp", "half a write")
    os.utime(leftover, (time.time() - 3600, time.time() - 3600))
    reader = VaultService.open(Settings(vault=vault_dir))
    assert [hit.path for hit in reader.search("note").results] == ["note.md"]
    assert leftover.exists()
    reader.upkeep.sync()
    assert not leftover.exists()
    reader.close()
