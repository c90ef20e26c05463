"""The index file: a note's rows go with it by foreign key, a damaged schema is rebuilt, and
kept state (usage) survives every rebuild and moves forward by numbered migrations."""

from __future__ import annotations

import logging
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.core.drafts import Draft
from memvault.core.records import Usage
from memvault.index.schema import KEPT_MIGRATIONS
from memvault.service.vault import VaultService

from .conftest import write_file


def rows(index: Path, sql: str) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(index)) as db:
        return [tuple(r) for r in db.execute(sql)]


def test_deleting_a_note_takes_its_rows_and_leaves_links_to_it_dangling(
    vault: VaultService, vault_dir: Path
) -> None:
    write_file(vault_dir, "gone.md", "---\naliases: [Old]\ntags: [x]\n---\nSee [[kept]] #y\n")
    write_file(vault_dir, "kept.md", "Back to [[gone]]\n")
    vault.upkeep.sync()
    index = Settings(vault=vault_dir).index_file
    assert len(rows(index, "SELECT * FROM aliases")) == 1
    vault.delete("gone")
    assert rows(index, "SELECT * FROM aliases") == []
    assert rows(index, "SELECT * FROM tags") == []
    assert rows(index, "SELECT raw, target FROM links") == []  # kept's link was removed too
    write_file(vault_dir, "kept.md", "Back to [[gone]]\n")
    vault.upkeep.sync()
    assert rows(index, "SELECT raw, target FROM links") == [("gone", None)]


@pytest.mark.parametrize(
    ("damage", "lacks"),
    [
        (
            "DROP TABLE notes",
            "notes, notes_expires, notes_folder, notes_folder_key, notes_id, notes_path, "
            "notes_path_key, notes_reviewed, notes_scope, notes_stem, notes_title, notes_updated",
        ),
        ("DROP INDEX notes_path", "notes_path"),
        ("DROP TABLE links", "links, links_alt, links_key, links_name, links_source, links_target"),
        ("DROP TABLE notes_fts", "notes_fts"),
    ],
)
def test_a_damaged_index_that_still_opens_is_rebuilt_with_one_warning(
    vault_dir: Path, caplog: pytest.LogCaptureFixture, damage: str, lacks: str
) -> None:
    settings = Settings(vault=vault_dir)
    first = VaultService.open(settings)
    memory = first.create(Draft("Wombat facts", "burrows"))
    first.restore_usage(memory.id, Usage(4))
    first.close()
    with closing(sqlite3.connect(settings.index_file)) as db:
        db.execute(damage)
    with caplog.at_level(logging.WARNING, logger="memvault"):
        second = VaultService.open(settings)
    assert [r.message for r in caplog.records] == [f"the index lacks {lacks}; rebuilding it"]
    assert [h.title for h in second.search("burrows").results] == ["Wombat facts"]
    assert second.usage()[memory.id].access_count == 5  # kept, plus this search
    second.close()


def test_an_index_from_before_numbered_migrations_keeps_its_usage(vault_dir: Path) -> None:
    settings = Settings(vault=vault_dir)
    first = VaultService.open(settings)
    memory = first.create(Draft("Old index", "text"))
    first.restore_usage(memory.id, Usage(9, "2025-01-01T00:00:00Z"))
    first.close()
    with closing(sqlite3.connect(settings.index_file)) as db:
        db.executescript("DROP TABLE migrations; PRAGMA user_version = 7;")
    second = VaultService.open(settings)
    assert second.usage()[memory.id] == Usage(9, "2025-01-01T00:00:00Z")
    second.close()
    applied = rows(settings.index_file, "SELECT number FROM migrations")
    assert applied == [(n,) for n in range(1, len(KEPT_MIGRATIONS) + 1)]
