"""A write dated by where it comes from (an import keeps its source's times), and a link
whose two sides show different words."""

from __future__ import annotations

import pytest

from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.core.records import Filter
from memvault.errors import Invalid
from memvault.service.vault import VaultService


def test_a_new_memory_keeps_the_times_it_is_given(vault: VaultService) -> None:
    memory = vault.create(
        Draft("Old", "x", created_at="2020-01-02T03:04:05+02:00"), WriteOptions(at="2021-01-01")
    )
    assert (memory.created_at, memory.updated_at) == (
        "2020-01-02T01:04:05Z",
        "2021-01-01T00:00:00Z",
    )
    # The file is dated so too: else, written now, it would read as edited since.
    again = vault.get(memory.id)
    assert (again.updated_at, again.last_reviewed) == (
        "2021-01-01T00:00:00Z",
        "2021-01-01T00:00:00Z",
    )
    rows, total = vault.list_memories(Filter(since="30d"))
    assert (rows, total) == ([], 0)


def test_a_change_keeps_the_time_it_is_given(vault: VaultService) -> None:
    memory = vault.create(Draft("Old", "x"))
    changed = vault.update(
        memory.id, Revision(edit=BodyEdit(content="y")), WriteOptions(at="2022-05-06T07:08:09Z")
    )
    assert changed.updated_at == "2022-05-06T07:08:09Z"
    assert vault.get(memory.id).updated_at == "2022-05-06T07:08:09Z"
    assert vault.get(memory.id).created_at == memory.created_at


def test_an_unreadable_time_is_refused_before_anything_is_written(vault: VaultService) -> None:
    with pytest.raises(Invalid, match="not an ISO 8601 time"):
        vault.create(Draft("T", "x", created_at="last tuesday"))
    with pytest.raises(Invalid, match="not an ISO 8601 time"):
        vault.create(Draft("T", "x"), WriteOptions(at="soon"))
    assert vault.list_memories()[1] == 0


def test_each_side_of_a_link_shows_its_own_words(vault: VaultService) -> None:
    alice, acme = vault.create(Draft("Alice", "a")), vault.create(Draft("Acme", "b"))
    vault.link(alice.id, acme.id, "works_at Acme", back_text="Alice works_at")
    assert "- [[acme|works_at Acme]]" in vault.get(alice.id).body
    assert "- [[alice|Alice works_at]]" in vault.get(acme.id).body
