"""Semantic and hybrid search with the default model (all-MiniLM-L6-v2, from memvault[semantic]):
a memory is found in other words than its own, filters hold, vectors follow content and model,
and without a model search says why and stays full-text."""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing
import shutil
import sqlite3
import time
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from filelock import FileLock

from memvault.cli import main
from memvault.config import Settings
from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.core.records import Filter, SearchMode
from memvault.index.database import Index
from memvault.presentation.lines import search_heading, stats_text
from memvault.semantic import embedding_worker
from memvault.semantic import prune as stale_vectors
from memvault.semantic.model import Embedder, Unavailable, find_model
from memvault.semantic.vector_store import VectorStore
from memvault.service.vault import VaultService

from .mcp_helpers import stdio_session, structured, text_of
from .test_sync import eventually

ROLLBACK = (
    "Rolling back a deployment",
    "When a release breaks production, redeploy the previous build from the CI pipeline.",
)
# Shares no word with ROLLBACK, stemmed or not: only its meaning finds it.
PARAPHRASE = "the site stopped working after we shipped; how to return to the older version"


@pytest.fixture
def notes(vault_dir: Path) -> Iterator[VaultService]:
    service = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    service.create(Draft(*ROLLBACK, category="ops"))
    service.create(Draft("Office plants", "Water the ficus every Monday; the cactus once a month."))
    service.create(Draft("Team lunch", "Thursday lunch is at the Thai place near the station."))
    service.create(
        Draft("Retry policy", "Failed card payments are retried three times.", category="ops")
    )
    yield service
    service.close()


def titles(
    vault: VaultService, query: str, mode: SearchMode | None = None, where: Filter | None = None
) -> list[str]:
    return [hit.title for hit in vault.search(query, 10, 0, where, mode).results]


def test_meaning_finds_a_memory_its_words_miss(notes: VaultService) -> None:
    assert titles(notes, PARAPHRASE, mode="keyword") == []
    assert notes.search("cactus").mode == "keyword"  # the default, before any vector
    assert notes.stats().semantic == notes.semantic_status()
    assert (notes.semantic_status().embedded, notes.semantic_status().pending) == (0, 4)
    assert notes.embed() == 4
    assert "semantic search: 4 of 4 notes embedded (" in stats_text(notes.stats())
    assert titles(notes, PARAPHRASE, mode="semantic")[0] == ROLLBACK[0]
    assert titles(notes, PARAPHRASE)[0] == ROLLBACK[0]  # hybrid, once vectors exist
    assert notes.search(PARAPHRASE).mode == "hybrid"
    hit = notes.search(PARAPHRASE, 1, mode="hybrid").results[0]
    assert "previous build" in hit.snippet


def test_a_meaning_hit_shows_its_chunk_as_written_past_a_section_and_beside_cjk(
    vault_dir: Path,
) -> None:
    """A hit found by meaning alone shows its chunk, read from the index's sections: past
    the first section of a long note (offsets carried over), and in a note holding CJK, which
    the index keeps with gaps between its characters (read from the file instead)."""
    service = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    filler = "Plain filler about nothing in particular at all. " * 900
    service.create(Draft("Long note", f"{filler}\n\nThe ficus wants water every Monday."))
    service.create(
        Draft("会议记录", "周一的会议在三楼举行。\n\nThe cactus wants water once a month.")
    )
    service.embed()
    hits = {
        hit.title: hit.snippet
        for hit in service.search("the ficus wants water on Mondays", 2, mode="semantic").results
    }
    assert "The ficus wants water every Monday." in hits["Long note"]
    assert "The cactus wants water once a month." in hits["会议记录"]
    assert "周一的会议在三楼举行。" in hits["会议记录"]
    service.close()


def test_words_still_win_where_they_match(notes: VaultService) -> None:
    notes.embed()
    assert titles(notes, "retried card payments")[0] == "Retry policy"
    first = notes.search("retried card payments", 1, mode="hybrid").results[0]
    assert first.snippet == "Failed **card payments** are **retried** three times."
    assert titles(notes, '"Thai place"', mode="keyword") == ["Team lunch"]


def test_a_note_holding_one_word_of_a_reworded_question_does_not_outrank_its_answer(
    notes: VaultService,
) -> None:
    """Full-text finds only a note that shares one of the question's seven words; meaning
    finds the answer. Full-text weighs as the share of the question its first hit holds."""
    notes.create(Draft("Standup", "Sam is working from home on Friday."))
    notes.embed()
    assert titles(notes, PARAPHRASE, mode="keyword") == ["Standup"]
    assert titles(notes, PARAPHRASE)[0] == ROLLBACK[0]


def test_a_rare_word_finds_its_note_first_even_before_it_is_embedded(
    notes: VaultService,
) -> None:
    notes.embed()
    notes.create(Draft("Word list", "The last word in the dictionary is zyzzyva."))
    assert titles(notes, "zyzzyva")[0] == "Word list"


def test_a_note_deleted_by_hand_before_a_sync_does_not_break_a_search(
    notes: VaultService, vault_dir: Path
) -> None:
    notes.embed()
    (vault_dir / "ops" / "rolling-back-a-deployment.md").unlink()
    assert ROLLBACK[0] in titles(notes, PARAPHRASE, mode="semantic")


def test_a_note_matched_by_a_tag_alone_before_it_is_embedded(notes: VaultService) -> None:
    notes.embed()
    notes.create(Draft("Zoo", "", tags=["zebra"]))
    assert titles(notes, "zebra")[0] == "Zoo"


def test_filters_apply_to_the_semantic_side(notes: VaultService) -> None:
    notes.embed()
    assert ROLLBACK[0] not in titles(notes, PARAPHRASE, where=Filter(category="food"))
    assert (
        titles(notes, PARAPHRASE, mode="semantic", where=Filter(category="ops"))[0] == ROLLBACK[0]
    )
    assert set(titles(notes, PARAPHRASE, mode="semantic", where=Filter(category="ops"))) == {
        ROLLBACK[0],
        "Retry policy",
    }


def test_the_semantic_side_covers_exactly_the_notes_a_filter_lists(notes: VaultService) -> None:
    """The semantic side finds a filter's notes by its facet terms in the full-text index,
    where a listing reads the notes table: the same notes either way, for every kind of
    filter (and the default one, which leaves out archived, superseded and expired notes):
    of those, the notes that match the question by meaning (above the model's floor)."""
    notes.create(Draft("Db failover", "Promote the replica.", tags=["ops/db"], scope="shop"))
    notes.create(
        Draft(
            "Db backups",
            "Nightly dumps to the bucket.",
            tags=["ops"],
            properties={"status": "done"},
        )
    )
    old = notes.create(Draft("Old runbook", "Restart everything by hand.", category="ops"))
    notes.create(
        Draft("New runbook", "Restart the one failing service.", category="ops", supersedes=old.id)
    )
    notes.create(
        Draft("Gone soon", "A memory past its expiry date.", expires_at="2001-01-01T00:00:00Z")
    )
    notes.archive("Office plants")
    notes.embed()
    every = Filter(archived=None, include_superseded=True)
    matching = set(titles(notes, PARAPHRASE, mode="semantic", where=every))
    assert ROLLBACK[0] in matching
    for where in (
        Filter(),
        Filter(category="ops"),
        Filter(category=("ops", "office")),
        Filter(tags=("ops",)),
        Filter(tags=("ops/db",)),
        Filter(scope="shop"),
        Filter(scope="shop", only_scope=True),
        Filter(archived=True),
        Filter(archived=None),
        Filter(where=(("status", "done"),)),
        Filter(category="ops", include_superseded=True),
        Filter(since="1d"),
    ):
        listed = {row.title for row in notes.list_memories(where, limit=100)[0]}
        found = set(titles(notes, PARAPHRASE, mode="semantic", where=where))
        assert found == listed & matching, where


def test_an_edit_is_embedded_again_and_a_delete_leaves_no_vector(notes: VaultService) -> None:
    notes.embed()
    notes.update(
        "Office plants",
        Revision(edit=BodyEdit(content="Our cat Miso sleeps on the radiator all winter.")),
    )
    assert notes.embed() == 1
    assert titles(notes, "where does the kitten nap", mode="semantic")[0] == "Office plants"
    notes.delete("Office plants")
    assert notes.embed() == 0
    assert "Office plants" not in titles(notes, "where does the kitten nap", mode="semantic")


def stored(vault_dir: Path) -> tuple[int, int]:
    """How many vectors and chunk maps the vault's index holds."""
    with sqlite3.connect(vault_dir / ".memvault" / "index.sqlite3") as db:
        return (
            db.execute("SELECT count(*) FROM embeddings").fetchone()[0],
            db.execute("SELECT count(*) FROM chunk_maps").fetchone()[0],
        )


def test_a_reindex_drops_the_vectors_no_note_uses_and_keeps_the_rest(
    notes: VaultService, vault_dir: Path
) -> None:
    """An edit leaves its old content's chunk map and vector behind, and a delete its own: a
    reindex drops them, and no note has to be embedded again. A vector another note still
    names stays."""
    notes.embed()
    notes.update(
        "Office plants", Revision(edit=BodyEdit(content="Our cat Miso sleeps on the radiator."))
    )
    notes.create(
        Draft(*ROLLBACK, scope="twin"), WriteOptions(allow_duplicate=True)
    )  # the same chunk, its vector
    notes.delete("Team lunch")
    assert notes.embed() == 2
    assert stored(vault_dir) == (5, 6)
    done = CliRunner().invoke(main, ["--vault", str(vault_dir), "reindex"])
    assert done.exit_code == 0
    assert "dropped 2 vectors no note uses any more" in done.output
    assert stored(vault_dir) == (3, 4)
    assert notes.embed() == 0
    assert titles(notes, "where does the kitten nap", mode="semantic")[0] == "Office plants"
    assert notes.upkeep.rebuild().dropped_vectors == 0


def test_a_text_several_new_notes_hold_is_embedded_once(
    notes: VaultService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text several new notes hold is run through the model once, and the notes share its
    vector."""
    notes.embed()
    for scope in ("first", "second", "third"):
        notes.create(Draft("Deploy freeze", "No deploys on Fridays after noon.", scope=scope))
    asked: list[str] = []
    real = Embedder.passages

    def passages(embedder: Embedder, texts: list[str]) -> Any:
        asked.extend(texts)
        return real(embedder, texts)

    monkeypatch.setattr(Embedder, "passages", passages)
    assert notes.embed() == 3
    assert len(asked) == 1 and "No deploys on Fridays" in asked[0]
    found = notes.search("are we allowed to ship at the end of the week", 10, mode="semantic")
    assert {hit.scope for hit in found.results[:3]} == {"first", "second", "third"}
    assert len({hit.relevance for hit in found.results[:3]}) == 1


def test_a_prune_between_reindexes_drops_what_edits_left_without_reading_every_vector(
    notes: VaultService, vault_dir: Path
) -> None:
    """What a server does once an hour: the maps of content no note has, and the vectors only
    they named. A vector no map names (another version's leftover) waits for a reindex."""
    notes.embed()
    notes.update(
        "Office plants", Revision(edit=BodyEdit(content="Our cat Miso sleeps on the radiator."))
    )
    notes.embed()
    with sqlite3.connect(vault_dir / ".memvault" / "index.sqlite3") as db:
        db.execute("INSERT INTO embeddings VALUES ('old-model', x'00', x'0000')")
    assert stored(vault_dir) == (6, 5)
    index = Index(vault_dir / ".memvault" / "index.sqlite3")
    try:
        assert stale_vectors.prune(index, thorough=False) == 1
        assert stored(vault_dir) == (5, 4)
        assert stale_vectors.prune(index, thorough=True) == 1
    finally:
        index.close()
    assert stored(vault_dir) == (4, 4)
    assert notes.semantic_status().pending == 0


@pytest.mark.parametrize("older", ["another recipe", "another release's weights"])
def test_a_prune_drops_what_an_older_copy_of_the_default_model_made(
    notes: VaultService, vault_dir: Path, older: str
) -> None:
    """An upgrade that makes the default model's int8 copy by a new recipe, or from a new
    release of its package, embeds the vault again; the older copy's vectors and maps, which no
    search reads any more, go at the next prune, though the new maps name the same texts. A
    person's own models' stay, one in a folder named as the default model's too."""
    notes.embed()
    current = find_model(None).key
    name, _, copy = current.partition("/")
    fingerprint, _, recipe = copy.partition("-")
    old = {
        "another recipe": f"{name}/{fingerprint}-int8-older",
        "another release's weights": f"{name}/{'0' * len(fingerprint)}-{recipe}",
    }[older]
    own = f"{name}/{'0' * len(fingerprint)}"
    with sqlite3.connect(vault_dir / ".memvault" / "index.sqlite3") as db:
        for model in (old, own, "my-model/0123abcd"):
            db.execute(
                "INSERT INTO embeddings SELECT ?, hash, vector FROM embeddings WHERE model = ?",
                (model, current),
            )
            db.execute(
                "INSERT INTO chunk_maps SELECT ? || substr(chunker, ?), note_hash, seq,"
                " chunk_hash, start, end FROM chunk_maps WHERE chunker LIKE ? || '/%'",
                (model, len(current) + 1, current),
            )
    assert stored(vault_dir) == (16, 16)
    index = Index(vault_dir / ".memvault" / "index.sqlite3")
    try:
        assert stale_vectors.prune(index, thorough=False) == 4
    finally:
        index.close()
    assert stored(vault_dir) == (12, 12)
    with sqlite3.connect(vault_dir / ".memvault" / "index.sqlite3") as db:
        kept = {row[0] for row in db.execute("SELECT DISTINCT model FROM embeddings")}
    assert kept == {current, own, "my-model/0123abcd"}
    assert notes.semantic_status().pending == 0


def test_a_vector_a_prune_drops_while_a_twin_is_embedded_is_saved_again(
    notes: VaultService, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A twin's chunk finds the first note's vector; the first note is deleted and a prune
    drops that vector before the twin's chunk map is saved: the save writes it again, so the
    twin is not left with a map and no vector (counted as embedded, never found)."""
    notes.embed()
    first = notes.get(ROLLBACK[0])
    notes.create(Draft(*ROLLBACK, scope="twin"), WriteOptions(allow_duplicate=True))
    real = VectorStore.save

    def racing(store: VectorStore, *args: Any) -> None:
        notes.delete(first.id)
        assert notes.upkeep.rebuild().dropped_vectors == 1
        real(store, *args)

    monkeypatch.setattr(VectorStore, "save", racing)
    assert notes.embed() == 1
    monkeypatch.setattr(VectorStore, "save", real)
    assert stored(vault_dir) == (4, 4)
    again = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    try:
        assert titles(again, PARAPHRASE, mode="semantic")[0] == ROLLBACK[0]
        assert again.semantic_status().pending == 0
    finally:
        again.close()


def test_vectors_follow_content_through_a_reindex_and_a_copied_vault(
    notes: VaultService, vault_dir: Path, tmp_path: Path
) -> None:
    notes.embed()
    notes.upkeep.rebuild()
    assert notes.semantic_status().pending == 0
    copy = tmp_path / "copy"
    shutil.copytree(vault_dir, copy)
    copied = VaultService.open(Settings(vault=copy, embed_model=None))
    try:
        assert copied.semantic_status().pending == 0
        assert titles(copied, PARAPHRASE)[0] == ROLLBACK[0]
    finally:
        copied.close()


def test_an_index_from_before_chunks_counted_word_pieces_cuts_its_notes_again(
    notes: VaultService, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its chunk maps name no chunker and go: every note is cut again, and a chunk whose text
    is unchanged (every short note's) finds its vector without a run of the model."""
    notes.embed()
    notes.close()
    with sqlite3.connect(vault_dir / ".memvault" / "index.sqlite3") as db:
        db.executescript(
            """ALTER TABLE chunk_maps RENAME TO new_maps;
            CREATE TABLE chunk_maps (note_hash TEXT NOT NULL, seq INTEGER NOT NULL,
                chunk_hash BLOB NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,
                PRIMARY KEY (note_hash, seq)) WITHOUT ROWID;
            INSERT INTO chunk_maps SELECT note_hash, seq, chunk_hash, start, end FROM new_maps;
            DROP TABLE new_maps;
            DELETE FROM migrations WHERE number > 3;"""
        )

    real = Embedder.passages

    def passages(embedder: Embedder, texts: list[str]) -> Any:
        assert not texts, f"embedded again: {texts}"
        return real(embedder, texts)

    monkeypatch.setattr(Embedder, "passages", passages)
    again = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    try:
        assert again.semantic_status().pending == 4
        assert again.embed() == 4
        assert titles(again, PARAPHRASE, mode="semantic")[0] == ROLLBACK[0]
    finally:
        again.close()


@pytest.mark.parametrize(
    ("damage", "warning"),
    [
        # An index from before the prune's two indexes were added: nothing is gone, they are
        # new. Re-running every migration here once emptied the chunk maps, and the reindex
        # that followed dropped every vector.
        (
            "DROP INDEX embeddings_hash; DROP INDEX chunk_maps_chunk;"
            " DELETE FROM migrations WHERE number > 5;",
            None,
        ),
        # The migrations run again from the first, but not the one that emptied the chunk
        # maps when an upgrade cut every note again.
        ("DROP TABLE usage;", "the index lacks usage (kept state); making it again"),
        (
            "DROP INDEX chunk_maps_chunk;",
            "the index lacks chunk_maps_chunk (kept state); making it again",
        ),
        # With no record of the migrations, those whose tables and indexes are all here count
        # as done: running every one again emptied the chunk maps too.
        (
            "DROP TABLE migrations;",
            "the index lacks its record of migrations; 9 found done by what it holds",
        ),
        (
            "DROP TABLE migrations; DROP INDEX chunk_maps_chunk;",
            "the index lacks its record of migrations; 6 found done by what it holds",
        ),
    ],
)
def test_a_kept_object_new_or_dropped_by_hand_is_made_without_losing_a_vector(
    notes: VaultService,
    vault_dir: Path,
    caplog: pytest.LogCaptureFixture,
    damage: str,
    warning: str | None,
) -> None:
    notes.embed()
    notes.close()
    with sqlite3.connect(vault_dir / ".memvault" / "index.sqlite3") as db:
        db.executescript(damage)
    with caplog.at_level(logging.WARNING, logger="memvault"):
        again = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    try:
        assert [r.message for r in caplog.records] == ([warning] if warning else [])
        assert again.semantic_status().pending == 0
        assert again.upkeep.rebuild().dropped_vectors == 0
        assert stored(vault_dir) == (4, 4)
        with sqlite3.connect(vault_dir / ".memvault" / "index.sqlite3") as db:
            made = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        assert {"embeddings_hash", "chunk_maps_chunk"} <= made
    finally:
        again.close()


def traced_vault(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[VaultService, list[str]]:
    """Another service on the vault, and the SQL statements its connections run (any new
    connection's, from now on)."""
    statements: list[str] = []
    real = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        db = real(*args, **kwargs)
        db.set_trace_callback(statements.append)
        return db

    monkeypatch.setattr(sqlite3, "connect", traced)
    return VaultService.open(Settings(vault=vault_dir, embed_model=None)), statements


def test_a_reopened_vault_loads_its_vectors_in_one_read_and_ranks_as_before(
    notes: VaultService, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vectors a process built note by note, and the same vectors read back at once from
    the index by another (one statement, however many notes), rank alike."""
    notes.embed()
    notes.create(Draft("Deploy freeze", "No deploys on Fridays after noon.", category="ops"))
    notes.embed()

    def ranked(vault: VaultService) -> list[tuple[str, float]]:
        hits = vault.search(PARAPHRASE, 10, mode="semantic").results
        return [(hit.title, round(hit.relevance, 4)) for hit in hits]

    def alike(vault: VaultService) -> list[str]:
        return [hit.title for hit in vault.similar(ROLLBACK[0]).results]

    again, statements = traced_vault(vault_dir, monkeypatch)
    try:
        assert ranked(again) == ranked(notes)
        assert alike(again) == alike(notes)
        assert again.semantic_status().embedded == 5
    finally:
        again.close()
    reads = [sql for sql in statements if "e.vector" in sql]
    assert len(reads) == 1, reads


def test_embedding_from_the_shell_never_loads_every_vector(
    notes: VaultService, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`memvault embed` (and its count) read which notes have vectors, never the vectors
    themselves, nor their table: at 100k notes a join with it ran past the 10 s limit at the
    end of a first embedding."""
    notes.embed()
    again, statements = traced_vault(vault_dir, monkeypatch)
    try:
        freeze = "Deploy freeze", "No deploys on Fridays after noon."
        again.create(
            Draft(*freeze, category="ops"), WriteOptions(allow_duplicate=True)
        )  # no guard: no lookup
        assert again.embed() == 1
        status = again.semantic_status()
        assert (status.embedded, status.pending) == (5, 0)
        assert not [sql for sql in statements if "e.vector" in sql]
        assert not [sql for sql in statements if "JOIN embeddings" in sql]
        assert titles(again, "may we ship code on friday afternoon", mode="semantic")[0] == (
            "Deploy freeze"
        )
    finally:
        again.close()


def test_reads_of_the_chunk_maps_go_note_by_note(
    notes: VaultService, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each read joining the notes with their chunk maps looks each note's chunks up by its
    key. SQLite once chose to walk the maps of the chunker and scan every note for each: at
    100k notes (570k chunks) the count at a server's start ran for minutes."""
    notes.embed()
    again, statements = traced_vault(vault_dir, monkeypatch)
    try:
        again.semantic_status()
        assert again.embed() == 0
        again.search(PARAPHRASE, mode="semantic")
    finally:
        again.close()
    joins = [sql for sql in statements if "chunk_maps c" in sql and "notes n" in sql]
    assert len(joins) >= 3, joins
    with sqlite3.connect(vault_dir / ".memvault" / "index.sqlite3") as db:
        for sql in joins:
            plan = [row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}")]
            assert plan[0] == "SCAN n" and plan[1].startswith("SEARCH c USING PRIMARY KEY"), plan


def test_a_server_asked_for_meaning_waits_for_its_vectors_to_load(notes: VaultService) -> None:
    """A server loads the vectors in the background (full-text answers meanwhile); a search
    that asks for meaning waits for them rather than answering without."""
    notes.embed()
    notes.serve_semantic()
    assert titles(notes, PARAPHRASE, mode="semantic")[0] == ROLLBACK[0]
    assert titles(notes, PARAPHRASE)[0] == ROLLBACK[0]  # hybrid once loaded


def test_another_model_embeds_again(notes: VaultService, vault_dir: Path, tmp_path: Path) -> None:
    notes.embed()
    spec = notes.semantic_status()
    assert spec.enabled and spec.model
    folder = tmp_path / "my-model"
    folder.mkdir()
    model = find_model(None)
    (folder / "model.onnx").symlink_to(model.onnx)
    (folder / "tokenizer.json").symlink_to(model.tokenizer)
    (folder / "memvault.json").write_text(json.dumps({"pooling": "cls"}))
    other = VaultService.open(Settings(vault=vault_dir, embed_model=str(folder)))
    try:
        status = other.semantic_status()
        assert status.model != spec.model and status.pending == 4
        assert titles(other, PARAPHRASE) == []  # keyword: no vectors of this model yet
        assert other.embed() == 4
        assert other.semantic_status().pending == 0
    finally:
        other.close()


@pytest.mark.processes
def test_a_server_whose_model_will_not_load_answers_by_words(
    vault_dir: Path, tmp_path: Path
) -> None:
    """Through a real MCP session: search and a short write work, and a search asked for
    meaning is a tool error that says why."""
    folder = model_gone_bad(vault_dir, tmp_path)

    async def scenario() -> None:
        async with stdio_session(vault_dir, None, "--embed-model", str(folder)) as session:
            found = await session.call_tool("search_mem", {"query": "production build"})
            assert not found.is_error and ROLLBACK[0] in text_of(found)
            assert structured(found)["mode"] == "keyword"
            # Why: the vectors still loading, or (once the server tried) the model's reason.
            assert text_of(found).startswith("1 memory matches 'production build' (by words only:")
            meaning = await session.call_tool(
                "search_mem", {"query": PARAPHRASE, "mode": "semantic"}
            )
            assert meaning.is_error and "will not load or run" in text_of(meaning)
            kept = await session.call_tool(
                "write_mem", {"title": "Ficus", "content": "Water the ficus on Mondays."}
            )
            assert not kept.is_error, text_of(kept)
            alike = await session.call_tool("similar_mem", {"id": ROLLBACK[0]})
            assert "by their words (not embedded, or no model)" in text_of(alike)

    asyncio.run(scenario())


def test_a_folder_model_read_another_way_embeds_again_and_a_bad_option_says_why(
    notes: VaultService, vault_dir: Path, tmp_path: Path
) -> None:
    """Pooling, a passage prefix or a shorter length changes every note's vectors, so each
    embeds the vault again; a query prefix changes none. A setting of the wrong kind turns
    semantic search off with the reason (max_tokens "512" failed with int()'s error, and a
    JSON list was taken for no settings)."""
    folder = tmp_path / "my-model"
    folder.mkdir()
    model = find_model(None)
    (folder / "model.onnx").symlink_to(model.onnx)
    (folder / "tokenizer.json").symlink_to(model.tokenizer)

    def pending(options: object) -> int:
        (folder / "memvault.json").write_text(json.dumps(options))
        vault = VaultService.open(Settings(vault=vault_dir, embed_model=str(folder)))
        try:
            status = vault.semantic_status()
            assert status.enabled, status.reason
            pending = status.pending
            vault.embed()
            return pending
        finally:
            vault.close()

    assert pending({}) == 4
    assert pending({"query_prefix": "query: ", "max_tokens": 512}) == 0
    assert pending({"pooling": "cls"}) == 4
    assert pending({"passage_prefix": "passage: "}) == 4
    assert pending({"max_tokens": 64}) == 4
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64}))
    assert pending({}) == 0  # the same length, as sentence-transformers states it
    (folder / "sentence_bert_config.json").unlink()
    assert pending({}) == 0  # the first vectors are still there
    for options, said in [
        ({"max_tokens": "512"}, "max_tokens must be a whole number from 32 to 8192, not '512'"),
        ({"max_tokens": 8}, "max_tokens must be a whole number from 32 to 8192, not 8"),
        ({"max_tokens": True}, "max_tokens must be a whole number from 32 to 8192, not True"),
        ({"query_prefix": None}, "query_prefix must be text, not None"),
        (["cls"], f"{folder / 'memvault.json'} holds no JSON object"),
    ]:
        (folder / "memvault.json").write_text(json.dumps(options))
        vault = VaultService.open(Settings(vault=vault_dir, embed_model=str(folder)))
        try:
            assert vault.semantic_status().reason == f"semantic search is off: {said}"
            assert titles(vault, "production build") == [ROLLBACK[0]]
        finally:
            vault.close()


def test_embedding_cut_short_resumes_where_it_stopped(vault_dir: Path) -> None:
    vault = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    for n in range(80):
        vault.create(Draft(f"Note {n}", f"Fact number {n}: the {n}th planet has {n} moons."))

    def crash(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        vault.embed(crash)
    vault.close()
    again = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    try:
        status = again.semantic_status()
        assert 0 < status.embedded < 80 and status.embedded + status.pending == 80
        assert again.embed() == status.pending
    finally:
        again.close()


def test_without_a_model_search_is_full_text_and_says_why(vault_dir: Path) -> None:
    vault = VaultService.open(Settings(vault=vault_dir, embed_model="off"))
    try:
        vault.create(Draft(*ROLLBACK))
        status = vault.semantic_status()
        assert not status.enabled and "off" in status.reason
        assert [h.title for h in vault.search("production build").results] == [ROLLBACK[0]]
        with pytest.raises(Unavailable, match="off"):
            vault.search(PARAPHRASE, mode="semantic")
    finally:
        vault.close()
    nowhere = VaultService.open(Settings(vault=vault_dir, embed_model=str(vault_dir / "none")))
    try:
        assert "holds no model.onnx" in nowhere.semantic_status().reason
    finally:
        nowhere.close()


def model_gone_bad(vault_dir: Path, tmp_path: Path) -> Path:
    """A model folder whose tokenizer was spoilt after it embedded the vault's two notes."""
    folder = tmp_path / "my-model"
    folder.mkdir()
    model = find_model(None)
    (folder / "model.onnx").symlink_to(model.onnx)
    shutil.copy(model.tokenizer, folder / "tokenizer.json")
    made = VaultService.open(Settings(vault=vault_dir, embed_model=str(folder)))
    made.create(Draft(*ROLLBACK))
    made.create(Draft("Office plants", "Water the ficus every Monday; the cactus once a month."))
    made.embed()
    made.close()
    (folder / "tokenizer.json").write_text("{ no longer a tokenizer")
    return folder


def test_a_model_that_will_not_load_turns_semantic_search_off_and_says_why(
    vault_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A model folder whose files went bad after its vectors were made: a search is full-text,
    a short write is compared by its text alone and kept, related memories come by their
    words, and the status and a server's log say why; asked for meaning, a clear error. Each
    of these failed with the model's own error before."""
    folder = model_gone_bad(vault_dir, tmp_path)
    settings = Settings(vault=vault_dir, embed_model=str(folder))
    for serving in (False, True):
        vault = VaultService.open(settings)
        try:
            if serving:
                with caplog.at_level(logging.WARNING, logger="memvault"):
                    vault.serve_semantic()
                    eventually(lambda: bool(caplog.records))
            assert titles(vault, "production build") == [ROLLBACK[0]]
            with pytest.raises(Unavailable, match="will not load or run"):
                vault.search(PARAPHRASE, mode="semantic")
            day = "Tuesdays" if serving else "Mondays"
            kept = vault.create(Draft(f"Ficus on {day}", f"Water the ficus on {day}."))
            assert vault.get(kept.id).title == f"Ficus on {day}"
            assert vault.similar(ROLLBACK[0]).by == "words"
            status = vault.semantic_status()
            assert not status.enabled and "will not load or run" in status.reason
            with pytest.raises(Unavailable, match="will not load or run"):
                vault.embed()
        finally:
            vault.close()
    [warning] = [r.getMessage() for r in caplog.records]
    assert warning.startswith(f"semantic search is off: the model {folder / 'model.onnx'} will")


def test_the_cli_searches_by_meaning(notes: VaultService, vault_dir: Path) -> None:
    notes.embed()
    env: dict[str, str | None] = {"MEMVAULT_EMBED_MODEL": None}
    result = CliRunner().invoke(
        main,
        ["--vault", str(vault_dir), "search", PARAPHRASE, "--mode", "semantic", "--json"],
        env=env,
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["results"][0]["title"] == ROLLBACK[0]


@pytest.mark.processes
def test_a_server_embeds_a_new_memory_in_the_background(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMVAULT_EMBED_MODEL", raising=False)

    async def scenario() -> None:
        async with stdio_session(vault_dir) as session:
            await session.call_tool("write_mem", {"title": ROLLBACK[0], "content": ROLLBACK[1]})

            async def found() -> bool:
                result = await session.call_tool(
                    "search_mem", {"query": PARAPHRASE, "mode": "semantic", "limit": 1}
                )
                return ROLLBACK[0] in text_of(result)

            for _ in range(300):
                if await found():
                    break
                await asyncio.sleep(0.1)
            else:
                pytest.fail("not found by meaning within 30 s")
            figures = structured(await session.call_tool("get_stats", {}))["semantic"]
            assert figures["enabled"] and (figures["embedded"], figures["pending"]) == (1, 0)
            both = await session.call_tool("search_mem", {"query": PARAPHRASE})
            assert structured(both)["mode"] == "hybrid"
            assert text_of(both).startswith(
                f"1 memory matches {PARAPHRASE!r}, by words and meaning."
            )

    asyncio.run(scenario())


def test_a_server_s_pass_after_a_write_reads_the_notes_that_changed_not_every_note(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write wakes the server's embedding pass, which reads the content hashes of the notes
    this process changed, not every note's (140 ms at 100k notes, after each write); a note
    another process wrote meanwhile waits for a pass over every note (FULL_PASS_SECONDS after
    the last, or `embed`)."""
    read: list[Collection[int] | None] = []
    every = VectorStore.notes

    def reading(self: VectorStore, only: Collection[int] | None = None) -> dict[int, str]:
        read.append(only)
        return every(self, only)

    def first(query: str) -> str:
        return (titles(vault, query, mode="semantic") or [""])[0]

    monkeypatch.setattr(VectorStore, "notes", reading)
    # No full pass falls due during the test, however slow the machine.
    monkeypatch.setattr(embedding_worker, "FULL_PASS_SECONDS", 3600.0)
    vault = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    other = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    try:
        vault.create(Draft(*ROLLBACK))
        vault.serve_semantic()
        eventually(lambda: first(PARAPHRASE) == ROLLBACK[0], 60)
        assert read[0] is None
        other.create(Draft("Team lunch", "Thursday lunch is at the Thai place near the station."))
        vault.create(
            Draft("Office plants", "Water the ficus every Monday; the cactus once a month.")
        )
        eventually(lambda: first("which plant needs water each week") == "Office plants", 60)
        assert len(read) > 1 and all(only is not None and len(only) <= 2 for only in read[1:])
        assert first("where do we eat on Thursdays") != "Team lunch"
        assert vault.embed() == 1
        assert read[-1] is None
        assert first("where do we eat on Thursdays") == "Team lunch"
    finally:
        other.close()
        vault.close()


def test_one_process_of_a_vault_embeds_at_a_time(vault_dir: Path) -> None:
    """While another memvault process has the vault's turn to embed (the test holds it, as
    that process would), a server leaves the embedding to it; given the turn, it catches up."""
    vault = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    other = FileLock(str(vault_dir / ".memvault" / "embedding.lock"))
    try:
        with other:
            vault.serve_semantic()
            vault.create(Draft(*ROLLBACK))
            time.sleep(3)
            assert vault.semantic_status().pending == 1
        vault.create(Draft("Team lunch", "Thursday lunch is at the Thai place near the station."))
        eventually(lambda: vault.semantic_status().pending == 0, 60)
        assert titles(vault, PARAPHRASE, mode="semantic")[0] == ROLLBACK[0]
    finally:
        vault.close()


def test_a_server_without_the_turn_takes_in_the_vectors_another_process_saved(
    vault_dir: Path,
) -> None:
    """Another process of the vault has the turn and embeds each new memory: a server that
    left the embedding to it, its vectors already in memory, finds the memory by meaning once
    its vectors are saved."""
    vault = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    other = FileLock(str(vault_dir / ".memvault" / "embedding.lock"))
    try:
        with other:
            vault.serve_semantic()
            for memory in (("Team lunch", "Thursday lunch is at the Thai place."), ROLLBACK):
                vault.create(Draft(*memory))
                embedder = VaultService.open(Settings(vault=vault_dir, embed_model=None))
                try:
                    embedder.embed()
                finally:
                    embedder.close()
                vault.upkeep.sync()
                eventually(lambda: vault.semantic_status().pending == 0, 60)
            assert titles(vault, PARAPHRASE, mode="semantic")[0] == ROLLBACK[0]
    finally:
        vault.close()


def test_a_killed_embedding_worker_is_replaced(vault_dir: Path) -> None:
    """The server's embedding worker process dies (out of memory, killed): the next change is
    embedded by a new one."""
    vault = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    try:
        vault.serve_semantic()
        vault.create(Draft(*ROLLBACK))
        eventually(lambda: vault.semantic_status().pending == 0, 60)
        workers = multiprocessing.active_children()
        assert workers
        for process in workers:
            process.kill()
        vault.create(
            Draft("Office plants", "Water the ficus every Monday; the cactus once a month.")
        )
        time.sleep(1)
        vault.create(Draft("Team lunch", "Thursday lunch is at the Thai place near the station."))
        eventually(lambda: vault.semantic_status().pending == 0, 60)
        assert titles(vault, "where do we eat on Thursdays", mode="semantic")[0] == "Team lunch"
    finally:
        vault.close()


def test_the_shell_embeds_a_big_vault_on_every_core(vault_dir: Path) -> None:
    """`memvault embed` with more than a batch to do: worker processes embed batches side by
    side, each saved in order, and the vectors find a memory by its meaning."""
    vault = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    try:
        for n in range(70):
            vault.create(Draft(f"Note {n}", f"Fact number {n}: the {n}th planet has {n} moons."))
        vault.create(Draft(*ROLLBACK))
    finally:
        vault.close()
    result = CliRunner().invoke(
        main, ["--vault", str(vault_dir), "embed", "--json"], env={"MEMVAULT_EMBED_MODEL": None}
    )
    assert result.exit_code == 0, result.output
    status = json.loads(result.stdout)
    assert (status["embedded"], status["pending"]) == (71, 0)
    again = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    try:
        assert titles(again, PARAPHRASE, mode="semantic")[0] == ROLLBACK[0]
    finally:
        again.close()


def test_a_question_nothing_answers_gets_an_empty_page(notes: VaultService) -> None:
    """A page holds matches only: a note counts by meaning when its best chunk is at least the
    model's floor close to the question. Before, a search by meaning returned every note of
    the vault, ranked, and a hybrid one counted them all in its total."""
    notes.embed()
    for mode in ("semantic", "hybrid"):
        page = notes.search("zqxj vbnm wprt", mode=mode)
        assert (page.results, page.total, page.has_more) == ([], 0, False), mode
        assert search_heading(page, "zqxj vbnm wprt").startswith("No memories match")
    found = notes.search(PARAPHRASE, mode="semantic")
    assert found.results[0].title == ROLLBACK[0]
    assert found.total < 5 and all(hit.relevance >= 0.15 for hit in found.results)
