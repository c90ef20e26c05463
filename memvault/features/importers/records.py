"""What a source's reader gives the import: the memories it holds (`Entry`), the links
between them (`Relation`), and the entries it passes over (`Skip`: where, and why)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memvault.core import clock


@dataclass(frozen=True)
class Entry:
    """One memory from a source: `source_id` is its id there (the key a second import finds
    it by), `where` names it in a report (`conversation 3 (uuid ...)`), the times are the
    source's (ISO, UTC; None: unknown, so now), `properties` extra frontmatter keys."""

    source_id: str
    where: str
    title: str
    body: str
    category: str
    created_at: str | None = None
    updated_at: str | None = None
    properties: Mapping[str, Any] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        """A short hash of what the import writes: a second import of an entry whose digest
        the memory holds changes nothing."""
        held = [self.title, self.body, self.category, dict(self.properties)]
        text = json.dumps(held, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Relation:
    """A link the source holds from one entry to another (by their source ids), of a kind."""

    source_id: str
    target_id: str
    kind: str
    where: str


@dataclass(frozen=True)
class Skip:
    """An entry the import passes over (malformed, empty, a repeat): where it is in the file
    and why."""

    where: str
    reason: str


@dataclass
class Parsed:
    """Everything a reader found in one file of a source (`format`: its name)."""

    format: str
    entries: list[Entry | Skip] = field(default_factory=list)
    relations: list[Relation | Skip] = field(default_factory=list)


def fields(value: object) -> Mapping[str, Any]:
    """`value` when it is a JSON object, else an empty one: a reader asks it for keys
    without checking each level's type first."""
    return value if isinstance(value, dict) else {}


def listed(value: object) -> list[Any]:
    """`value` when it is a JSON list, else an empty one."""
    return value if isinstance(value, list) else []


def text_of(value: object) -> str:
    """`value` when it is a text, else an empty one."""
    return value if isinstance(value, str) else ""


def source_time(value: object) -> str | None:
    """A source's time as memvault writes times (2024-01-15T10:30:00Z): an ISO 8601 text or
    Unix seconds; None when absent or unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return clock.iso(dt.datetime.fromtimestamp(value, dt.UTC))
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        moment = clock.parse(value.strip())
        return None if moment is None else clock.iso(moment)
    return None


def one_line(text: str, limit: int) -> str:
    """`text` as a title: its first non-blank line, spaces collapsed, cut at `limit`
    characters with an ellipsis."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    words = " ".join(first.split())
    return words if len(words) <= limit else words[: limit - 1].rstrip() + "…"
