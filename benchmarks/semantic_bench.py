"""Semantic search's measurements: the embedded index (made once per size, seed and model, and
cached), hybrid searches, writes with the model on, and how soon a write is found by meaning.

The first embedding of a vault is the slow part (hours of CPU at 100k notes on this machine),
so `embedded_index` keeps the index it made beside the cached vault, with how long the first
embedding took, and later runs copy it: the vault's notes are the same files (a copy keeps
their mtimes), so their vectors, keyed by content hash, are found again.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

import mcp_bench
from gen_vault import Writer
from mcp import StdioServerParameters
from measure import CHILD, MEMVAULT

from memvault.semantic.model import find_model

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from tests.tiny_models import tiny_cross_encoder  # noqa: E402

MODEL_VARIABLE = "MEMVAULT_EMBED_MODEL"
RERANK_VARIABLE = "MEMVAULT_RERANK_MODEL"
# Public cross-encoders' shapes (docs/search.md#reranking): a pair's cost depends on the shape
# alone, so random weights measure it without the weights.
CROSS_ENCODER_SHAPES = {
    "ms-marco-TinyBERT-L-2-v2": {"positions": 512, "hidden": 128, "layers": 2, "heads": 2},
    "ms-marco-MiniLM-L-6-v2": {"positions": 512, "hidden": 384, "layers": 6, "heads": 12},
}
# How long a benchmark waits for a new memory to be found by meaning before it gives up.
FOUND_TIMEOUT = 60.0
POLL = 0.02


@dataclass
class FirstEmbedding:
    """How the first embedding of a vault went: `memvault embed` from no vectors at all."""

    seconds: float
    chunks: int
    notes: int
    peak_mb: float
    made: str  # when (UTC), since a cached index reports the figures of the run that made it
    resumed: bool = False  # a run stopped midway went on: the time is the last run's only

    @property
    def chunks_per_second(self) -> float:
        """Chunks embedded per second of wall time."""
        return self.chunks / self.seconds


def model_on() -> dict[str, str]:
    """The environment with the default model (the runner turns it off for the other rows)."""
    return {k: v for k, v in os.environ.items() if k != MODEL_VARIABLE}


def model_key() -> str:
    """The default model's chunker (its key and how notes are cut) as a file name: a cache of
    vectors is only good for it."""
    return re.sub(r"[^A-Za-z0-9.-]+", "_", find_model(None).chunker)


def embedded_index(
    cache: Path, size: int, seed: int, vault: Path, index: Path, log: Any
) -> FirstEmbedding:
    """Put at `index` an index of `vault` (a fresh copy of the cached vault) with every note
    embedded: a copy of the cached one, or made by `memvault embed` and cached (timed, its
    progress shown on stderr). Returns how the first embedding went."""
    folder = cache / f"embedded-{size}-seed{seed}-{model_key()}"
    if not (folder / "first-embedding.json").is_file():
        log(f"[{size}] first embedding of {size:,} notes (cached for later runs)")
        shutil.rmtree(folder, ignore_errors=True)
        partial = folder.with_name(folder.name + ".partial")
        resumed = (partial / "index.sqlite3").is_file()
        partial.mkdir(parents=True, exist_ok=True)
        first = first_embedding(vault, partial / "index.sqlite3")
        first.resumed = resumed
        (partial / "first-embedding.json").write_text(json.dumps(asdict(first), indent=2))
        partial.rename(folder)
    shutil.copyfile(folder / "index.sqlite3", index)
    return FirstEmbedding(**json.loads((folder / "first-embedding.json").read_text()))


def first_embedding(vault: Path, index: Path) -> FirstEmbedding:
    """Index `vault` at `index`, then embed every note with `memvault embed`, timed with its
    peak RSS through child.py, its progress bar shown (on a terminal). An interrupted run
    resumes where it stopped: what was embedded is kept in the index."""
    base = [MEMVAULT, *mcp_bench.base_args(vault, index)]
    subprocess.run([*base, "sync"], check=True, capture_output=True, env=model_on())
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp, "report.json")
        subprocess.run(
            [sys.executable, "-I", "-S", str(CHILD), str(report), *base, "embed"],
            check=True,
            stdout=subprocess.DEVNULL,
            env=model_on(),
        )
        measured = json.loads(report.read_text())
    if measured["code"] != 0:
        raise RuntimeError(f"memvault embed exited {measured['code']}")
    with sqlite3.connect(index) as db:
        chunks, notes = db.execute(
            "SELECT count(*), count(DISTINCT n.rowid) FROM notes n"
            " CROSS JOIN chunk_maps c ON c.chunker = ? AND c.note_hash = n.hash",
            [find_model(None).chunker],
        ).fetchone()
    made = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return FirstEmbedding(measured["seconds"], chunks, notes, measured["peak_kib"] / 1024, made)


def shaped_cross_encoder(cache: Path, name: str) -> Path:
    """A cross-encoder of the shape of `name` (CROSS_ENCODER_SHAPES) with random weights, made
    once into the cache: what reranking costs a search, whatever a person's model ranks."""
    folder = cache / f"cross-encoder-shape-{name}"
    if not (folder / "config.json").is_file():
        partial = folder.with_name(folder.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        tiny_cross_encoder(partial, **CROSS_ENCODER_SHAPES[name])
        partial.rename(folder)
    return folder


async def reranked_times(
    params: StdioServerParameters, calls: list[dict[str, Any]], errlog: TextIO
) -> tuple[list[float], int]:
    """Seconds each search_mem takes once the server's reranker has loaded (searches until
    none says it is loading, unmeasured), and how many of the measured ones were reranked
    (one past the reranker's time budget is not)."""
    async with mcp_bench.stdio_session(params, errlog) as session:
        started = time.perf_counter()
        while True:
            result = mcp_bench.checked(await session.call_tool("search_mem", calls[0]))
            if "still loading" not in (result.structured_content or {}).get("caveat", ""):
                break
            if time.perf_counter() - started > FOUND_TIMEOUT:
                raise RuntimeError("the reranker did not load")
            await asyncio.sleep(POLL)
        times, reranked = [], 0
        for arguments in calls:
            began = time.perf_counter()
            result = mcp_bench.checked(await session.call_tool("search_mem", arguments))
            times.append(time.perf_counter() - began)
            reranked += bool((result.structured_content or {}).get("reranked"))
        return times, reranked


def stdio(vault: Path, index: Path) -> StdioServerParameters:
    """A stdio server on the embedded index, with the default model."""
    params = mcp_bench.memvault_stdio(vault, index)
    params.env = model_on()
    return params


class ShortMemories:
    """write_mem arguments for short memories (30-55 words, which the duplicate guard embeds
    on the write's path) or long ones (a few paragraphs, which it compares only by text).
    Each has a scope of its own: the guard runs in full (the model, the lookup) but never
    refuses one, as it could, for the generated word salads sit close to one another (their
    nearest note scored 0.69-0.73, against the guard's 0.75, on a 10k vault)."""

    def __init__(self, seed: int) -> None:
        self.writer = Writer(seed + 7, 1000)
        self.count = 0

    def arguments(self, long: bool) -> dict[str, Any]:
        """One new memory in category bench/semantic."""
        self.count += 1
        w = self.writer
        if long:
            content = "\n\n".join(w.paragraph() for _ in range(4))
        else:
            content = " ".join(w.draw(w.rng.randint(30, 55))).capitalize() + "."
        title = " ".join(w.topic(4)).capitalize()
        return {
            "title": f"{title} semantic {self.count}",
            "content": content,
            "category": "bench/semantic",
            "scope": f"bench-{self.count}",
        }


async def found_by_meaning_times(
    params: StdioServerParameters, memories: list[dict[str, Any]], errlog: TextIO
) -> list[float]:
    """Seconds from each write_mem's answer until search_mem in semantic mode finds the new
    memory by its own text (the server embeds it in the background meanwhile)."""
    async with mcp_bench.stdio_session(params, errlog) as session:
        times = []
        for arguments in memories:
            mcp_bench.checked(await session.call_tool("write_mem", arguments))
            written = time.perf_counter()
            query = {
                "query": arguments["content"],
                "mode": "semantic",
                "category": arguments["category"],
                "scope": arguments["scope"],
                "only_scope": True,
                "limit": 1,
            }
            while True:
                result = mcp_bench.checked(await session.call_tool("search_mem", query))
                hits = (result.structured_content or {}).get("results", [])
                if hits and hits[0]["title"] == arguments["title"]:
                    break
                if time.perf_counter() - written > FOUND_TIMEOUT:
                    raise RuntimeError(f"{arguments['title']!r} not found by meaning")
                await asyncio.sleep(POLL)
            times.append(time.perf_counter() - written)
        return times
