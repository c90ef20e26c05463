"""The readable text of results, shared by both faces: one line per search hit and listed
memory (search_mem's and list_mem's text, `memvault search` and `list`), and a memory without
markdown syntax. Plain strings: no pydantic, so a command that prints text starts fast."""

from __future__ import annotations

from typing import Literal

from memvault.core import clock
from memvault.core.markdown import to_plain
from memvault.core.memory import Memory
from memvault.core.records import (
    Backlog,
    NoteRow,
    Related,
    SearchHit,
    SearchPage,
    SemanticStatus,
    Stats,
)
from memvault.core.reports import CheckReport, SourceImport
from memvault.words import count, memories

# How read_mem and `memvault read` give a memory.
ReadFormat = Literal["markdown", "plain", "json"]


def stats_text(figures: Stats) -> str:
    """The vault's figures in a few lines (get_stats's text, `memvault stats`)."""
    lines = [f"{memories(figures.memories)}, {figures.bytes:,} bytes"]
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
    shown = ", ".join(never[:10]) + ("..." if len(never) > 10 else "")
    never_used = memories(len(never), none="none")
    lines.append(f"never used: {never_used}" + (f" ({shown})" if never else ""))
    if figures.semantic is not None:
        lines.append(semantic_line(figures.semantic))
        if figures.semantic.reranking:
            lines.append(figures.semantic.reranking)
    return "\n".join(lines)


def semantic_line(status: SemanticStatus) -> str:
    """Whether semantic search is on, and how far embedding is, in one line."""
    if not status.enabled:
        return status.reason
    total = status.embedded + status.pending
    if total == 0:
        return f"semantic search: no notes to embed ({status.model})"
    line = (
        f"semantic search: {status.embedded:,} of {count(total, 'note')} embedded ({status.model})"
    )
    if status.pending:
        paused = "; paused now while requests come" if status.paused else ""
        line += (
            "; `memvault embed` embeds the rest (a running server does it by itself, on "
            f"{count(status.cores, 'core')}{paused})"
        )
    return line


def waiting_line(waiting: Backlog) -> str:
    """The notes not embedded yet, and how to embed them, in one line."""
    return (
        f"{count(waiting.notes, 'memory', 'memories')} not embedded yet, so search by meaning "
        f"leaves them out; `memvault embed` embeds them (about {waiting.seconds():.0f} s)"
    )


def plain_text(memory: Memory) -> str:
    """A memory's title and body without markdown syntax."""
    return f"{memory.title}\n\n{to_plain(memory.body).strip()}\n"


def reviewed(stamp: str | None) -> str:
    """When a memory was last reviewed, as a person says it: "reviewed 3 days ago", or
    "never reviewed"."""
    return "never reviewed" if clock.parse(stamp) is None else f"reviewed {clock.age(stamp)}"


def used(times: int) -> str:
    """How often a memory was used: "never used", "used once", "used 3 times"."""
    return {0: "never used", 1: "used once"}.get(times, f"used {times:,} times")


def links_removed(changed: list[str]) -> str:
    """What a delete did to the links of other memories, as both faces say it."""
    if not changed:
        return "no other memory linked to it"
    return f"links to it removed from {memories(len(changed))}"


def group_name(category: str | None, scope: str | None) -> str:
    """Which memories a move of many names: "category 'ops'", "scope 'acme'", or both."""
    named = [
        f"{kind} {name!r}" for kind, name in (("category", category), ("scope", scope)) if name
    ]
    return " in ".join(named)


def archived_line(group: str, moved: list[Memory], restore: bool) -> str:
    """What archiving (or restoring) every memory of a `group` (`group_name`) did, as both
    faces say it: how many moved, and where each is now."""
    done = "restored" if restore else "archived"
    where = "".join(f"\n  {memory.path}" for memory in moved)
    return f"{done} {memories(len(moved), none='no memory')} of {group}{where}"


# The longest line a listed memory or a briefing item takes (title, name, scope, age, then
# its first sentence), a search hit's (then its snippet: ten of them make search_mem's answer,
# read by a model at every search, so a hit gets less), and the longest title a line shows.
LINE = 160
HIT_LINE = 105
TITLE = 50


def hit_line(hit: SearchHit) -> str:
    """A search hit in one line of at most HIT_LINE characters (search_mem's text, `memvault
    search`): its title, the name read_mem takes (its path, category first), its scope, age
    and relevance, then as much of its snippet as fits, in plain text."""
    head = f"{line_head(hit.title, hit.path, hit.scope, hit.age)}, relevance {hit.relevance:.2f})"
    snippet = " ".join(hit.snippet.split())
    return head if not snippet else cut_line(f"{head}: {snippet}", HIT_LINE)


def note_line(row: NoteRow) -> str:
    """A listed memory in one line (list_mem's text, `memvault list`), shaped as a hit's:
    title, name, scope, age, and how often it was used."""
    return cut_line(
        f"{line_head(row.title, row.path, row.scope, row.age)}, {used(row.access_count)})", LINE
    )


def line_head(title: str, path: str, scope: str | None, age: str, writer: str | None = None) -> str:
    """A line's start: the title (cut at TITLE), then, in brackets, its name, scope and age
    (and who wrote it last, where the line says so)."""
    name = path[:-3] if path.lower().endswith(".md") else path
    where = f"{name}, {scope}" if scope else name
    return f"{cut_line(title, TITLE)} ({where}, {age}" + (f" by {writer}" if writer else "")


def cut_line(text: str, width: int) -> str:
    """`text` within `width` characters, cut at a word with an ellipsis when longer."""
    if len(text) <= width:
        return text
    kept = text[: width - 1]
    space = kept.rfind(" ")
    return (kept[:space] if space > width // 2 else kept).rstrip(" ,;:") + "…"


def _showing(shown: int, total: int, offset: int, counted: bool = True) -> str:
    """Which of `total` a page shows, when not all: "; showing 2 of 5" from the first,
    "; showing 11-20 of 45" or "; showing number 11 of 45" further on, "; none past 40";
    without "of 45" when the total was not `counted` to the end."""
    if shown == total and counted:
        return ""
    if shown == 0:
        return f"; none past {offset:,}"
    of = f" of {total:,}" if counted else ""
    if offset == 0:
        return f"; showing {shown:,}{of}"
    if shown == 1:
        return f"; showing number {offset + 1:,}{of}"
    return f"; showing {offset + 1:,}-{offset + shown:,}{of}"


# How a search ranked, said after its count when not by words alone.
_RANKED = {"hybrid": ", by words and meaning", "semantic": ", by meaning"}


def search_heading(page: SearchPage, query: str) -> str:
    """The line above a page of search hits: how many match (more than the count where
    counting stopped), how they were ranked (unless by words alone; how many a reranker
    ordered; among how many when a search's cap on ranking left some out), and which are
    shown."""
    caveat = f" ({page.caveat})" if page.caveat else ""
    if page.total == 0:
        return f"No memories match {query!r}{caveat}."
    verb = "matches" if page.total == 1 and not page.total_capped else "match"
    matched = f"More than {memories(page.total)}" if page.total_capped else memories(page.total)
    how = _RANKED.get(page.mode, "") + (f", top {page.reranked} reranked" if page.reranked else "")
    if page.ranked:
        how += (
            f" (the best of {page.ranked:,} of them: a search ranks no more;"
            " more words or a filter rank them all)"
        )
    shown = _showing(len(page.results), page.total, page.offset, not page.total_capped)
    return f"{matched} {verb} {query!r}{how}{shown}{caveat}."


def similar_heading(found: Related, name: str) -> str:
    """similar_mem's first line: how many, like which memory, and found how."""
    how = "in meaning" if found.by == "meaning" else "by their words (not embedded, or no model)"
    return f"{len(found.results)} memories like {name!r}, {how}; relevance is the similarity."


def list_heading(shown: int, total: int, offset: int) -> str:
    """The line above a page of listed memories: how many there are, and which are shown."""
    listed = memories(total)
    return f"{listed[0].upper()}{listed[1:]}{_showing(shown, total, offset)}."


def check_problems(report: CheckReport) -> list[str]:
    """What `check` found that a person can act on, one line each (the web page's review)."""
    return [
        *(f"broken link: {p.source} → {p.target}" for p in report.broken_links),
        *(f"one-sided link: {p.source} → {p.target}" for p in report.one_sided_links),
        *(f"skipped as malformed: {m.path}: {m.problem}" for m in report.malformed),
        *(f"unreadable: {m.path}: {m.reason}" for m in report.unreadable),
        *(
            f"lost append: {a.path}: appended at {a.appended_at}, no longer in the note "
            "(an editor saved over it?)"
            for a in report.lost_appends
        ),
    ]


def source_import_line(report: SourceImport) -> str:
    """What an import of another tool's data did, or in a dry run would do, in one line:
    `chatgpt: added 12 memories, updated 1, 30 unchanged, 2 skipped`."""
    add, update, link = (
        ("would add", "would update", "would link")
        if report.dry_run
        else (
            "added",
            "updated",
            "linked",
        )
    )
    parts = [
        f"{add} {memories(report.added)}",
        f"{update} {report.updated:,}",
        f"{report.unchanged:,} unchanged",
        f"{len(report.skipped):,} skipped",
    ]
    if report.links_added or report.links_unchanged:
        pairs = count(report.links_added, "pair")
        parts.append(f"{link} {pairs} ({report.links_unchanged:,} linked already)")
    return f"{report.format}{' (dry run)' if report.dry_run else ''}: {', '.join(parts)}"
