"""The session briefing: what an assistant should know when a session starts, in a token budget.

Sections, in order of priority: memories of the always-surface categories (gotchas by default),
memories of the session's scope, what changed in the last days, and memories nobody has reviewed
for a long time (flagged, so the assistant can verify or correct them).
"""

from __future__ import annotations

import math

from . import clock
from .config import ContextSettings
from .errors import MemvaultError
from .markdown import first_line
from .records import Briefing, BriefingItem, Filter, NoteRow
from .text import by
from .vault import VaultService

CHARS_PER_TOKEN = 4
MAX_ITEMS = 40


def estimate_tokens(text: str) -> int:
    """About four characters a token for English prose: a budget guide, not a tokenizer."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def build_briefing(
    vault: VaultService,
    scope: str | None = None,
    max_tokens: int = 2000,
    settings: ContextSettings | None = None,
) -> Briefing:
    """A compact markdown briefing that fits `max_tokens`; each included memory counts a use."""
    settings = settings or ContextSettings()
    header = "# Memory briefing" + (f" for {scope}" if scope else "") + "\n"
    sections = _sections(vault, scope, settings)
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
    vault: VaultService, scope: str | None, settings: ContextSettings
) -> list[tuple[str, list[NoteRow]]]:
    sections: list[tuple[str, list[NoteRow]]] = []
    for category in settings.always:
        rows, _ = vault.list_memories(Filter(category=category, scope=scope), "usage", MAX_ITEMS)
        sections.append((f"Always ({category})", rows))
    if scope:
        rows, _ = vault.list_memories(Filter(scope=scope, only_scope=True), "updated", MAX_ITEMS)
        sections.append((f"Scope: {scope}", rows))
    recent, _ = vault.list_memories(Filter(scope=scope), "updated", MAX_ITEMS)
    fresh = [r for r in recent if (clock.days_since(r.updated_at) or 0) <= settings.recent_days]
    sections.append((f"Changed in the last {settings.recent_days:g} days", fresh))
    oldest, _ = vault.list_memories(Filter(scope=scope), "reviewed", MAX_ITEMS)
    stale = [r for r in oldest if _stale(r, settings)]
    sections.append(
        (f"Not reviewed for {settings.stale_days:g}+ days (verify_mem if still true)", stale)
    )
    return sections


def _reviewed(row: NoteRow) -> str | None:
    return row.last_reviewed or row.created_at or row.updated_at


def _stale(row: NoteRow, settings: ContextSettings) -> bool:
    days = clock.days_since(_reviewed(row))
    return days is not None and days >= settings.stale_days


def _item(
    vault: VaultService, row: NoteRow, section: str, settings: ContextSettings
) -> BriefingItem:
    stale = _stale(row, settings)
    first = _first_line(vault, row.path)
    flag = f" [not reviewed {clock.age(_reviewed(row))}]" if stale else ""
    where = f"{row.category}, " if row.category else ""
    line = f"**{row.title}** ({where}{row.age}{by(row)}, id {row.id}){flag}: {first}"
    return BriefingItem(row.id, row.title, row.path, row.category, section, row.age, stale, line)


def _first_line(vault: VaultService, path: str) -> str:
    try:
        return first_line(vault.get(path).body)
    except MemvaultError:  # a file gone since the listing: the briefing goes on without it
        return ""
