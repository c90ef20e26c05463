"""What the web page asks of the service beside search, through VaultService on real files:
merging near duplicates, finding them, the change fingerprint, the review queues, the graph."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.errors import Invalid
from memvault.features.review import graph, overview, review
from memvault.service.vault import VaultService

from .conftest import write_file

TEXT = "The staging database is restored every night from the production backup at 02:00.\n"


def test_merge_keeps_both_texts_tags_and_links_and_deletes_the_other(
    vault: VaultService, vault_dir: Path
) -> None:
    keep = vault.create(Draft("Staging restore", TEXT, tags=["ops"], category="ops"))
    other = vault.create(
        Draft("Nightly restore", TEXT.replace("02:00", "02:30"), tags=["db"]),
        WriteOptions(allow_duplicate=True),
    )
    target = vault.create(Draft("Backups", "Backups live in the bucket.\n"))
    fan = vault.create(Draft("Runbook", "Restores: see [[nightly-restore]].\n"))
    vault.link(other.id, target.id)
    merged = vault.merge(keep.id, other.id)
    assert "02:00" in merged.body and "## Merged from Nightly restore" in merged.body
    assert "02:30" in merged.body and sorted(merged.tags) == ["db", "ops"]
    assert not (vault_dir / "nightly-restore.md").exists()
    assert merged.body.count("## Related") == 1
    assert {row.target_id for row in vault.outgoing(merged)} == {target.id}
    assert {row.source_id for row in vault.backlinks(merged)} >= {target.id, fan.id}
    assert "[[staging-restore" in vault.get(fan.id).body


def test_a_memory_cannot_be_merged_into_itself(vault: VaultService) -> None:
    one = vault.create(Draft("Only one", TEXT))
    try:
        vault.merge(one.id, one.id)
    except Exception as exc:
        assert "cannot be merged into itself" in str(exc)
    else:
        raise AssertionError("a merge into itself was accepted")
    assert vault.get(one.id).body == TEXT


def test_near_duplicates_pairs_alike_texts_once_and_skips_different_ones(
    vault: VaultService,
) -> None:
    vault.create(Draft("Staging restore", TEXT))
    vault.create(
        Draft("Nightly restore", TEXT.replace("02:00", "02:30")), WriteOptions(allow_duplicate=True)
    )
    vault.create(
        Draft("Unrelated", "Payment retries back off exponentially with some jitter added.\n")
    )
    pairs = vault.upkeep.near_duplicates()
    assert [(p.first, p.second) for p in pairs] == [("nightly-restore.md", "staging-restore.md")]
    assert 0.7 <= pairs[0].score < 1


def test_the_change_fingerprint_moves_with_every_kind_of_change(
    vault: VaultService, vault_dir: Path
) -> None:
    seen = [vault.changes()]
    memory = vault.create(Draft("One", "first text\n"))
    seen.append(vault.changes())
    write_file(vault_dir, "one.md", (vault_dir / "one.md").read_text() + "more\n")
    vault.upkeep.sync()
    seen.append(vault.changes())
    vault.update(memory.id, Revision(title="Renamed"))
    seen.append(vault.changes())
    vault.search("first")
    assert vault.changes() == seen[-1]
    vault.delete(memory.id)
    seen.append(vault.changes())
    assert all(before != after for before, after in pairwise(seen))
    assert len(set(seen[:-1])) == 4


def test_review_queues_name_stale_unused_and_expiring_memories(
    vault: VaultService, vault_dir: Path
) -> None:
    old = "2020-01-01T00:00:00Z"
    write_file(
        vault_dir,
        "old.md",
        f"---\nid: old-1\ntitle: Old\ncreated_at: {old}\nlast_reviewed: {old}\n---\nOld text.\n",
    )
    soon = vault.create(Draft("Soon gone", "Temporary.\n", ttl_days=3))
    used = vault.create(Draft("Used", "Used often.\n"))
    vault.upkeep.sync()
    vault.record_use([used.id])
    queues = review(vault, 90)
    assert [r.title for r in queues.stale.items] == ["Old"]
    assert {r.title for r in queues.unused.items} == {"Old", "Soon gone"}
    assert [r.id for r in queues.expiring.items] == [soon.id]
    assert queues.problems.count == 0


def test_the_graph_shows_a_neighbourhood_to_depth_two_and_the_vault_by_category(
    vault: VaultService,
) -> None:
    a = vault.create(Draft("A", "a\n", category="x"))
    b = vault.create(Draft("B", "b\n", category="y"))
    c = vault.create(Draft("C", "c\n", category="y"))
    vault.link(a.id, b.id)
    vault.link(b.id, c.id)
    near = graph(vault, a.id, 1)
    assert {n.label for n in near.nodes} == {"A", "B"}
    far = graph(vault, a.id, 2)
    assert {(n.label, n.depth) for n in far.nodes} == {("A", 0), ("B", 1), ("C", 2)}
    whole = graph(vault, None, 1)
    assert {(n.id, n.size) for n in whole.nodes} == {("x", 1), ("y", 2)}
    assert ("x", "y", 1) in whole.edges
    assert overview(vault).stats.memories == 3


def test_a_hub_s_graph_is_capped_instead_of_growing_without_bound(
    vault: VaultService, vault_dir: Path
) -> None:
    links = "\n".join(f"- [[spoke-{n}]]" for n in range(200))
    write_file(vault_dir, "hub.md", f"# Hub\n\n{links}\n")
    for n in range(200):
        write_file(vault_dir, f"spokes/spoke-{n}.md", f"# Spoke {n}\n\nback to [[hub]]\n")
    vault.upkeep.sync()
    shown = graph(vault, "hub", 2)
    assert shown.capped and len(shown.nodes) == 150


def test_a_person_archives_one_memory_while_edits_into_archive_stay_refused(
    vault: VaultService, vault_dir: Path
) -> None:
    """The page's Archive moves a memory to archive/ (out of lists, still readable); an edit
    naming an archive/ category is still refused (main's reserved categories)."""
    memory = vault.create(Draft("Old runbook", TEXT, category="ops"))
    other = vault.create(Draft("Other runbook", "Restart the queue first.\n", category="ops"))
    moved = vault.archive(memory.id)
    assert moved.path == "archive/ops/old-runbook.md"
    assert (vault_dir / "archive" / "ops" / "old-runbook.md").exists()
    assert vault.archive(moved.id).path == moved.path
    assert vault.get(memory.id).title == "Old runbook"
    assert memory.id not in {row.id for row in vault.list_memories(None, "updated", 50)[0]}
    with pytest.raises(Invalid, match="refused"):
        vault.update(other.id, Revision(category="archive/ops"))
