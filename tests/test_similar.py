"""similar_mem and `memvault similar`: the memories most like one, by meaning once the vault is
embedded (the default model), else by its words; and the duplicate guard that refuses a
reworded near-duplicate when vectors exist."""

from __future__ import annotations

import asyncio
import fcntl
import json
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from memvault.cli import main
from memvault.config import Settings
from memvault.core.drafts import Draft, WriteOptions
from memvault.core.records import Filter
from memvault.errors import Duplicate, NotFound
from memvault.index.names import Names
from memvault.semantic.model import Embedder
from memvault.semantic.vectors import Near, VectorTable
from memvault.service.duplicate_guard import DUPLICATE_CANDIDATES
from memvault.service.vault import VaultService

from .conftest import patience, write_file
from .mcp_helpers import stdio_session, structured, text_of, tool_error

ROLLBACK = (
    "Rolling back a deployment",
    "When a release breaks production, redeploy the previous build from the CI pipeline.",
)
PIPELINE = (
    "Release pipeline",
    "Every tag triggers a build that ships to the servers once the checks pass.",
)
PLANTS = ("Office plants", "Water the ficus every Monday; the cactus once a month.")
LUNCH = ("Team lunch", "Thursday lunch is at the Thai place near the station.")
GOTCHA = (
    "Jest needs --runInBand in CI",
    "Tests hang on the CI runners unless jest runs with --runInBand.",
)
REWORDED = ("Run jest serially on CI", "On CI, jest must use --runInBand or the test run hangs.")
RELATED = ("Jest coverage threshold", "CI fails when jest's line coverage drops below 80 percent.")


@pytest.fixture
def embedded(vault_dir: Path) -> Iterator[VaultService]:
    """A vault with the default model whose four memories are embedded."""
    service = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    service.create(Draft(*ROLLBACK, category="ops"))
    service.create(Draft(*PIPELINE, category="ops"))
    service.create(Draft(*PLANTS, category="office"))
    service.create(Draft(*LUNCH, category="office"))
    assert service.embed() == 4
    yield service
    service.close()


def titles(vault: VaultService, name: str, where: Filter | None = None) -> list[str]:
    return [hit.title for hit in vault.similar(name, 5, where).results]


def test_similar_finds_the_memory_alike_in_meaning_first(embedded: VaultService) -> None:
    found = embedded.similar(ROLLBACK[0], 5)
    assert found.by == "meaning"
    assert found.results[0].title == PIPELINE[0]  # no word of its own shared
    assert ROLLBACK[0] not in [hit.title for hit in found.results]
    assert len(found.results) == 3
    assert all(0 <= hit.relevance <= 1 for hit in found.results)
    assert found.results[0].relevance > found.results[-1].relevance


def test_similar_applies_the_filters(embedded: VaultService) -> None:
    assert titles(embedded, ROLLBACK[0], Filter(category="office")) == [PLANTS[0], LUNCH[0]]
    embedded.create(Draft("Tagged builds", "Tags ship after checks.", supersedes=PIPELINE[0]))
    write_file(embedded.root, "archive/old-rollback.md", "# Old rollback\nRedeploy it.\n")
    embedded.upkeep.fill()
    embedded.embed()
    assert "Old rollback" in titles(embedded, ROLLBACK[0], Filter(archived=None))
    assert PIPELINE[0] not in titles(embedded, ROLLBACK[0])
    assert "Old rollback" not in titles(embedded, ROLLBACK[0])


def test_without_vectors_similar_goes_by_words(vault: VaultService) -> None:
    vault.create(Draft(*ROLLBACK))
    vault.create(Draft("Release checklist", "Before a release to production, tag the build."))
    vault.create(Draft(*PLANTS))
    found = vault.similar(ROLLBACK[0])
    assert found.by == "words"
    assert [hit.title for hit in found.results] == ["Release checklist"]
    assert 0 < found.results[0].relevance <= 1
    with pytest.raises(NotFound):
        vault.similar("no such memory")


def test_a_reworded_gotcha_is_refused_naming_the_existing_one(embedded: VaultService) -> None:
    first = embedded.create(Draft(*GOTCHA, category="gotcha"))
    embedded.embed()
    with pytest.raises(Duplicate, match="allow_duplicate=true") as refused:
        embedded.create(Draft(*REWORDED, category="gotcha"))
    assert refused.value.existing_id == first.id
    assert first.id in str(refused.value)
    assert (
        embedded.create(
            Draft(*REWORDED, category="gotcha"), WriteOptions(allow_duplicate=True)
        ).title
        == REWORDED[0]
    )


def vault_locked(vault_dir: Path) -> bool:
    """Whether some process holds the vault lock (a flock on .memvault/lock) right now."""
    with open(vault_dir / ".memvault" / "lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(lock, fcntl.LOCK_UN)
        return False


def test_the_guard_runs_the_model_before_the_vault_lock_and_still_refuses(
    embedded: VaultService, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The duplicate guard embeds a new memory and looks for its twins among the vectors
    before the write takes the vault lock, so other writers never wait for either; the
    refusal itself comes under the lock."""
    first = embedded.create(Draft(*GOTCHA, category="gotcha"))
    embedded.embed()
    held: list[tuple[str, bool]] = []
    embed, within = Embedder.passages, VectorTable.within

    def embedding(self: Embedder, texts: Sequence[str]) -> np.ndarray:
        held.append(("model", vault_locked(vault_dir)))
        return embed(self, texts)

    def looking(self: VectorTable, *args: Any) -> list[Near]:
        held.append(("lookup", vault_locked(vault_dir)))
        return within(self, *args)

    monkeypatch.setattr(Embedder, "passages", embedding)
    monkeypatch.setattr(VectorTable, "within", looking)
    with pytest.raises(Duplicate) as refused:
        embedded.write(Draft(*REWORDED, category="gotcha"))
    assert refused.value.existing_id == first.id
    with pytest.raises(Duplicate):
        embedded.create(Draft(*REWORDED, category="gotcha"))
    assert held == [("model", False), ("lookup", False)] * 2


def test_the_guard_compares_texts_while_the_model_runs_and_keeps_its_order(
    embedded: VaultService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A short write waits for the slower of the guard's two looks, not for both one after
    the other: the model runs in a thread while the texts are compared (the model here waits
    until the comparison has begun). The refusals keep their order: the title, then the
    near-identical text, then the reworded twin."""
    compared = threading.Event()
    embed, all_words = Embedder.passages, Names.with_all_words

    def embedding(self: Embedder, texts: Sequence[str]) -> np.ndarray:
        assert compared.wait(patience(10)), "the texts were compared only after the model ran"
        return embed(self, texts)

    def comparing(self: Names, *args: Any) -> list[str]:
        compared.set()
        return all_words(self, *args)

    monkeypatch.setattr(Embedder, "passages", embedding)
    monkeypatch.setattr(Names, "with_all_words", comparing)
    gotcha = embedded.create(Draft(*GOTCHA, category="gotcha"))
    embedded.embed()
    with pytest.raises(Duplicate, match="in other words") as reworded:
        embedded.create(Draft(*REWORDED, category="gotcha"))
    with pytest.raises(Duplicate, match="near-identical") as identical:
        embedded.create(Draft("Jest in CI", GOTCHA[1]))
    with pytest.raises(Duplicate, match="a memory titled") as titled:
        embedded.create(Draft(GOTCHA[0], GOTCHA[1]))
    assert gotcha.id == reworded.value.existing_id == identical.value.existing_id
    assert gotcha.id == titled.value.existing_id


def test_the_guard_s_vector_of_a_short_memory_is_its_own_once_written(
    embedded: VaultService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard embeds a short memory's first chunk on the write's path; the pass that
    embeds the written memory takes that vector, with no second run of the model, and the
    memory is then found by meaning."""
    texts: list[str] = []
    embed = Embedder.passages

    def embedding(self: Embedder, given: Sequence[str]) -> np.ndarray:
        texts.extend(given)
        return embed(self, given)

    monkeypatch.setattr(Embedder, "passages", embedding)
    written = embedded.create(Draft(*GOTCHA, category="gotcha"))
    assert len(texts) == 1
    assert embedded.embed() == 1
    assert len(texts) == 1
    found = embedded.search("the test run hangs on the build machines", mode="semantic")
    assert found.results[0].id == written.id


def test_a_reworded_memory_that_supersedes_the_old_one_is_kept(embedded: VaultService) -> None:
    first = embedded.create(Draft(*GOTCHA, category="gotcha"))
    embedded.embed()
    assert (
        embedded.create(Draft(*REWORDED, category="gotcha", supersedes=first.id)).title
        == REWORDED[0]
    )


def test_a_merely_related_memory_or_another_scope_is_kept(embedded: VaultService) -> None:
    embedded.create(Draft(*GOTCHA, category="gotcha"))
    embedded.embed()
    assert embedded.create(Draft(*RELATED, category="gotcha")).title == RELATED[0]
    assert embedded.create(Draft(*REWORDED, scope="other-project")).title == REWORDED[0]


def test_a_short_memory_saying_what_one_paragraph_of_a_long_note_says_is_kept(
    embedded: VaultService,
) -> None:
    """The guard compares like with like, first chunk with first chunk: a runbook holding
    the gotcha as one of its paragraphs says more than the gotcha, which may stand alone; the
    same runbook opening with it is refused as its twin."""
    build = (
        "The build runs on every push. It installs the locked dependencies from the cache, "
        "compiles the TypeScript sources, lints them, and uploads the bundle as an artifact "
        "that the deploy job downloads later. A failed step stops the build and posts the log "
        "to the team's channel, with the commit and its author named. "
    )
    nightly = (
        "Nightly jobs rebuild the cache from scratch, rotate the signing keys of the staging "
        "servers, and prune the artifacts older than thirty days, so the storage bill stays "
        "flat. Their logs are kept for a week, and a failure pages whoever is on call. "
    )
    releases = (
        "Releases are tagged by hand after the changelog is reviewed. The tag triggers the "
        "production deploy, which waits for a second approval when it falls on a Friday or "
        "the day before a holiday, and rolls back by itself when the health checks fail. "
    )
    paragraphs = [
        build * 2,
        f"## Nightly\n\n{nightly * 2}",
        f"## Jest\n\n{GOTCHA[1]}",
        f"## Releases\n\n{releases * 2}",
    ]
    embedded.create(Draft("CI runbook", "\n\n".join(paragraphs), category="ops"))
    embedded.embed()
    assert embedded.create(Draft(*REWORDED, category="gotcha")).title == REWORDED[0]
    opening = embedded.create(
        Draft(GOTCHA[0], "\n\n".join([GOTCHA[1], *paragraphs[:2]]), scope="b")
    )
    embedded.embed()
    with pytest.raises(Duplicate, match="in other words") as refused:
        embedded.create(Draft(*REWORDED, category="gotcha", scope="b"))
    assert refused.value.existing_id == opening.id


def test_a_twin_in_this_scope_is_not_hidden_by_closer_ones_in_other_scopes(
    embedded: VaultService,
) -> None:
    """The guard weighs every note at SAME_MEANING or closer, not the nearest few: the same
    gotcha saved in six other scopes (more than the five it once looked at) is closer than its
    rewording in this scope, and the rewording is still found."""
    first = embedded.create(Draft(*REWORDED, category="gotcha"))
    for n in range(6):
        embedded.create(Draft(*GOTCHA, category="gotcha", scope=f"project-{n}"))
    embedded.embed()
    with pytest.raises(Duplicate, match="in other words") as refused:
        embedded.create(Draft(*GOTCHA, category="gotcha"))
    assert refused.value.existing_id == first.id


def test_a_copy_in_this_scope_is_not_hidden_by_copies_in_other_scopes(vault: VaultService) -> None:
    """The comparison of texts looks for candidates in the new memory's scope only: copies in
    other scopes, more than it reads, do not hide the one in this scope."""
    text = " ".join(f"Step {n}: rotate the staging credentials before the audit." for n in range(9))
    for n in range(DUPLICATE_CANDIDATES + 1):
        vault.create(Draft(f"Audit steps {n}", text, scope=f"team-{n}"))
    first = vault.create(Draft("Audit steps", text, scope="ops"))
    with pytest.raises(Duplicate, match="near-identical") as refused:
        vault.create(Draft("Before the audit", text, scope="ops"))
    assert refused.value.existing_id == first.id


def test_only_a_short_memory_is_compared_by_meaning(embedded: VaultService) -> None:
    """A long text costs a full chunk's embedding on the write's path; the guard weighs short
    memories by meaning (SHORT_WORDS), where a rewording slips past the text comparison."""
    embedded.create(Draft(*GOTCHA, category="gotcha"))
    embedded.embed()
    long_text = REWORDED[1] + " " + " ".join(["Checked again on the staging cluster today."] * 10)
    assert embedded.create(Draft(REWORDED[0], long_text, category="gotcha")).title == REWORDED[0]


def test_without_a_model_the_guard_is_as_before(vault: VaultService) -> None:
    vault.create(Draft(*GOTCHA))
    assert vault.create(Draft(*REWORDED)).title == REWORDED[0]


def test_the_cli_lists_similar_memories(embedded: VaultService, vault_dir: Path) -> None:
    env: dict[str, str | None] = {"MEMVAULT_EMBED_MODEL": None}
    args = ["--vault", str(vault_dir), "similar", ROLLBACK[0]]
    result = CliRunner().invoke(main, [*args, "--limit", "1", "--json"], env=env)
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["by"] == "meaning"
    assert [hit["title"] for hit in answer["results"]] == [PIPELINE[0]]
    text = CliRunner().invoke(main, args, env={"MEMVAULT_EMBED_MODEL": "off"})
    assert text.exit_code == 0, text.output
    assert "by their words" in text.stderr
    missing = CliRunner().invoke(main, ["--vault", str(vault_dir), "similar", "nothing here"])
    assert missing.exit_code != 0 and missing.output.count("\n") == 1


@pytest.mark.processes
def test_similar_mem_through_an_mcp_client(
    embedded: VaultService, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMVAULT_EMBED_MODEL", raising=False)
    embedded.close()

    async def scenario() -> None:
        async with stdio_session(vault_dir) as session:
            result = await session.call_tool("similar_mem", {"id": ROLLBACK[0], "limit": 2})
            answer = structured(result)
            assert answer["by"] == "meaning"
            assert answer["results"][0]["title"] == PIPELINE[0]
            assert len(answer["results"]) == 2
            assert "in meaning" in text_of(result)
            office = structured(
                await session.call_tool("similar_mem", {"id": ROLLBACK[0], "category": "office"})
            )
            assert {hit["title"] for hit in office["results"]} == {PLANTS[0], LUNCH[0]}
            scoped = structured(
                await session.call_tool("similar_mem", {"id": ROLLBACK[0], "scope": "elsewhere"})
            )
            assert len(scoped["results"]) == 3  # global memories count in any scope
            error = await tool_error(session, "similar_mem", {"id": "no such memory"})
            assert "no memory" in error and "\n" not in error

    asyncio.run(scenario())
