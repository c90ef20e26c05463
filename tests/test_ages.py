"""A memory's age comes from the file's own record: a clone, a copy or a restore (every file with
a new mtime) keeps the times its frontmatter says, and an edit made by hand still counts as an
update, whether the index learns of it live, by a sync or by a reindex."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from memvault.cli import main
from memvault.config import Settings
from memvault.core.drafts import Draft
from memvault.core.records import Filter
from memvault.features.review import review
from memvault.service.vault import VaultService

from .conftest import write_file

OLD = "2020-01-02T03:04:05Z"
OLD_SECONDS = 1577934245


def dated(root: Path, title: str, body: str, keys: tuple[str, ...]) -> Path:
    """A note written long ago: its frontmatter's `keys` say so, and so does its mtime."""
    stamps = "".join(f"{key}: {OLD}\n" for key in keys)
    path = write_file(
        root,
        f"decision/{title.lower()}.md",
        f"---\nid: id-{title.lower()}\ntitle: {title}\n{stamps}---\n{body}\n",
    )
    os.utime(path, (OLD_SECONDS, OLD_SECONDS))
    return path


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    """A vault as `git clone` or a restore leaves it: the notes of an old vault, without its
    index, every file modified just now."""
    source = tmp_path / "source"
    dated(source, "Alpha", "alpha text", ("created_at", "updated_at", "last_reviewed"))
    dated(source, "Beta", "beta text", ("updated_at",))
    write_file(source, "plain.md", "# Plain\nno frontmatter at all\n")
    VaultService.open(Settings(vault=source)).close()
    copy = tmp_path / "clone"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns(".memvault"))
    for note in copy.rglob("*.md"):
        os.utime(note)
    return copy


def times(vault: VaultService, where: Filter = Filter()) -> dict[str, str | None]:
    return {row.title: row.updated_at for row in vault.list_memories(where)[0]}


def recent(vault: VaultService) -> set[str]:
    return set(times(vault, Filter(since="7d")))


def edit_by_hand(path: Path, old: str, new: str) -> None:
    """An editor's save: the body changes, the frontmatter (and its updated_at) stays."""
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


@pytest.mark.parametrize("reindex", [False, True])
def test_a_clone_keeps_the_frontmatters_times(vault: VaultService, reindex: bool) -> None:
    if reindex:
        vault.upkeep.rebuild()
    assert times(vault)["Alpha"] == times(vault)["Beta"] == OLD
    assert vault.get("Alpha").updated_at == OLD
    assert vault.search("alpha").results[0].updated_at == OLD
    assert recent(vault) == {"Plain"}  # a note without dates has only its file's time
    stale = {row.title for row in review(vault, days=30).stale.items}
    assert stale == {"Alpha", "Beta"}


def test_an_edit_by_hand_is_an_update_live_and_after_a_sync(
    vault: VaultService, vault_dir: Path
) -> None:
    before = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 5))
    edit_by_hand(vault_dir / "decision/alpha.md", "alpha text", "alpha text, edited")
    assert vault.get("Alpha").updated_at > before  # read before the watcher saw it
    assert vault.upkeep.refresh("decision/alpha.md") == "updated"  # the watcher's step
    edit_by_hand(vault_dir / "decision/beta.md", "beta text", "beta text, edited")
    vault.upkeep.sync()
    assert recent(vault) == {"Alpha", "Beta", "Plain"}
    edited = times(vault)
    vault.upkeep.rebuild()
    assert times(vault) == edited  # the index saw those edits: a reindex keeps their time


def test_an_edit_by_hand_is_an_update_after_a_reindex(vault: VaultService, vault_dir: Path) -> None:
    edit_by_hand(vault_dir / "decision/alpha.md", "alpha text", "alpha text, edited")
    vault.upkeep.rebuild()
    assert recent(vault) == {"Alpha", "Plain"}
    assert times(vault)["Beta"] == OLD


def test_a_write_through_memvault_after_a_clone_is_dated_by_its_stamp(
    vault: VaultService,
) -> None:
    made = vault.create(Draft("Gamma", "gamma text", category="decision"))
    assert made.updated_at == vault.get("Gamma").updated_at
    assert recent(vault) == {"Gamma", "Plain"}


def test_list_since_on_a_clone_over_the_cli(vault_dir: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(main, ["--vault", str(vault_dir), "list", "--since", "7d"])
    assert listed.exit_code == 0, listed.output
    assert "Plain" in listed.output and "Alpha" not in listed.output
