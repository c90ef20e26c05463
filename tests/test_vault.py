"""VaultService: memories as files; exact lookups; safe paths; limits; atomic, lossless writes."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.core.memory import Limits
from memvault.errors import Conflict, Duplicate, Invalid, NotFound, TooLarge
from memvault.service.vault import VaultService
from memvault.storage.files import VaultStore

from .conftest import write_file

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}")


def test_create_writes_category_slug_file_with_frontmatter(vault: VaultService) -> None:
    memory = vault.create(
        Draft("Meeting with John about Q4 goals", "# Q4\nNotes", ["q4", "#goals"], "work")
    )
    assert memory.path == "work/meeting-with-john-about-q4-goals.md"
    assert UUID.fullmatch(memory.id)
    text = (vault.root / memory.path).read_text()
    assert text.startswith(f"---\nid: {memory.id}\ntitle: Meeting with John about Q4 goals\n")
    assert "category: work\ntags: [q4, goals]\ncreated_at: " in text
    assert text.endswith("---\n# Q4\nNotes\n")
    assert memory.created_at == memory.updated_at == memory.last_reviewed


def test_slugs_are_unique_across_the_whole_vault(vault: VaultService) -> None:
    paths = [
        vault.create(Draft(title, f"text {n}", category=c)).path
        for n, (title, c) in enumerate(
            (("Same title", None), ("Same title!", "a"), ("Same, title", "b/c"))
        )
    ]
    assert paths == ["same-title.md", "a/same-title-2.md", "b/c/same-title-3.md"]


def test_hostile_titles_and_categories_stay_inside_the_vault(vault: VaultService) -> None:
    assert vault.create(Draft("../../etc/passwd", "x")).path == "etc-passwd.md"
    assert vault.create(Draft("/abs/path", "x")).path == "abs-path.md"
    assert vault.create(Draft("x", "y", category="../../../tmp")).path == "tmp/x.md"
    assert vault.create(Draft("!!!", "y")).path == "memory.md"
    assert vault.create(Draft("支付重试策略", "y")).path == "支付重试策略.md"
    for bad in ("../outside.md", "/etc/passwd", "a/../../b.md"):
        with pytest.raises(Invalid):
            VaultStore(vault.root).absolute(bad)


def test_symlinks_out_of_the_vault_are_neither_followed_nor_indexed(
    vault: VaultService, vault_dir: Path, tmp_path: Path
) -> None:
    outside = write_file(tmp_path, "outside/secret.md", "# Secret\nkey\n")
    os.symlink(outside, vault_dir / "link.md")
    os.symlink(outside.parent, vault_dir / "folder")
    summary = vault.upkeep.rebuild()
    assert summary.notes == 0
    assert any(s.path == "link.md" for s in summary.skipped)
    with pytest.raises(Invalid):
        VaultStore(vault.root).read_text("folder/secret.md")


def test_read_by_id_path_stem_title_and_alias(vault: VaultService, vault_dir: Path) -> None:
    memory = vault.create(Draft("Payment Retry Policy", "body", category="work"))
    write_file(
        vault_dir,
        "work/payment-retry-policy.md",
        (vault_dir / memory.path).read_text().replace("tags:", "aliases: [PRP]\ntags:"),
    )
    vault.upkeep.rebuild()
    for identifier in (
        memory.id,
        "work/payment-retry-policy.md",
        "work/payment-retry-policy",
        "payment-retry-policy",
        "PAYMENT-retry-policy",
        "payment retry policy",
        "prp",
    ):
        assert vault.get(identifier).id == memory.id, identifier


def test_a_near_miss_is_an_error_with_suggestions_never_another_memory(
    vault: VaultService,
) -> None:
    vault.create(Draft("Payment retry policy", "body"))
    with pytest.raises(NotFound) as caught:
        vault.get("Payment retry polcy")
    assert "did you mean 'Payment retry policy' (0.8" in str(caught.value)
    assert caught.value.suggestions[0][0] == "payment-retry-policy.md"
    with pytest.raises(NotFound):
        vault.delete("Payment retry polcy")
    with pytest.raises(NotFound):
        vault.update("Payment retry polcy", Revision(edit=BodyEdit(content="overwrite")))
    assert vault.get("payment-retry-policy").body == "body\n"


def test_recall_returns_a_clear_best_match_with_its_confidence(vault: VaultService) -> None:
    vault.create(Draft("Payment retry policy", "Retries happen three times.", category="decision"))
    vault.create(Draft("Deploy checklist", "Migrations first, then the deploy.", category="gotcha"))
    exact = vault.recall("payment-retry-policy")
    assert (exact.memory.title, exact.confidence, exact.matched_by) == (
        "Payment retry policy",
        1.0,
        "exact",
    )
    typo = vault.recall("Payment retry polcy")
    assert typo.memory.title == "Payment retry policy" and 0.6 <= typo.confidence < 1.0
    part = vault.recall("retry policy")
    assert part.memory.title == "Payment retry policy" and 0.6 <= part.confidence < 1.0
    assert part.matched_by == "name"
    with pytest.raises(NotFound, match="search_mem"):
        vault.recall("migrations")  # only in a text: search finds it, read does not guess
    scoped = vault.recall("gotcha:checklist")
    assert scoped.memory.title == "Deploy checklist"
    with pytest.raises(NotFound):
        vault.recall("decision:checklist")


def test_recall_lists_candidates_when_none_is_clearly_ahead(vault: VaultService) -> None:
    vault.create(Draft("Payment retry policy", "a"))
    vault.create(Draft("Payment retry policies", "b"))
    with pytest.raises(NotFound, match="did you mean") as caught:
        vault.recall("Payment retry")
    assert len(caught.value.suggestions) == 2


def test_duplicates_are_refused_with_the_existing_id(vault: VaultService) -> None:
    text = "Run the database migrations before the deploy, never after: the old code must keep "
    first = vault.create(Draft("Deploy order", text + "working."))
    with pytest.raises(Duplicate, match=first.id):
        vault.create(Draft("deploy ORDER", "something else"))
    with pytest.raises(Duplicate, match="near-identical") as caught:
        vault.create(Draft("Another title", text + "running!"))
    assert caught.value.existing_id == first.id
    assert vault.create(Draft("Short one", "Retry 3 times.")).title == "Short one"
    assert vault.create(Draft("Short two", "Retry 5 times.")).title == "Short two"
    forced = vault.create(Draft("Deploy order", "again"), WriteOptions(allow_duplicate=True))
    assert forced.path == "deploy-order-2.md"


def test_the_duplicate_check_never_reads_a_note_too_big_to_be_alike(
    vault: VaultService, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hand-made note of several MB holds every word of a new memory: it cannot be
    near-identical to it, so a write neither reads nor compares it (a 50 MB one cost each write
    about a second), while a note of the new memory's size is still refused."""
    text = "Run the database migrations before the deploy, never after: the old code must keep "
    write_file(vault_dir, "big.md", "# Big\n\n" + (text + "working.\n") * 60_000)
    vault.upkeep.sync()
    read: list[str] = []
    real_read = VaultStore.read

    def spy(store: VaultStore, path: str) -> object:
        read.append(path)
        return real_read(store, path)

    monkeypatch.setattr(VaultStore, "read", spy)
    vault.create(Draft("Deploy order", text + "working."))
    assert "big.md" not in read
    with pytest.raises(Duplicate, match="near-identical"):
        vault.create(Draft("Another title", text + "running!"))


def test_a_note_gone_or_spoilt_since_it_was_indexed_does_not_fail_a_write(
    vault: VaultService, vault_dir: Path
) -> None:
    """The near-identical check reads the notes holding the new memory's words; one deleted,
    or made unreadable, by another program since it was indexed is no twin, and the write
    goes on (it failed with "no file ... in the vault")."""
    text = "Run the database migrations before the deploy, never after: the old code must keep "
    vault.create(Draft("Deploy order", text + "working."))
    vault.create(Draft("Deploy steps", text + "serving."))
    (vault_dir / "deploy-order.md").unlink()
    (vault_dir / "deploy-steps.md").write_bytes(b"\xff\xfe\x00 not text")
    written = vault.create(Draft("Another title", text + "running!"))
    assert (vault_dir / written.path).is_file()


def test_two_files_with_one_name_are_ambiguous(vault: VaultService, vault_dir: Path) -> None:
    write_file(vault_dir, "a/note.md", "A\n")
    write_file(vault_dir, "b/note.md", "B\n")
    vault.upkeep.rebuild()
    with pytest.raises(NotFound, match="names 2 memories"):
        vault.get("note")
    assert vault.get("b/note").body == "B\n"


def test_title_change_renames_category_change_moves_id_stays(vault: VaultService) -> None:
    memory = vault.create(Draft("First title", "body", category="work"))
    renamed = vault.update(memory.id, Revision(title="Second title"))
    assert renamed.path == "work/second-title.md" and renamed.id == memory.id
    moved = vault.update(memory.id, Revision(category="projects/2024"))
    assert moved.path == "projects/2024/second-title.md" and moved.id == memory.id
    assert moved.metadata["category"] == "projects/2024"
    root = vault.root
    assert not (root / "work").exists()
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md")) == [
        "projects/2024/second-title.md"
    ]
    assert vault.get(memory.id).title == "Second title"


def test_update_content_and_tags_keeps_unknown_frontmatter(
    vault: VaultService, vault_dir: Path
) -> None:
    memory = vault.create(Draft("Note", "old"))
    path = vault_dir / memory.path
    path.write_text(path.read_text().replace("tags: []", "status: draft  # keep me\ntags: []"))
    updated = vault.update("Note", Revision(edit=BodyEdit(content="new body"), tags=["x"]))
    text = path.read_text()
    assert "status: draft  # keep me\ntags: [x]\n" in text
    assert text.endswith("---\nnew body\n")
    assert updated.updated_at is not None


def test_replacing_content_keeps_the_related_list(vault: VaultService) -> None:
    a = vault.create(Draft("A", "a"))
    vault.create(Draft("B", "b"))
    vault.link("A", "B")
    updated = vault.update(a.id, Revision(edit=BodyEdit(content="fresh text")))
    assert updated.body == "fresh text\n\n## Related\n- [[b|B]]\n"


def test_stale_expected_updated_at_is_a_conflict(vault: VaultService) -> None:
    memory = vault.create(Draft("Note", "v1"))
    with pytest.raises(Conflict, match="changed since"):
        vault.update(
            memory.id,
            Revision(edit=BodyEdit(content="v2")),
            WriteOptions(expected_updated_at="2000-01-01T00:00:00Z"),
        )
    assert vault.get(memory.id).body == "v1\n"
    vault.update(
        memory.id,
        Revision(edit=BodyEdit(content="v2")),
        WriteOptions(expected_updated_at=memory.updated_at),
    )
    assert vault.get(memory.id).body == "v2\n"


def test_limits_give_clear_errors(vault_dir: Path) -> None:
    small = VaultService.open(Settings(vault=vault_dir, limits=Limits(max_content=1024)))
    with pytest.raises(TooLarge, match="content is 2 KiB; the limit is 1 KiB"):
        small.create(Draft("Big", "x" * 2048))
    with pytest.raises(TooLarge, match="title is 201 characters; the limit is 200"):
        small.create(Draft("t" * 201, "x"))
    with pytest.raises(TooLarge, match="65 tags given; the limit is 64"):
        small.create(Draft("Tags", "x", [f"t{i}" for i in range(65)]))
    with pytest.raises(Invalid, match="title is empty"):
        small.create(Draft("  \n ", "x"))
    assert list(vault_dir.rglob("*.md")) == []
    small.close()


def test_delete_removes_the_file(vault: VaultService) -> None:
    memory = vault.create(Draft("Gone soon", "x", category="tmp"))
    deleted = vault.delete(memory.id)
    assert deleted.memory.id == memory.id
    assert not (vault.root / memory.path).exists()
    with pytest.raises(NotFound):
        vault.get(memory.id)


def test_hand_made_notes_are_read_but_never_rewritten(vault: VaultService, vault_dir: Path) -> None:
    write_file(vault_dir, "plain.md", "# A heading title\n\nText #tag\n")
    write_file(vault_dir, "broken.md", "---\ntitle: [oops\n---\n# Broken\n")
    summary = vault.upkeep.rebuild()
    assert summary.notes == 2
    assert [s.path for s in summary.skipped] == ["broken.md"]
    plain = vault.get("A heading title")
    assert plain.path == "plain.md" and not plain.has_frontmatter
    assert vault.get(plain.id).path == "plain.md"
    broken = vault.get("broken")
    assert broken.problem and "YAML" in broken.problem
    with pytest.raises(Invalid, match="fix the YAML"):
        vault.update("broken", Revision(title="New"))


def test_editing_a_note_without_frontmatter_gives_it_frontmatter_with_a_stable_id(
    vault: VaultService, vault_dir: Path
) -> None:
    write_file(vault_dir, "plain.md", "Text\n")
    vault.upkeep.rebuild()
    before = vault.get("plain")
    after = vault.update("plain", Revision(tags=["t"]))
    assert after.id == before.id and after.has_frontmatter
    assert (vault_dir / "plain.md").read_text().endswith("---\nText\n")


def test_writes_leave_no_temporary_files(vault: VaultService, vault_dir: Path) -> None:
    memory = vault.create(Draft("One", "x"))
    vault.update(memory.id, Revision(edit=BodyEdit(content="y")))
    assert sorted(p.name for p in vault_dir.iterdir()) == [".memvault", "one.md"]


def test_an_edit_made_in_obsidian_counts_as_a_change_for_conflicts(
    vault: VaultService, vault_dir: Path
) -> None:
    memory = vault.create(Draft("Shared note", "v1"))
    path = vault_dir / memory.path
    path.write_text(path.read_text().replace("v1", "edited by hand"))
    later = path.stat().st_mtime + 60
    os.utime(path, (later, later))
    with pytest.raises(Conflict, match="changed since"):
        vault.update(
            memory.id,
            Revision(edit=BodyEdit(content="v2")),
            WriteOptions(expected_updated_at=memory.updated_at),
        )
    assert "edited by hand" in path.read_text()
    fresh = vault.get(memory.id)
    assert fresh.updated_at and memory.updated_at and fresh.updated_at > memory.updated_at
    vault.update(
        memory.id,
        Revision(edit=BodyEdit(append="v2")),
        WriteOptions(expected_updated_at=fresh.updated_at),
    )
    assert path.read_text().endswith("edited by hand\n\nv2\n")
