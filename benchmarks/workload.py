"""What the benchmarks ask of a vault: search queries, body edits and new memories."""

from __future__ import annotations

import os
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from gen_vault import FUNCTION_WORDS, Writer, vocabulary

from memvault.search.query import STOPWORDS

# Words this frequent are function words or nearly: nobody searches for them.
COMMON_RANKS = 100
WORD = re.compile(r"[^\W\d_]+")


@dataclass
class Query:
    """A 2-5 word search, with the category or a tag of a note it comes from as a filter."""

    text: str
    category: str | None
    tag: str | None

    def arguments(self) -> dict[str, Any]:
        """search_mem's arguments, filter included."""
        if self.tag is not None:
            return {"query": self.text, "tags": [self.tag]}
        return {"query": self.text, "category": self.category}


def note_files(vault: Path) -> list[Path]:
    """Every markdown file of the vault, in a stable order."""
    found = []
    for folder, dirs, files in os.walk(vault):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [Path(folder, f) for f in sorted(files) if f.endswith(".md")]
    return found


def frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """(frontmatter, body) of a generated note."""
    _, meta, body = text.split("---\n", 2)
    return yaml.load(meta, Loader=yaml.CSafeLoader), body


def queries(vault: Path, seed: int, count: int) -> list[Query]:
    """Queries made of words that occur together in one note, filtered to that note's
    category (even positions) or one of its tags (odd), so each one finds something."""
    rng = random.Random(seed)
    ranks = {w: r for r, w in enumerate(vocabulary(seed))}
    files = note_files(vault)
    found: list[Query] = []
    while len(found) < count:
        meta, body = frontmatter(rng.choice(files).read_text(encoding="utf-8"))
        words = sorted({w for w in WORD.findall(body.lower()) if ranks.get(w, 0) >= COMMON_RANKS})
        tags = meta.get("tags") or []
        category = meta.get("category")
        if len(words) < 5 or not (tags and category):
            continue
        text = " ".join(rng.sample(words, rng.randint(2, 5)))
        by_tag = len(found) % 2 == 1
        found.append(Query(text, category, rng.choice(tags) if by_tag else None))
    return found


def common_words(seed: int) -> list[str]:
    """The vault's most frequent words a question may hold: the first COMMON_RANKS of its
    vocabulary, without function words and memvault's stop words (43 at seed 1, from
    `becanur`, in 53 % of the notes, to `pecutrast`, in 20 %)."""
    return [
        word
        for word in vocabulary(seed)[:COMMON_RANKS]
        if word not in FUNCTION_WORDS and word not in STOPWORDS
    ]


def common_queries(seed: int, words: int, count: int) -> list[str]:
    """`count` questions of `words` distinct common words each (common_words), unfiltered: the
    searches that match most of a vault (issue 38)."""
    rng = random.Random(f"common-{seed}-{words}")
    pool = common_words(seed)
    return [" ".join(rng.sample(pool, words)) for _ in range(count)]


def edit_bodies(files: list[Path], stamp: str) -> None:
    """Append a line to each file, written as editors do: temp file, then rename over."""
    for path in files:
        text = path.read_text(encoding="utf-8")
        temp = path.with_name(f".{path.name}.bench")
        temp.write_text(f"{text}\nEdited in benchmark pass {stamp}.\n", encoding="utf-8")
        os.replace(temp, path)


class MemoryMaker:
    """Arguments for write_mem: distinct titles, Zipf text and links to existing notes."""

    def __init__(self, vault: Path, seed: int):
        self.writer = Writer(seed, 1000)
        self.stems = [p.stem for p in note_files(vault)]
        self.count = 0

    def arguments(self, who: str) -> dict[str, Any]:
        """One new memory's title, content, tags and category."""
        self.count += 1
        w = self.writer
        links = " ".join(f"[[{w.rng.choice(self.stems)}]]" for _ in range(w.rng.randint(0, 2)))
        content = f"{w.paragraph()}\n\n{w.bullets()}\n\n{w.paragraph()} {links}\n"
        title = " ".join(w.topic(4)).capitalize()
        return {
            "title": f"{title} {who} {self.count}",
            "content": content,
            "tags": sorted(set(w.topic(2))),
            "category": f"bench/{who}",
        }
