"""How well similar_mem finds related notes: npm's documentation pages, each asked for the pages
its "See Also" section lists (that section cut from the text first, so no link gives it away).

    python benchmarks/related.py

By meaning, three ways of scoring a note against another from their chunk vectors (the
default model): the cosine of their mean vectors (what similar_mem does), the note's mean
against the other's best chunk, and the best pair of chunks; and by words, similar_mem with the
model off (a full-text search of the note's key words). Reports recall@5 and @10. Not part of
`make test`; the pages come from the npm package, fetched once (see quality.py).
"""

from __future__ import annotations

import re
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).parent))

import quality

from memvault.config import Settings
from memvault.core.drafts import Draft, WriteOptions
from memvault.semantic.chunks import chunks
from memvault.semantic.model import Embedder, find_model
from memvault.service.vault import VaultService

Ranking = Callable[[str], list[str]]


def pages() -> tuple[dict[str, tuple[str, str]], dict[str, set[str]]]:
    """Each page's (title, text without See Also) and the pages its See Also links to, by name."""
    notes: dict[str, tuple[str, str]] = {}
    links: dict[str, set[str]] = {}
    for page in sorted(quality._npm_pages().rglob("*.md")):
        _, front, body = page.read_text().split("---\n", 2)
        meta = yaml.safe_load(front)
        text, _, see_also = body.partition("### See Also")
        notes[page.stem] = (str(meta["title"]), f"{meta.get('description', '')}\n\n{text.strip()}")
        links[page.stem] = {m.rsplit("/", 1)[-1] for m in re.findall(r"\]\((/[^)#]+)\)", see_also)}
    return notes, links


def by_meaning(notes: dict[str, tuple[str, str]]) -> dict[str, Ranking]:
    """The three chunk-vector scorings, each a ranking of the other pages for a page."""
    embedder = Embedder(find_model(None))
    vectors = {
        n: embedder.passages([c.text for c in chunks(*notes[n], embedder.measure)]) for n in notes
    }
    means = {n: v.mean(axis=0) / np.linalg.norm(v.mean(axis=0)) for n, v in vectors.items()}

    def ranking(score: Callable[[str, str], float]) -> Ranking:
        return lambda name: sorted((n for n in notes if n != name), key=lambda n: -score(name, n))

    return {
        "meaning: mean vs mean (similar_mem)": ranking(lambda a, b: float(means[a] @ means[b])),
        "meaning: mean vs best chunk": ranking(lambda a, b: float((vectors[b] @ means[a]).max())),
        "meaning: best pair of chunks": ranking(
            lambda a, b: float((vectors[b] @ vectors[a].T).max())
        ),
    }


def recall(links: dict[str, set[str]], rank: Ranking, k: int) -> float:
    """The mean share of each page's See Also pages (at most k) among its first k."""
    return statistics.mean(
        len(want & set(rank(name)[:k])) / min(len(want), k) for name, want in links.items() if want
    )


def main() -> None:
    notes, found = pages()
    links = {name: {n for n in want if n in notes} for name, want in found.items()}
    with tempfile.TemporaryDirectory() as folder:
        vault = VaultService.open(Settings(vault=Path(folder), embed_model="off"))
        ids: dict[str, str] = {}
        for name, (title, text) in notes.items():
            ids[name] = vault.create(
                Draft(title, text), WriteOptions(allow_duplicate=True, secrets="redact")
            ).id
        names = {memory_id: name for name, memory_id in ids.items()}
        rankings = by_meaning(notes)

        def by_words(name: str) -> list[str]:
            return [names[hit.id] for hit in vault.similar(ids[name], 10).results]

        rankings["words: key words searched (no model)"] = by_words
        print(f"{sum(1 for w in links.values() if w)} pages with See Also links")
        for label, rank in rankings.items():
            print(
                f"{label}: recall@5 {recall(links, rank, 5):.3f} @10 {recall(links, rank, 10):.3f}"
            )
        vault.close()


if __name__ == "__main__":
    main()
