"""LinkService through the vault: links stay bidirectional, and no link is ever left broken."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.core.drafts import Draft, Revision
from memvault.core.reports import BrokenLink, DuplicateId, LinkPair
from memvault.errors import Invalid
from memvault.service.vault import VaultService

from .conftest import write_file


def body_of(vault: VaultService, identifier: str) -> str:
    return vault.get(identifier).body


def test_link_writes_both_related_lists_once(vault: VaultService) -> None:
    a = vault.create(Draft("Alpha", "About alpha.", category="x"))
    b = vault.create(Draft("Beta", "About beta.", category="y"))
    change = vault.link(a.id, b.id, "see beta")
    assert change.markdown == "[[beta|see beta]]"
    assert body_of(vault, a.id) == "About alpha.\n\n## Related\n- [[beta|see beta]]\n"
    assert body_of(vault, b.id) == "About beta.\n\n## Related\n- [[alpha|Alpha]]\n"
    assert [row.target for row in change.source_links] == ["y/beta.md"]
    assert [row.target for row in change.target_links] == ["x/alpha.md"]
    again = vault.link(a.id, b.id)
    assert not again.changed
    assert body_of(vault, a.id).count("[[beta") == 1
    assert vault.upkeep.check().clean


def test_self_link_is_refused(vault: VaultService) -> None:
    a = vault.create(Draft("Alpha", "x"))
    with pytest.raises(Invalid, match="cannot link to itself"):
        vault.link(a.id, "alpha")


def test_unlink_removes_both_sides_and_is_idempotent(vault: VaultService) -> None:
    vault.create(Draft("Alpha", "a"))
    vault.create(Draft("Beta", "b"))
    vault.link("Alpha", "Beta")
    assert vault.unlink("Beta", "Alpha").changed
    assert body_of(vault, "Alpha") == "a\n"
    assert body_of(vault, "Beta") == "b\n"
    assert not vault.unlink("Alpha", "Beta").changed


def test_backlinks_include_hand_written_links(vault: VaultService, vault_dir: Path) -> None:
    target = vault.create(Draft("Target", "t"))
    write_file(vault_dir, "notes/person.md", "I wrote [[target|a link]] by hand.\n")
    vault.upkeep.rebuild()
    assert [row.source for row in vault.backlinks(vault.get(target.id))] == ["notes/person.md"]


def test_rename_rewrites_every_inbound_link_keeping_its_parts(
    vault: VaultService, vault_dir: Path
) -> None:
    old = vault.create(Draft("Old name", "# Part\ntext ^abc\n", category="a"))
    write_file(
        vault_dir,
        "b/source.md",
        "See [[old-name|the note]], [[old-name#Part]], [[old-name#^abc]], ![[old-name]],\n"
        "[[a/old-name]], [md](../a/old-name.md#part), `[[old-name]]` and [[unrelated]].\n"
        "| t | [[old-name\\|cell]] |\n",
    )
    vault.upkeep.rebuild()
    vault.update(old.id, Revision(title="New name"))
    assert (vault_dir / "b/source.md").read_text() == (
        "See [[new-name|the note]], [[new-name#Part]], [[new-name#^abc]], ![[new-name]],\n"
        "[[a/new-name]], [md](../a/new-name.md#part), `[[old-name]]` and [[unrelated]].\n"
        "| t | [[new-name\\|cell]] |\n"
    )
    assert {row.source for row in vault.backlinks(vault.get(old.id))} == {"b/source.md"}
    assert vault.upkeep.check().broken_links == [BrokenLink("b/source.md", "unrelated", [2])]


def test_rename_leaves_files_without_frontmatter_without_frontmatter(
    vault: VaultService, vault_dir: Path
) -> None:
    vault.create(Draft("Old", "x"))
    write_file(vault_dir, "hand.md", "Link to [[old]].\n")
    vault.upkeep.rebuild()
    vault.update("old", Revision(title="Newer"))
    assert (vault_dir / "hand.md").read_text() == "Link to [[newer]].\n"


def test_delete_removes_inbound_links_everywhere(vault: VaultService, vault_dir: Path) -> None:
    gone = vault.create(Draft("Gone", "g"))
    keep = vault.create(Draft("Keep", "Mentions [[gone|the gone note]] inline."))
    vault.link(keep.id, gone.id)
    write_file(vault_dir, "hand.md", "Also [[gone]] and [[Gone#Heading|here]].\n")
    vault.upkeep.rebuild()
    deleted = vault.delete("Gone")
    assert deleted.changed == ["hand.md", "keep.md"]
    assert body_of(vault, keep.id) == "Mentions the gone note inline.\n"
    assert (vault_dir / "hand.md").read_text() == "Also gone and here.\n"
    assert vault.upkeep.check().broken_links == []


def test_check_finds_and_fixes_one_sided_links_and_duplicate_ids(
    vault: VaultService, vault_dir: Path
) -> None:
    a = vault.create(Draft("Alpha", "a"))
    vault.create(Draft("Beta", "b"))
    copy = (vault_dir / "alpha.md").read_text().replace("title: Alpha", "title: Alpha copy")
    write_file(vault_dir, "copy.md", copy)
    vault.upkeep.rebuild()
    vault.link("Alpha", "Beta")
    beta = vault_dir / "beta.md"
    beta.write_text(beta.read_text().replace("\n## Related\n- [[alpha|Alpha]]\n", ""))
    vault.upkeep.rebuild()
    report = vault.upkeep.check()
    assert report.one_sided_links == [LinkPair("alpha.md", "beta.md")]
    assert report.duplicate_ids == [DuplicateId(a.id, ["alpha.md", "copy.md"])]
    fixed = vault.upkeep.check(fix=True)
    assert fixed.fixed and fixed.one_sided_links == [] and fixed.duplicate_ids == []
    assert "[[alpha|Alpha]]" in body_of(vault, "beta")
    assert vault.get(a.id).path == "alpha.md"


def test_dangling_links_resolve_when_their_target_appears(vault: VaultService) -> None:
    vault.create(Draft("Source", "Points at [[Future note]]."))
    lines = (vault.root / "source.md").read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if "[[Future note]]" in text)
    assert vault.upkeep.check().broken_links == [BrokenLink("source.md", "Future note", [line])]
    vault.create(Draft("Future note", "here now"))
    assert vault.upkeep.check().broken_links == []
    assert [r.target for r in vault.outgoing(vault.get("source"))] == ["future-note.md"]


HAND = "See [[old-name|this]] and [[Old name]].\n"
# The link by title keeps its words as display text (test_link_words.py).
RENAMED = "See [[new-name|this]] and [[new-name|Old name]].\n"


@pytest.fixture
def half_renamed(vault: VaultService, vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A vault where a crash cut short renaming 'Old name' to 'New name': the file moved, but
    hand.md still links to the old name."""
    vault.create(Draft("Old name", "x"))
    write_file(vault_dir, "hand.md", HAND)
    vault.upkeep.sync()
    with monkeypatch.context() as patch:
        patch.setattr("memvault.writes.links.LinkService._retarget", crash_mid_rename)
        with pytest.raises(KeyboardInterrupt):
            vault.update("old-name", Revision(title="New name"))
    assert (vault_dir / "new-name.md").exists()
    assert (vault_dir / "hand.md").read_text() == HAND
    return vault_dir


def crash_mid_rename(self: object, entry: object) -> None:
    raise KeyboardInterrupt("killed mid-rename")


def test_a_rename_cut_short_is_finished_by_upkeep_not_by_opening(
    vault: VaultService, half_renamed: Path
) -> None:
    vault.close()
    reopened = VaultService.open(Settings(vault=half_renamed))
    assert (half_renamed / "hand.md").read_text() == HAND
    assert reopened.upkeep.maintain().finished_renames == [
        "finished renaming old-name.md to new-name.md"
    ]
    assert (half_renamed / "hand.md").read_text() == RENAMED
    assert reopened.upkeep.check().broken_links == []
    assert not list((half_renamed / ".memvault" / "journal").iterdir())
    reopened.close()


def test_the_next_write_finishes_a_rename_a_crash_cut_short_first(
    vault: VaultService, half_renamed: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="memvault"):
        vault.create(Draft("Unrelated", "a write of anything"))
    assert (half_renamed / "hand.md").read_text() == RENAMED
    assert [r.message for r in caplog.records] == [
        "finished renaming old-name.md to new-name.md (interrupted earlier)"
    ]
