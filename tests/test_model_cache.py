"""The default model's int8 copy: made offline in the user's cache the first time it is needed,
reused after, made again when damaged, built once when two processes need it at the same time,
and, when it cannot be made, the packaged model runs instead."""

from __future__ import annotations

import hashlib
import multiprocessing
import shutil
import socket
from dataclasses import replace
from pathlib import Path

import pytest

from memvault.semantic.model import DEFAULT_NAME, Embedder, ModelSpec, find_model
from memvault.semantic.model_cache import DIGEST_FILE, MODEL_FILE, RECIPE

from .conftest import patience

TEXT = "When a release breaks production, redeploy the previous build from the CI pipeline."
# Real prose of several kinds and lengths, for the int8 copy's fidelity to the float32 model.
PROSE = [
    TEXT,
    "Water the ficus every Monday; the cactus once a month.",
    "## Retries\n\nFailed card payments are retried three times, an hour apart, and then the "
    "customer gets an email asking for another card. Refunds are never retried automatically: "
    "support decides each one by hand, since a second refund cannot be taken back.",
    "npm install saves any specified packages into dependencies by default. Additionally, you "
    "can control where and how they get saved with some additional flags: -P, --save-prod: "
    "Package will appear in your dependencies. This is the default unless -D or -O are present.",
    "Melanie: I went camping with the kids last weekend! We roasted marshmallows and hiked.",
]


def _offline(*_args: object) -> None:
    raise AssertionError("the model cache must not use the network")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder where the default model was quantised once, with no network."""
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache))
        patch.setattr(socket.socket, "connect", _offline)
        find_model(None)
    return cache


def _cached_model(cache: Path) -> Path:
    [model] = (cache / "memvault" / "models").glob(f"*-{RECIPE}/{MODEL_FILE}")
    return model


def _packaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModelSpec:
    """The packaged model, as found when the cache cannot be written (a file stands there)."""
    (tmp_path / "a-file").write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a-file"))
    return find_model(None)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_default_model_runs_as_an_int8_copy_in_the_cache(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(built))
    spec = find_model(None)
    assert spec.onnx == _cached_model(built)
    assert spec.key.startswith(f"{DEFAULT_NAME}/") and spec.key.endswith(f"-{RECIPE}")
    assert (spec.onnx.parent / DIGEST_FILE).read_text().strip() == _sha256(spec.onnx)

    # A cache it cannot write to: the packaged model runs, under its own key.
    packaged = _packaged(tmp_path, monkeypatch)
    assert packaged.key != spec.key and not packaged.key.endswith(RECIPE)
    quantised, original = Embedder(spec).passages(PROSE), Embedder(packaged).passages(PROSE)
    cosines = (quantised * original).sum(axis=1)
    assert float(cosines.mean()) >= 0.99 and float(cosines.min()) > 0.98, cosines


def test_the_copy_is_reused(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(built))
    model = _cached_model(built)
    before = model.stat()
    assert find_model(None).onnx == model
    after = model.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.mark.parametrize("damage", ["truncated", "flipped", "no digest"])
def test_a_damaged_copy_is_made_again(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    cache = tmp_path / "cache"
    shutil.copytree(built, cache)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    model = _cached_model(cache)
    whole = model.read_bytes()
    if damage == "truncated":
        model.write_bytes(whole[: len(whole) // 2])
    elif damage == "flipped":
        middle = len(whole) // 2
        model.write_bytes(whole[:middle] + bytes([whole[middle] ^ 0xFF]) + whole[middle + 1 :])
    else:
        (model.parent / DIGEST_FILE).unlink()
    spec = find_model(None)
    assert spec.onnx == model and model.read_bytes() == whole
    assert Embedder(spec).query(TEXT).shape == (384,)


def test_a_copy_made_by_another_recipe_is_never_used(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new recipe is a new model: the copy an older one made stays unused, a new copy is
    made, and its key differs, so the vectors made by the old one are embedded again."""
    cache = tmp_path / "cache"
    shutil.copytree(built, cache)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    current = find_model(None)
    old = current.onnx.parent.with_name(current.onnx.parent.name.replace(RECIPE, "int8"))
    current.onnx.parent.rename(old)
    made = find_model(None)
    assert made.onnx == current.onnx and made.key == current.key and made.key.endswith(RECIPE)
    assert (old / MODEL_FILE).is_file() and _sha256(old / MODEL_FILE) == _sha256(made.onnx)
    monkeypatch.setattr("memvault.semantic.model_cache.RECIPE", "int8")
    assert find_model(None).key != made.key


def _build_and_report(cache: str, inodes: multiprocessing.Queue[int]) -> None:
    import os

    os.environ["XDG_CACHE_HOME"] = cache
    inodes.put(find_model(None).onnx.stat().st_ino)


def test_two_processes_build_the_copy_once(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    inodes: multiprocessing.Queue[int] = context.Queue()
    processes = [
        context.Process(target=_build_and_report, args=(str(tmp_path), inodes)) for _ in range(2)
    ]
    for process in processes:
        process.start()
    found = [inodes.get(timeout=patience(120)) for _ in processes]
    for process in processes:
        process.join(timeout=patience(60))
        assert process.exitcode == 0
    model = _cached_model(tmp_path)
    assert found == [model.stat().st_ino] * 2
    assert (model.parent / DIGEST_FILE).read_text().strip() == _sha256(model)


def test_the_rebuilt_graph_computes_what_the_export_computes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bert_graph's fused operators, before any quantising, give the export's vectors."""
    import onnx
    import onnxruntime

    from memvault.semantic.bert_graph import fused
    from memvault.semantic.model_cache import HEADS

    packaged = _packaged(tmp_path, monkeypatch)
    folded, rebuilt = tmp_path / "folded.onnx", tmp_path / "rebuilt.onnx"
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    onnxruntime.InferenceSession(str(packaged.onnx), options, providers=["CPUExecutionProvider"])
    onnx.save(fused(onnx.load(str(folded)), HEADS), str(rebuilt))
    ours = Embedder(replace(packaged, key="rebuilt", onnx=rebuilt)).passages(PROSE)
    cosines = (ours * Embedder(packaged).passages(PROSE)).sum(axis=1)
    assert float(cosines.min()) > 0.9999, cosines


def test_a_text_s_vector_does_not_depend_on_the_texts_embedded_with_it(built: Path) -> None:
    """A chunk gets one vector whether it is embedded alone (the duplicate guard's new memory)
    or among others (the background pass), so the guard's vector can be the memory's own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(built))
        embedder = Embedder(find_model(None))
    together = embedder.passages(PROSE)
    for row, text in enumerate(PROSE):
        assert (embedder.passages([text])[0] == together[row]).all(), text
