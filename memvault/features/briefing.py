"""The session briefing: what an assistant should know when a session starts, in a token budget.

Sections, in order of priority: memories of the always-surface categories (gotchas by default),
memories of the session's scope, what changed in the last days, and memories nobody has reviewed
for a long time (flagged, so the assistant can verify or correct them).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from memvault.config import ContextSettings
from memvault.core import clock
from memvault.core.markdown import first_line
from memvault.core.records import Briefing, BriefingItem, Filter, NoteRow
from memvault.core.secrets import redacted
from memvault.errors import MemvaultError
from memvault.presentation.lines import LINE, cut_line, line_head
from memvault.service.vault import VaultService

CHARS_PER_TOKEN = 4
MAX_ITEMS = 40
LEAD_LIMIT = 200
_LIST_MARK = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
# Up to the first full stop, question or exclamation mark that ends a sentence.
_SENTENCE = re.compile(r"(.+?[.!?])(?=\s|$)")


def estimate_tokens(text: str) -> int:
    """About four characters a token for English prose: a budget guide, not a tokenizer."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def build_briefing(
    vault: VaultService,
    scope: str | Sequence[str] | None = None,
    max_tokens: int = 2000,
    settings: ContextSettings | None = None,
) -> Briefing:
    """A compact markdown briefing that fits `max_tokens`, of one scope or several (with the
    global memories); each included memory counts a use."""
    settings = settings or ContextSettings()
    scopes = Filter.of(scope=scope).scopes
    header = "# Memory briefing" + (f" for {', '.join(scopes)}" if scopes else "") + "\n"
    sections = _sections(vault, scopes, settings)
    lines = [header]
    items: list[BriefingItem] = []
    seen: set[str] = set()
    for name, rows in sections:
        heading = f"\n## {name}\n"
        for row in rows:
            if row.id in seen:
                continue
            item = _item(vault, row, name, settings)
            entry = f"- {item.line}\n"
            extra = (heading if heading else "") + entry
            if estimate_tokens("".join(lines) + extra) > max_tokens or len(items) >= MAX_ITEMS:
                break
            lines.append(extra)
            heading = ""
            seen.add(row.id)
            items.append(item)
    if not items:
        lines.append("\nNo memories yet: save durable facts with write_mem as you learn them.\n")
    text = "".join(lines)
    vault.record_use(item.id for item in items)
    return Briefing(text=text, tokens=estimate_tokens(text), items=items)


def _sections(
    vault: VaultService, scopes: tuple[str, ...], settings: ContextSettings
) -> list[tuple[str, list[NoteRow]]]:
    sections: list[tuple[str, list[NoteRow]]] = []
    for category in settings.always:
        rows, _ = vault.list_memories(Filter(category=category, scope=scopes), "usage", MAX_ITEMS)
        sections.append((f"Always ({category})", rows))
    for one in scopes:
        rows, _ = vault.list_memories(Filter(scope=one, only_scope=True), "updated", MAX_ITEMS)
        sections.append((f"Scope: {one}", rows))
    recent, _ = vault.list_memories(Filter(scope=scopes), "updated", MAX_ITEMS)
    fresh = [r for r in recent if (clock.days_since(r.updated_at) or 0) <= settings.recent_days]
    sections.append((f"Changed in the last {settings.recent_days:g} days", fresh))
    stale = stale_memories(vault, scopes, settings)
    sections.append(
        (f"Not reviewed for {settings.stale_days:g}+ days (verify_mem if still true)", stale)
    )
    return sections


def stale_memories(
    vault: VaultService,
    scope: str | tuple[str, ...] | None,
    settings: ContextSettings,
    limit: int = MAX_ITEMS,
) -> list[NoteRow]:
    """The memories nobody has reviewed for `settings.stale_days` or more, oldest first."""
    oldest, _ = vault.list_memories(Filter(scope=scope), "reviewed", limit)
    return [row for row in oldest if _stale(row, settings)]


def reviewed(row: NoteRow) -> str | None:
    """When a memory was last reviewed: its review time, else when it was made or changed."""
    return row.last_reviewed or row.created_at or row.updated_at


def _stale(row: NoteRow, settings: ContextSettings) -> bool:
    days = clock.days_since(reviewed(row))
    return days is not None and days >= settings.stale_days


def _item(
    vault: VaultService, row: NoteRow, section: str, settings: ContextSettings
) -> BriefingItem:
    """One memory's briefing entry; a secret its title or text holds shows redacted."""
    stale = _stale(row, settings)
    first = _first_line(vault, row.path)
    flag = f" [not reviewed {clock.age(reviewed(row))}]" if stale else ""
    title = redacted(row.title)
    writer = row.updated_by or row.created_by
    head = f"{line_head(title, row.path, row.scope, row.age, writer)}){flag}"
    line = redacted(cut_line(f"{head}: {first}" if first else head, LINE))
    return BriefingItem(row.id, title, row.path, row.category, section, row.age, stale, line)


def _first_line(vault: VaultService, path: str) -> str:
    """The memory's lead (see `lead`), or nothing for a file gone since the listing."""
    try:
        return lead(vault.get(path).body)
    except MemvaultError:  # a file gone since the listing: the briefing goes on without it
        return ""


def lead(body: str) -> str:
    """A body's first sentence, from its first line of text that is not a heading (a
    session's notes start with "## Summary", a captured session with a comment); its first
    line when all are headings."""
    for line in body.splitlines():
        text = _LIST_MARK.sub("", line.strip())
        if text and not text.startswith(("#", "<!--")):
            sentence = _SENTENCE.match(text)
            return (sentence.group(1) if sentence else text)[:LEAD_LIMIT]
    return first_line(body, LEAD_LIMIT)
