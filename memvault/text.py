"""The readable text of results, shared by both faces: one line per search hit and listed
memory (search_mem's and list_mem's text, `memvault search` and `list`), and a memory without
markdown syntax. Plain strings: no pydantic, so a command that prints text starts fast."""

from __future__ import annotations

from typing import Literal

from . import clock
from .markdown import to_plain
from .model import Memory
from .records import NoteRow, Related, SearchHit, SearchPage, Stats

# How read_mem and `memvault read` give a memory.
ReadFormat = Literal["markdown", "plain", "json"]


def stats_text(figures: Stats) -> str:
    """The vault's figures in a few lines (get_stats's text, `memvault stats`)."""
    lines = [f"{figures.memories} memories, {figures.bytes:,} bytes"]
    for name, counts, sizes in (
        ("by category", figures.by_category, figures.bytes_by_category),
        ("by scope", figures.by_scope, figures.bytes_by_scope),
        ("by tag", figures.by_tag, {}),
    ):
        parts = [
            f"{key} {n}" + (f" ({sizes[key]:,} B)" if key in sizes else "")
            for key, n in counts.items()
        ]
        lines.append(f"{name}: {', '.join(parts) or '-'}")
    never = figures.never_used
    lines.append(f"never used: {len(never)}" + (f" ({', '.join(never[:10])}...)" if never else ""))
    return "\n".join(lines)


def plain_text(memory: Memory) -> str:
    """A memory's title and body without markdown syntax."""
    return f"{memory.title}\n\n{to_plain(memory.body).strip()}\n"


def by(row: NoteRow | SearchHit) -> str:
    """Who last wrote a memory, as its line shows it (` by NAME`), if the file says."""
    name = row.updated_by or row.created_by
    return f" by {name}" if name else ""


def hit_line(hit: SearchHit) -> str:
    """A search hit on one line (search_mem's text, `memvault search`)."""
    return (
        f"{hit.title} (id {hit.id}, {hit.path}, updated {hit.age}{by(hit)}, reviewed "
        f"{clock.age(hit.last_reviewed)}, relevance {hit.relevance:.2f})"
        + (f": {' '.join(hit.snippet.split())}" if hit.snippet.strip() else "")
    )


def note_line(row: NoteRow) -> str:
    """A listed memory on one line (list_mem's text, `memvault list`)."""
    return (
        f"{row.title} (id {row.id}, {row.path}, updated {row.age}{by(row)}, reviewed "
        f"{clock.age(row.last_reviewed)}, used {row.access_count}x)"
    )


def search_heading(page: SearchPage, query: str) -> str:
    return f"{len(page.results)} of {page.total} memories match {query!r}."


def similar_heading(found: Related, name: str) -> str:
    """similar_mem's first line: how many, like which memory, and found how."""
    how = "in meaning" if found.by == "meaning" else "by their words (no vectors yet)"
    return f"{len(found.results)} memories like {name!r}, {how}; relevance is the similarity."


def list_heading(shown: int, total: int, offset: int) -> str:
    return f"{shown} of {total} memories (from {offset})."
