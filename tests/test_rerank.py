"""The optional reranking stage: a cross-encoder (a tiny one with random weights, built here as
sentence-transformers and Xenova lay theirs out) reorders the best hits of a hybrid search; it
loads from either layout, scores pairs in batches cut to fit, gives way to the fused order past
its time budget and says so, and a folder that will not load is said once while search goes on."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import onnxruntime
import pytest
from click.testing import CliRunner

from memvault.cli import main
from memvault.config import Settings
from memvault.core.drafts import Draft
from memvault.core.records import SearchPage
from memvault.presentation.lines import search_heading, stats_text
from memvault.semantic.cross_encoder import BATCH, CrossEncoder, find_reranker
from memvault.semantic.reranker import LOADING
from memvault.service.vault import VaultService

from .conftest import patience
from .mcp_helpers import stdio_session, structured, text_of
from .test_sync import eventually
from .tiny_models import tiny_cross_encoder

NOTES = [
    ("Deploy order", "Deploy the database first, then the web servers, then the workers."),
    ("Release rollback", "When a release breaks production, redeploy the previous build."),
    ("Server restart", "Restart the web servers one at a time behind the load balancer."),
    ("Build cache", "The CI build cache for the servers lives in S3 and is cleared weekly."),
    ("Database backups", "The database is backed up every night before the deploy window."),
    ("Worker queues", "Workers read the deploy queue; drain it before a restart."),
    ("Office plants", "Water the ficus every Monday; the cactus once a month."),
]
QUESTION = "in which order do we deploy the servers and the database"


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A vault of NOTES, embedded once by the default model."""
    folder = tmp_path_factory.mktemp("vault")
    vault = VaultService.open(Settings(vault=folder, embed_model=None))
    for title, body in NOTES:
        vault.create(Draft(title, body))
    vault.embed()
    vault.close()
    return folder


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny cross-encoder as sentence-transformers lays it out (model.onnx at the top)."""
    return tiny_cross_encoder(tmp_path_factory.mktemp("cross-encoder"))


def opened(vault: Path, rerank: Path | None) -> VaultService:
    return VaultService.open(
        Settings(vault=vault, embed_model=None, rerank_model=str(rerank) if rerank else None)
    )


def searched(vault: Path, rerank: Path | None, query: str = QUESTION, **how: Any) -> SearchPage:
    """A search of `vault` with the reranker of `rerank` (None: no reranker)."""
    service = opened(vault, rerank)
    try:
        return service.search(query, **how)
    finally:
        service.close()


def ids(page: SearchPage) -> list[str]:
    return [hit.id for hit in page.results]


def set_options(folder: Path, **options: object) -> Path:
    (folder / "memvault.json").write_text(json.dumps(options))
    return folder


@pytest.fixture
def fused(embedded: Path) -> SearchPage:
    """The search without a reranker: the fused order."""
    page = searched(embedded, None)
    assert page.mode == "hybrid" and page.total >= 4 and page.reranked == 0
    return page


@pytest.mark.parametrize(("xenova", "token_types"), [(False, True), (True, True), (True, False)])
def test_either_layout_loads_and_orders_the_best_hits_by_its_scores(
    embedded: Path, fused: SearchPage, tmp_path: Path, xenova: bool, token_types: bool
) -> None:
    """sentence-transformers' layout and Xenova's (onnx/model.onnx), with token types (BERT's)
    or without (RoBERTa's): each note's passage is its best chunk with its title, and the
    hits take the order of the cross-encoder's scores, each the fused score of its place."""
    folder = tiny_cross_encoder(tmp_path / "ce", xenova=xenova, token_types=token_types, seed=3)
    page = searched(embedded, folder)
    assert page.reranked == page.total == fused.total
    body = dict(NOTES)
    scores = CrossEncoder(find_reranker(str(folder))).scores(
        QUESTION, [f"{hit.title}\n{body[hit.title]}" for hit in fused.results]
    )
    assert scores is not None
    expected = sorted(range(len(scores)), key=lambda i: -scores[i])
    assert ids(page) == [fused.results[i].id for i in expected]
    assert [hit.score for hit in page.results] == [hit.score for hit in fused.results]
    assert f", by words and meaning, top {page.total} reranked" in search_heading(page, QUESTION)


def test_only_the_top_n_is_reordered_and_a_page_past_them_is_not(
    embedded: Path, fused: SearchPage, model: Path, tmp_path: Path
) -> None:
    folder = set_options(tiny_cross_encoder(tmp_path / "ce", seed=5), top=3)
    page = searched(embedded, folder)
    assert page.reranked == 3 and page.total == fused.total
    assert sorted(ids(page)[:3]) == sorted(ids(fused)[:3])
    assert ids(page)[3:] == ids(fused)[3:]
    past = searched(embedded, folder, limit=2, offset=3)
    assert past.reranked == 0 and past.caveat == "" and ids(past) == ids(fused)[3:5]


def test_pairs_run_in_batches_padded_to_the_longest(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pairs of many lengths score as each does alone, in ceil(n / BATCH) runs."""
    encoder = CrossEncoder(find_reranker(str(model)))
    passages = [" ".join(["deploy the web servers"] * n) for n in range(1, 11)]
    alone = [encoder.scores(QUESTION, [p]) for p in passages]
    runs = []
    real = onnxruntime.InferenceSession.run

    def counted(session: onnxruntime.InferenceSession, *args: Any, **kwargs: Any) -> Any:
        runs.append(len(args[1]["input_ids"]))
        return real(session, *args, **kwargs)

    monkeypatch.setattr(onnxruntime.InferenceSession, "run", counted)
    together = encoder.scores(QUESTION, passages)
    assert together is not None
    assert together == pytest.approx([a[0] for a in alone if a], abs=1e-5)
    assert len(runs) == math.ceil(len(passages) / BATCH) and max(runs) == BATCH


def test_long_pairs_are_cut_to_fit_the_question_kept_up_to_its_limit(tmp_path: Path) -> None:
    """A model reading 64 pieces (a longer input is an error of its graph): a long question
    keeps its first 32 pieces, cut between words, and a long passage fills the rest."""
    folder = tiny_cross_encoder(tmp_path / "ce", positions=64)
    spec = find_reranker(str(folder))
    assert (spec.max_tokens, spec.question_tokens) == (64, 32)
    encoder = CrossEncoder(spec)
    question = " ".join(f"word{n}" for n in range(200))
    passage = " ".join(f"deploy{n}" for n in range(3000))
    kept = encoder.question(question)
    assert question.startswith(kept) and question[len(kept)] == " "
    longer = encoder.scores(question + " and more", [passage, passage + " and more"])
    assert longer == pytest.approx(encoder.scores(question, [passage, passage]), abs=1e-6)
    short = encoder.scores("deploy the servers", ["the database first"])
    assert encoder.question("deploy the servers") == "deploy the servers"
    assert short != encoder.scores("deploy the workers", ["the database first"])


def test_past_its_budget_the_fused_order_stands_and_says_so(
    embedded: Path, fused: SearchPage, tmp_path: Path
) -> None:
    folder = set_options(tiny_cross_encoder(tmp_path / "ce"), budget_ms=0)
    page = searched(embedded, folder)
    assert ids(page) == ids(fused) and page.reranked == 0
    assert page.caveat == "not reranked: past the reranker's 0 ms"
    assert search_heading(page, QUESTION).endswith("(not reranked: past the reranker's 0 ms).")


def test_a_slow_model_is_stopped_at_the_budget_and_the_fused_order_stands(
    embedded: Path, fused: SearchPage, model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model that does not answer within the budget (here: not until the search is over):
    the search answers in the fused order, says so, and the run under way is told to stop."""
    vault = opened(embedded, model)
    try:
        assert vault.search(QUESTION).reranked == fused.total  # loaded, and fast
        released = threading.Event()
        options: list[onnxruntime.RunOptions] = []
        real = onnxruntime.InferenceSession.run

        def slow(session: onnxruntime.InferenceSession, *args: Any) -> Any:
            if len(args) > 2 and args[2] is not None:  # the reranker's runs, not the question's
                options.append(args[2])
                released.wait(patience(30))
            return real(session, *args)

        monkeypatch.setattr(onnxruntime.InferenceSession, "run", slow)
        page = vault.search(QUESTION, min_relevance=0.01)
        released.set()
        assert ids(page)[: len(fused.results)] == ids(fused) and page.reranked == 0
        assert page.caveat == "not reranked: past the reranker's 300 ms"
        assert options and options[0].terminate
    finally:
        vault.close()


@pytest.mark.parametrize("damage", ["tokenizer", "option", "empty"])
def test_a_folder_that_will_not_load_is_said_once_and_search_answers(
    embedded: Path,
    fused: SearchPage,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    damage: str,
) -> None:
    folder = tiny_cross_encoder(tmp_path / "ce")
    said = {
        "tokenizer": "will not load or run",
        "option": "top must be a whole number from 2 to 100, not 1",
        "empty": "holds no model.onnx (or onnx/model.onnx) with a tokenizer.json beside it",
    }[damage]
    if damage == "tokenizer":
        (folder / "tokenizer.json").write_text("{ no longer a tokenizer")
    elif damage == "option":
        set_options(folder, top=1)
    else:
        (folder / "model.onnx").unlink()
    vault = opened(embedded, folder)
    try:
        with caplog.at_level(logging.WARNING, logger="memvault"):
            for _ in range(2):
                page = vault.search(QUESTION)
                assert ids(page) == ids(fused) and (page.reranked, page.caveat) == (0, "")
        [warning] = [r.getMessage() for r in caplog.records]
        assert warning.startswith("reranking is off: ") and said in warning
        assert vault.stats().semantic is not None
        assert vault.stats().semantic.reranking == warning
        assert warning in stats_text(vault.stats())
    finally:
        vault.close()


def test_without_a_reranker_nothing_of_it_is_looked_up(embedded: Path, model: Path) -> None:
    vault = opened(embedded, None)
    try:
        assert vault.search(QUESTION).reranked == 0
        status = vault.stats().semantic
        assert status is not None and status.reranking == ""
        assert "rerank" not in stats_text(vault.stats())
    finally:
        vault.close()
    vault = opened(embedded, model)
    try:
        status = vault.stats().semantic
        assert status is not None
        assert status.reranking == f"reranking: {model.name}, the best 20 within 300 ms"
    finally:
        vault.close()


def test_a_server_loads_the_reranker_at_its_start(embedded: Path, model: Path) -> None:
    """A server loads it in the stage's thread; until then searches say so, then rerank."""
    vault = opened(embedded, model)
    try:
        vault.serve_semantic()

        def reranked() -> bool:
            page = vault.search(QUESTION)
            if page.mode == "hybrid":  # by words while the vectors load
                assert page.reranked or page.caveat == LOADING
            return page.reranked > 0

        eventually(reranked, 30)
    finally:
        vault.close()


def test_the_cli_search_says_it_reranked(embedded: Path, model: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["--vault", str(embedded), "--rerank-model", str(model), "search", QUESTION],
        env={"MEMVAULT_EMBED_MODEL": None},
    )
    assert result.exit_code == 0, result.output
    assert f"by words and meaning, top {len(NOTES) - 1} reranked" in result.output


@pytest.fixture
def server_vault(embedded: Path, tmp_path: Path) -> Iterator[Path]:
    """A copy of the embedded vault, for a server of its own."""
    import shutil

    copy = tmp_path / "vault"
    shutil.copytree(embedded, copy)
    yield copy


@pytest.mark.processes
def test_search_mem_says_it_reranked(
    server_vault: Path, model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMVAULT_EMBED_MODEL", raising=False)

    async def scenario() -> None:
        async with stdio_session(server_vault, None, "--rerank-model", str(model)) as session:
            for _ in range(int(patience(60) / 0.1)):
                found = await session.call_tool("search_mem", {"query": QUESTION})
                if structured(found).get("reranked"):
                    break
                await asyncio.sleep(0.1)
            assert "top 6 reranked" in text_of(found).splitlines()[0]
            assert structured(found)["reranked"] == 6

    asyncio.run(scenario())
