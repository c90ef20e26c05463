"""Search and listing filters through the service: categories as written or as stored, several
categories and scopes at once, time windows, relevance, prefer_recent, and paging."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision
from memvault.core.records import Filter
from memvault.errors import Invalid
from memvault.service.vault import VaultService

from .conftest import write_file

DAY = 86400


def dated(root: Path, relative: str, title: str, body: str, days_ago: float, **meta: str) -> None:
    """A hand-made memory last changed (and created) `days_ago` days ago, file time included."""
    moment = time.time() - days_ago * DAY
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
    extra = "".join(f"{key}: {value}\n" for key, value in meta.items())
    text = f"---\ntitle: {title}\ncreated_at: {stamp}\nupdated_at: {stamp}\n{extra}---\n{body}\n"
    path = write_file(root, relative, text)
    os.utime(path, (moment, moment))


def titles_listed(vault: VaultService, where: Filter) -> list[str]:
    return sorted(row.title for row in vault.list_memories(where)[0])


def titles_found(vault: VaultService, query: str, where: Filter) -> list[str]:
    return sorted(hit.title for hit in vault.search(query, 10, 0, where).results)


def test_a_category_filter_accepts_the_spelling_a_write_accepted(vault: VaultService) -> None:
    vault.create(
        Draft("Use events", "Services talk through events.", category="architecture_decision")
    )
    for spelling in ("architecture_decision", "Architecture Decision", "architecture-decision"):
        assert titles_listed(vault, Filter(category=spelling)) == ["Use events"]
        assert titles_found(vault, "events", Filter(category=spelling)) == ["Use events"]


@pytest.mark.parametrize("category", ["archive", "Archive", "archive/ops", "/archive/"])
def test_a_new_memory_in_the_archive_is_refused_with_the_reason(
    vault: VaultService, category: str
) -> None:
    with pytest.raises(Invalid, match="is refused: archive/ is where memvault moves expired"):
        vault.create(Draft("Hidden at once", "Nobody would find this.", category=category))
    assert vault.list_memories(Filter(archived=None)) == ([], 0)
    assert vault.create(Draft("Archival tips", "Fine.", category="archives")).category == "archives"


def test_a_category_filter_still_finds_a_folder_made_by_hand(
    vault: VaultService, vault_dir: Path
) -> None:
    write_file(vault_dir, "Team Notes/standup.md", "# Standup\nDaily at ten.\n")
    vault.upkeep.sync()
    assert titles_listed(vault, Filter(category="Team Notes")) == ["Standup"]
    assert titles_found(vault, "daily", Filter(category="team notes")) == ["Standup"]


@pytest.mark.parametrize("sort", ["updated", "created", "title", "usage", "reviewed"])
def test_a_category_covers_its_folder_and_below_never_a_sibling_of_like_name(
    vault: VaultService, vault_dir: Path, sort: str
) -> None:
    """The folder filter is a range of lower-cased names (the index finds it): `Team` and
    `team/ops` are in, `team-b`, `team.x`, `teams` and `team0` are not, whatever the order."""
    for folder in ("Team", "team/ops", "team/ops/deep", "team-b", "team.x", "teams", "team0"):
        write_file(vault_dir, f"{folder}/note.md", f"# In {folder}\nText.\n")
    vault.upkeep.sync()
    listed = sorted(row.title for row in vault.list_memories(Filter(category="team"), sort)[0])
    assert listed == ["In Team", "In team/ops", "In team/ops/deep"]
    scoped = Filter(category="TEAM/OPS", scope=("shop",))
    assert sorted(row.title for row in vault.list_memories(scoped, sort, counted=False)[0]) == [
        "In team/ops",
        "In team/ops/deep",
    ]


def test_a_word_only_in_the_category_finds_the_memory(vault: VaultService) -> None:
    vault.create(
        Draft("Use events", "Services talk through a bus.", category="architecture-decision")
    )
    assert [hit.title for hit in vault.search("architecture").results] == ["Use events"]
    assert [hit.title for hit in vault.search("decision").results] == ["Use events"]


def test_several_categories_match_any_of_them(vault: VaultService) -> None:
    vault.create(Draft("Checkout times out", "The checkout call times out.", category="problem"))
    vault.create(
        Draft("Raise the timeout", "Raise the checkout timeout to 30 s.", category="solution")
    )
    vault.create(
        Draft("Checkout owner", "The payments team owns checkout.", category="account-info")
    )
    both = Filter(category=("problem", "solution"))
    assert titles_listed(vault, both) == ["Checkout times out", "Raise the timeout"]
    assert titles_found(vault, "checkout", both) == ["Checkout times out", "Raise the timeout"]


def test_several_scopes_give_each_of_them_plus_the_global_ones(vault: VaultService) -> None:
    vault.create(Draft("Shop deploy", "Deploy the shop on Mondays.", scope="shop"))
    vault.create(Draft("Shared deploy", "Every deploy is announced.", scope="shared"))
    vault.create(Draft("Blog deploy", "The blog deploys itself.", scope="blog"))
    vault.create(Draft("Global deploy", "Deploys need a green build."))
    scopes = Filter(scope=("shop", "shared"))
    expected = ["Global deploy", "Shared deploy", "Shop deploy"]
    assert titles_listed(vault, scopes) == expected
    assert titles_found(vault, "deploy", scopes) == expected
    only = Filter(scope=("shop", "shared"), only_scope=True)
    assert titles_found(vault, "deploy", only) == ["Shared deploy", "Shop deploy"]


def test_since_leaves_out_a_memory_a_year_old(vault: VaultService, vault_dir: Path) -> None:
    dated(vault_dir, "old.md", "Old cache note", "The cache holds sessions.", 365)
    dated(vault_dir, "new.md", "New cache note", "The cache holds carts.", 2)
    vault.upkeep.sync()
    for since in ("7d", "1 week", "this year" if time.gmtime().tm_yday > 7 else "2w"):
        assert titles_found(vault, "cache", Filter(since=since)) == ["New cache note"]
        assert titles_listed(vault, Filter(since=since)) == ["New cache note"]
    assert titles_found(vault, "cache", Filter(until="7d")) == ["Old cache note"]
    assert titles_listed(vault, Filter(since="2 years", until="6 months")) == ["Old cache note"]


def test_since_can_read_the_created_time(vault: VaultService, vault_dir: Path) -> None:
    dated(vault_dir, "made-long-ago.md", "Made long ago", "Edited lately.", 400)
    vault.upkeep.sync()
    vault.update("Made long ago", Revision(title="Made long ago, edited now"))
    assert titles_listed(vault, Filter(since="7d")) == ["Made long ago, edited now"]
    assert titles_listed(vault, Filter(since="7d", time_field="created")) == []
    assert titles_listed(vault, Filter(until="1y", time_field="created")) == [
        "Made long ago, edited now"
    ]


def test_an_unreadable_time_is_a_clear_error(vault: VaultService) -> None:
    with pytest.raises(Invalid, match="cannot read the time 'soonish'"):
        vault.search("x", where=Filter(since="soonish"))
    with pytest.raises(Invalid, match="cannot read the time"):
        vault.list_memories(Filter(until="next tuesday"))


def test_the_only_hit_in_a_one_note_vault_is_fully_relevant(vault: VaultService) -> None:
    vault.create(Draft("Kafka topics", "Orders go to the orders topic."))
    [hit] = vault.search("kafka topics").results
    assert hit.relevance == 1.0


def test_relevance_is_the_share_of_the_query_words_a_memory_holds(vault: VaultService) -> None:
    vault.create(Draft("Kafka retention", "Kafka keeps orders for seven days."))
    vault.create(Draft("Kafka brokers", "Three brokers run Kafka."))
    for n in range(20):
        vault.create(Draft(f"Filler {n}", f"Unrelated note number {n} about lunch."))
    hits = {hit.title: hit.relevance for hit in vault.search("kafka retention orders").results}
    assert hits == {"Kafka retention": 1.0, "Kafka brokers": pytest.approx(1 / 3, abs=1e-3)}


def test_relevance_of_one_search_leaves_nothing_behind_for_the_next(vault: VaultService) -> None:
    """Relevance is matched in a scratch table each thread keeps: the page one search put
    there is gone before the next search's page, so a note changed since counts as it is."""
    memory = vault.create(Draft("Kafka retention", "Kafka keeps orders for seven days."))
    first = {hit.title: hit.relevance for hit in vault.search("kafka orders").results}
    vault.update(
        memory.id, Revision(title="Kafka brokers", edit=BodyEdit(content="Three brokers.\n"))
    )
    again = {hit.title: hit.relevance for hit in vault.search("kafka orders").results}
    assert first == {"Kafka retention": 1.0}
    assert again == {"Kafka brokers": 0.5}


def test_min_relevance_drops_weak_hits_and_counts_what_is_left(vault: VaultService) -> None:
    vault.create(Draft("Kafka retention", "Kafka keeps orders for seven days."))
    for n in range(12):
        vault.create(Draft(f"Kafka broker {n}", f"Broker {n} runs Kafka."))
    loose = vault.search("kafka retention orders", limit=5)
    assert loose.total == 13
    strong = vault.search("kafka retention orders", limit=5, min_relevance=0.9)
    assert [hit.title for hit in strong.results] == ["Kafka retention"]
    assert (strong.total, strong.has_more) == (1, False)


def test_paging_says_when_more_follow(vault: VaultService) -> None:
    for n in range(5):
        vault.create(Draft(f"Backup {n}", f"Backup job {n} runs nightly."))
    first = vault.search("backup", limit=2)
    last = vault.search("backup", limit=2, offset=4)
    assert (first.offset, first.has_more, first.total) == (0, True, 5)
    assert (last.offset, last.has_more, len(last.results)) == (4, False, 1)
    seen = [hit.id for offset in (0, 2, 4) for hit in vault.search("backup", 2, offset).results]
    assert len(set(seen)) == 5


def near_tie_vault(vault: VaultService, vault_dir: Path) -> None:
    """Two notes as good as each other for 'redis eviction policy', the older scoring a hair
    higher; and an old note that answers far better than a new one that merely mentions it."""
    text = "Redis eviction policy is allkeys-lru on the cache cluster."
    dated(vault_dir, "older.md", "Redis eviction (older)", text + " Set in 2023.", 300)
    dated(vault_dir, "newer.md", "Redis eviction (newer)", text + " Set in the spring of 2024.", 1)
    vault.upkeep.sync()


def test_prefer_recent_puts_the_newer_of_a_near_tie_first(
    vault: VaultService, vault_dir: Path
) -> None:
    near_tie_vault(vault, vault_dir)
    query = "redis eviction policy"
    plain = [hit.title for hit in vault.search(query).results]
    recent = [hit.title for hit in vault.search(query, prefer_recent=True).results]
    assert plain == ["Redis eviction (older)", "Redis eviction (newer)"]
    assert recent == ["Redis eviction (newer)", "Redis eviction (older)"]


def test_prefer_recent_never_buries_a_clearly_better_older_answer(
    vault: VaultService, vault_dir: Path
) -> None:
    dated(
        vault_dir,
        "answer.md",
        "Postgres connection pool size",
        "The Postgres connection pool size is 20 per pod; the pool size was tuned in 2023.",
        400,
    )
    dated(vault_dir, "mention.md", "Weekly notes", "Talked about Postgres today. Pool party.", 1)
    for n in range(5):
        dated(vault_dir, f"filler-{n}.md", f"Filler {n}", "Lunch and coffee.", 3)
    vault.upkeep.sync()
    query = "postgres connection pool size"
    plain = [hit.title for hit in vault.search(query).results]
    recent = [hit.title for hit in vault.search(query, prefer_recent=True).results]
    assert plain[0] == recent[0] == "Postgres connection pool size"
    assert recent == plain


def test_relevance_means_the_same_in_every_mode(vault_dir: Path) -> None:
    """By words: the share of the query's words; by meaning: the cosine similarity; hybrid:
    the higher. A paraphrase sharing no word is relevant by meaning only; filters hold."""
    vault = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    try:
        vault.create(Draft("Rolling back a deployment", "Redeploy the previous build from CI."))
        vault.create(Draft("Office plants", "Water the ficus every Monday."))
        dated(vault_dir, "old.md", "Rollback in 2020", "We rolled back by hand then.", 1500)
        vault.upkeep.sync()
        assert vault.embed() == 3
        paraphrase = "return the site to the older version after a bad release"
        by_meaning = vault.search(paraphrase, mode="semantic").results
        assert by_meaning[0].title == "Rolling back a deployment"
        assert all(0.0 <= hit.relevance <= 1.0 for hit in by_meaning)
        assert by_meaning[0].relevance > by_meaning[-1].relevance
        hybrid = {hit.title: hit.relevance for hit in vault.search("ficus", mode="hybrid").results}
        assert hybrid["Office plants"] == 1.0
        recent = vault.search(paraphrase, mode="semantic", where=Filter(since="1y")).results
        assert "Rollback in 2020" not in [hit.title for hit in recent]
    finally:
        vault.close()
