"""The session briefing: what an assistant should know when a session starts, in a token budget.

Sections, in order of priority: memories of the always-surface categories (gotchas by default),
the last session's notes (where work stands), memories of each scope asked for, what changed
in the last days, and memories nobody has reviewed for a long time (flagged, so the assistant
can verify or correct them). Each section keeps a share of the budget: a tight one shortens
every section, down to its first memory in a shorter line, rather than leaving any out, and the
share a short section does not use goes to the others.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from memvault.config import ContextSettings
from memvault.core import clock
from memvault.core.markdown import first_line
from memvault.core.records import Briefing, BriefingItem, Filter, NoteRow
from memvault.core.secrets import redacted
from memvault.errors import MemvaultError
from memvault.features.session_notes import SESSION_CATEGORY
from memvault.presentation.lines import LINE, cut_line, line_head
from memvault.service.vault import VaultService

CHARS_PER_TOKEN = 4
MAX_ITEMS = 40
LEAD_LIMIT = 200
# Bytes of a memory's file read for its lead: its frontmatter and first lines.
HEAD_BYTES = 64 * 1024
# The shortest line a section's first memory is cut to before a section is left out: only a
# budget below about 150 tokens comes to that.
MIN_LINE = 40
# What an entry adds to its line: "- " before it, a newline after.
_MARKS = 3
_LIST_MARK = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
# Up to the first full stop, question or exclamation mark that ends a sentence.
_SENTENCE = re.compile(r"(.+?[.!?])(?=\s|$)")


def estimate_tokens(text: str) -> int:
    """About four characters a token for English prose: a budget guide, not a tokenizer."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass
class _Section:
    """One section: its candidates in order, the next one to look at, and the items taken."""

    name: str
    rows: list[NoteRow]
    cursor: int = 0
    items: list[BriefingItem] = field(default_factory=list)

    @property
    def heading(self) -> str:
        return f"\n## {self.name}\n"

    def text(self) -> str:
        return self.heading + "".join(_entry(item) for item in self.items)


def build_briefing(
    vault: VaultService,
    scope: str | Sequence[str] | None = None,
    max_tokens: int = 2000,
    settings: ContextSettings | None = None,
) -> Briefing:
    """A compact markdown briefing that fits `max_tokens` (by `estimate_tokens`), of one scope
    or several (with the global memories), each non-empty section sharing the budget; each
    included memory counts a use."""
    settings = settings or ContextSettings()
    scopes = Filter.of(scope=scope).scopes
    header = "# Memory briefing" + (f" for {', '.join(scopes)}" if scopes else "") + "\n"
    sections = _sections(vault, scopes, settings)
    _Shares(vault, settings, max_tokens * CHARS_PER_TOKEN - len(header)).fill(sections)
    items = [item for section in sections for item in section.items]
    text = header + "".join(section.text() for section in sections if section.items)
    if not items:
        text += "\nNo memories yet: save durable facts with write_mem as you learn them.\n"
    vault.record_use(item.id for item in items)
    return Briefing(text=text, tokens=estimate_tokens(text), items=items)


class _Shares:
    """Fills sections within `room` characters: first one memory each, their lines cut to a
    fair share of the room when all do not fit whole; then a memory each in turn while
    their whole lines fit. A memory shows once, in the first section that takes it."""

    def __init__(self, vault: VaultService, settings: ContextSettings, room: int) -> None:
        self.vault = vault
        self.settings = settings
        self.room = room
        self.seen: set[str] = set()

    def fill(self, sections: list[_Section]) -> None:
        """Take each section's first item, the lines cut to fair widths when all do not fit
        whole, then an item of each in turn while whole lines fit."""
        taking = self._first_round(sections)
        while taking:
            for section in list(taking):
                if self._full(sections):
                    return
                item = self._next(section)
                if item is None or len(_entry(item)) > self.room:
                    taking.remove(section)
                else:
                    self._take(section, item)

    def _first_round(self, sections: list[_Section]) -> list[_Section]:
        """Give each section its first item, leaving out the last sections only when even
        MIN_LINE characters each do not fit; the sections given one."""
        first: list[tuple[_Section, BriefingItem]] = []
        for section in sections:
            item = self._next(section)
            if item is not None and len(first) < MAX_ITEMS:
                self.seen.add(item.id)
                first.append((section, item))
        while first and self._fair_room(first) < MIN_LINE * len(first):
            self.seen.discard(first.pop()[1].id)
        widths = fair_widths([len(item.line) for _, item in first], self._fair_room(first))
        for (section, item), width in zip(first, widths, strict=True):
            self._take(section, replace(item, line=cut_line(item.line, width)))
        return [section for section, _ in first]

    def _fair_room(self, first: list[tuple[_Section, BriefingItem]]) -> int:
        """What is left for the first round's lines once their headings and marks are paid."""
        return self.room - sum(len(section.heading) + _MARKS for section, _ in first)

    def _full(self, sections: list[_Section]) -> bool:
        return sum(len(section.items) for section in sections) >= MAX_ITEMS

    def _take(self, section: _Section, item: BriefingItem) -> None:
        self.room -= len(_entry(item)) + (0 if section.items else len(section.heading))
        self.seen.add(item.id)
        section.items.append(item)

    def _next(self, section: _Section) -> BriefingItem | None:
        """The section's next memory no section has taken, as an item; None past its last."""
        while section.cursor < len(section.rows):
            row = section.rows[section.cursor]
            section.cursor += 1
            if row.id not in self.seen:
                return _item(self.vault, row, section.name, self.settings)
        return None


def fair_widths(lengths: list[int], room: int) -> list[int]:
    """Widths for lines of `lengths` within `room` characters, shared fairly: a line shorter
    than its share keeps its length and leaves the rest to the longer ones, which are cut to
    an equal share of what is left."""
    widths = [0] * len(lengths)
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    left = room
    for done, index in enumerate(order):
        widths[index] = min(lengths[index], left // (len(order) - done))
        left -= widths[index]
    return widths


def _entry(item: BriefingItem) -> str:
    return f"- {item.line}\n"


def _sections(
    vault: VaultService, scopes: tuple[str, ...], settings: ContextSettings
) -> list[_Section]:
    """The sections in order of priority, each with its candidates (a section none of whose
    memories is left once the earlier ones took theirs shows no heading)."""
    sections: list[_Section] = []
    for category in settings.always:
        rows = _listed(vault, Filter(category=category, scope=scopes), "usage", MAX_ITEMS)
        sections.append(_Section(f"Always ({category})", rows))
    last = _listed(vault, Filter(category=SESSION_CATEGORY, scope=scopes), "updated", 1)
    sections.append(_Section("Last session", last))
    for one in scopes:
        rows = _listed(vault, Filter(scope=one, only_scope=True), "updated", MAX_ITEMS)
        sections.append(_Section(f"Scope: {one}", rows))
    recent = _listed(vault, Filter(scope=scopes), "updated", MAX_ITEMS)
    fresh = [r for r in recent if (clock.days_since(r.updated_at) or 0) <= settings.recent_days]
    sections.append(_Section(f"Changed in the last {settings.recent_days:g} days", fresh))
    stale = stale_memories(vault, scopes, settings)
    name = f"Not reviewed for {settings.stale_days:g}+ days (verify_mem if still true)"
    sections.append(_Section(name, stale))
    return sections


def stale_memories(
    vault: VaultService,
    scope: str | tuple[str, ...] | None,
    settings: ContextSettings,
    limit: int = MAX_ITEMS,
) -> list[NoteRow]:
    """The memories nobody has reviewed for `settings.stale_days` or more, oldest first."""
    oldest = _listed(vault, Filter(scope=scope), "reviewed", limit)
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


def _listed(vault: VaultService, where: Filter, sort: str, limit: int) -> list[NoteRow]:
    """A section's first memories, uncounted: a count scans what the filter lets through,
    30 ms of a SessionStart hook's five lists at 10k notes."""
    return vault.list_memories(where, sort, limit, counted=False)[0]


def _first_line(vault: VaultService, path: str) -> str:
    """The memory's lead (see `lead`), read from the start of its file only (a 50 MB note
    cost a SessionStart hook 0.7 s read whole), or nothing for a file gone since the listing."""
    try:
        return lead(vault.head(path, HEAD_BYTES).memory.body)
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
