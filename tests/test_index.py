"""The index: Obsidian's link resolution, tags, aliases, counts; rebuilt from files any time."""

from __future__ import annotations

import logging
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.core.drafts import Draft, WriteOptions
from memvault.core.records import Filter, Usage
from memvault.core.reports import AmbiguousLink
from memvault.index.sync import file_rows
from memvault.service.vault import VaultService
from memvault.storage.files import VaultStore

from .conftest import write_file


def resolved(vault: VaultService, source: str) -> list[tuple[str, str | None]]:
    return [(row.raw, row.target) for row in vault.outgoing(vault.get(source))]


def test_resolution_order_path_stem_title_alias_nearest_folder(
    vault: VaultService, vault_dir: Path
) -> None:
    write_file(vault_dir, "a/note.md", "A")
    write_file(vault_dir, "b/note.md", "B")
    write_file(vault_dir, "deep/x/topic.md", "---\ntitle: Topic Title\naliases: [Nick]\n---\n")
    write_file(
        vault_dir,
        "b/source.md",
        "[[note]] [[a/note]] [[x/topic]] [[Topic Title]] [[nick]] [[Note.md]] [[missing]]"
        " [x](../a/note.md) [y](a/note.md) ![[pic.png]]\n",
    )
    summary = vault.upkeep.rebuild()
    assert resolved(vault, "b/source.md") == [
        ("note", "b/note.md"),
        ("a/note", "a/note.md"),
        ("x/topic", "deep/x/topic.md"),
        ("Topic Title", "deep/x/topic.md"),
        ("nick", "deep/x/topic.md"),
        ("Note.md", "b/note.md"),
        ("missing", None),
        ("../a/note.md", "a/note.md"),
        ("a/note.md", "a/note.md"),
    ]
    assert (summary.notes, summary.links, summary.unresolved_links, summary.attachments) == (
        4,
        9,
        1,
        1,
    )
    assert vault.upkeep.check().ambiguous_links == [
        AmbiguousLink("b/source.md", "note", ["a/note.md", "b/note.md"]),
        AmbiguousLink("b/source.md", "Note.md", ["a/note.md", "b/note.md"]),
    ]


def test_tags_from_frontmatter_and_inline_are_searchable_filters(
    vault: VaultService, vault_dir: Path
) -> None:
    write_file(vault_dir, "t.md", "---\ntags: [alpha]\n---\nBody with #beta/gamma and `#not`\n")
    vault.upkeep.rebuild()
    assert [row.tags for row in vault.list_memories()[0]] == [["alpha", "beta/gamma"]]
    assert vault.list_memories(Filter(tags=("beta",)))[1] == 1
    assert vault.list_memories(Filter(tags=("not",)))[1] == 0


def test_deleting_the_index_loses_nothing_but_kept_state_survives_rebuild(
    vault_dir: Path,
) -> None:
    settings = Settings(vault=vault_dir)
    first = VaultService.open(settings)
    memory = first.create(Draft("Keep me", "text"))
    first.restore_usage(memory.id, Usage(3))
    first.upkeep.rebuild()
    assert first.usage()[memory.id].access_count == 3
    first.close()
    settings.index_file.unlink()
    second = VaultService.open(settings)
    assert second.search("keep").total == 1
    assert second.get("keep-me").id == memory.id
    second.close()


def test_a_garbage_or_old_index_is_rebuilt_not_fatal(vault_dir: Path) -> None:
    settings = Settings(vault=vault_dir)
    settings.index_file.parent.mkdir(parents=True)
    settings.index_file.write_bytes(b"this is not sqlite" * 100)
    vault = VaultService.open(settings)
    vault.create(Draft("Works", "fine"))
    assert vault.search("fine").total == 1
    vault.close()


def test_index_path_can_live_outside_the_vault(vault_dir: Path, tmp_path: Path) -> None:
    settings = Settings(vault=vault_dir, index_path=tmp_path / "elsewhere" / "i.sqlite3")
    vault = VaultService.open(settings)
    vault.create(Draft("Somewhere", "x"))
    assert (tmp_path / "elsewhere" / "i.sqlite3").exists()
    assert not (vault_dir / ".memvault" / "index.sqlite3").exists()
    vault.close()


def test_a_truncated_or_older_index_is_rebuilt_with_one_log_line(
    vault_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(vault=vault_dir)
    first = VaultService.open(settings)
    for i in range(300):
        first.create(Draft(f"Note {i}", "kangaroo " * 200), WriteOptions(allow_duplicate=True))
    first.close()
    data = settings.index_file.read_bytes()
    settings.index_file.write_bytes(data[: len(data) // 2])
    with caplog.at_level(logging.WARNING, logger="memvault"):
        second = VaultService.open(settings)
    assert second.search("kangaroo").total == 300
    assert [r.message for r in caplog.records if "rebuilding" in r.message] == [
        f"index {settings.index_file} is unreadable (database disk image is malformed); "
        "rebuilding it"
    ]
    second.close()
    with closing(sqlite3.connect(settings.index_file)) as db:
        db.execute("PRAGMA user_version = 0")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="memvault"):
        third = VaultService.open(settings)
    assert third.search("kangaroo").total == 300
    third.close()


def test_a_big_vault_is_parsed_by_worker_processes_with_the_same_result(vault_dir: Path) -> None:
    for i in range(2100):
        write_file(
            vault_dir, f"f{i % 7}/note-{i}.md", f"# Note {i}\n[[note-{(i + 1) % 2100}]] #t{i % 3}\n"
        )
    vault = VaultService.open(Settings(vault=vault_dir), fill=False)
    summary = vault.upkeep.rebuild()
    assert (summary.notes, summary.links, summary.unresolved_links) == (2100, 2100, 0)
    assert vault.list_memories(Filter(tags=("t1",)))[1] == 700
    assert vault.search("Note 1234").results[0].path == "f2/note-1234.md"

    # A sync of a vault this big walks half of the folders in a helper process.
    (vault_dir / "f3" / "note-3.md").write_text("# Note 3\nedited\n", encoding="utf-8")
    (vault_dir / "f5" / "note-5.md").unlink()
    write_file(vault_dir, "root-note.md", "# At the root\n")
    write_file(vault_dir, "f6/new-note.md", "# New\n")
    synced = vault.upkeep.sync()
    assert (synced.added, synced.updated, synced.removed) == (2, 1, 1)
    assert vault.search("edited").results[0].path == "f3/note-3.md"
    vault.close()


def test_shares_of_a_walk_cover_the_vault_once(vault_dir: Path) -> None:
    for path in ("a.md", "f1/b.md", "f1/sub/c.md", "f2/d.md", "f3/e.md", "f4/f.md"):
        write_file(vault_dir, path, "# x\n")
    store = VaultStore(vault_dir)
    whole = sorted(info.path for info in store.walk())
    shares = [sorted(info.path for info in store.walk(None, (i, 3))) for i in range(3)]
    assert sorted(path for share in shares for path in share) == whole
    assert shares[0] == ["a.md", "f1/b.md", "f1/sub/c.md", "f4/f.md"]


def dies_in_a_worker(job: tuple[str, str, int, int]) -> object:
    """file_rows, except that a worker process dies on one file (module level: pickled)."""
    if str(os.getpid()) != os.environ["MEMVAULT_TEST_PARENT"] and job[1] == "note-1500.md":
        os._exit(1)
    return file_rows(job)


def test_a_parsing_worker_that_dies_does_not_hang_the_rebuild(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(2100):
        write_file(vault_dir, f"note-{i}.md", f"# Note {i}\n")
    monkeypatch.setattr("memvault.index.sync.file_rows", dies_in_a_worker)
    monkeypatch.setenv("MEMVAULT_TEST_PARENT", str(os.getpid()))
    vault = VaultService.open(Settings(vault=vault_dir), fill=False)
    assert vault.upkeep.rebuild().notes == 2100
    vault.close()
