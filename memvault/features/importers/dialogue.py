"""Conversations read from an app's export, each as a memory: who said what, when, readable in
Obsidian, within 64 KB (sizes.py), with the properties that name its source and its id there."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from memvault.features.importers.records import (
    Entry,
    Parsed,
    Skip,
    one_line,
    source_time,
    text_of,
)
from memvault.features.importers.sizes import MAX_BYTES, closed, fitted

CATEGORY = "conversation"
# A title made from the first request when the source gives none.
_TITLE_LENGTH = 80


@dataclass(frozen=True)
class Turn:
    """One message: who said it (`User`, or the assistant's name), its text, and when (ISO)."""

    speaker: str
    text: str
    at: str | None = None


@dataclass(frozen=True)
class Source:
    """How an app's export holds its conversations: the format's name, the app's, the keys
    of a conversation's id (the first present wins), title and times, and how to get its
    messages shown, oldest first (or why it has none to give)."""

    format: str
    app: str
    ids: tuple[str, ...]
    title: str
    times: tuple[str, str]
    turns: Callable[[Mapping[str, Any]], list[Turn] | str]


def read(source: Source, data: list[Any]) -> Parsed:
    """A memory for each conversation with at least one message, a Skip for the others."""
    items = enumerate(data, 1)
    return Parsed(source.format, [_conversation(source, n, item) for n, item in items])


def _conversation(source: Source, number: int, item: object) -> Entry | Skip:
    where = f"conversation {number}"
    if not isinstance(item, dict):
        return Skip(where, f"a {type(item).__name__}, not a conversation object")
    key = next((text_of(item.get(k)).strip() for k in source.ids if text_of(item.get(k))), "")
    if not key:
        return Skip(where, f"it has no {' or '.join(source.ids)}")
    where = f"{where} ({key})"
    turns = source.turns(item)
    if isinstance(turns, str):
        return Skip(where, turns)
    if not turns:
        return Skip(where, "it has no message with text")
    created, updated = (source_time(item.get(k)) for k in source.times)
    return _entry(source, key, where, text_of(item.get(source.title)), (created, updated), turns)


def _entry(
    source: Source,
    key: str,
    where: str,
    title: str,
    times: tuple[str | None, str | None],
    turns: list[Turn],
) -> Entry:
    """The memory of a conversation: a line saying where it comes from, how many messages
    and when, then each message under a heading naming its speaker and time; the first and
    last messages kept when it is over 64 KB. With no title, its first request is one."""
    created = times[0] or turns[0].at
    updated = times[1] or turns[-1].at or created
    span = _span(created, updated)
    head = f"A conversation in {source.app}, {len(turns):,} message"
    head += f"{'s' if len(turns) != 1 else ''}, {span}.\n\n" if span else ".\n\n"
    first_request = next((t.text for t in turns if t.speaker == "User"), "")
    title = " ".join(title.split()) or one_line(first_request, _TITLE_LENGTH)
    return Entry(
        source_id=key,
        where=where,
        title=title or "Untitled conversation",
        body=fitted(head, [_block(turn) for turn in turns], "message", MAX_BYTES),
        category=CATEGORY,
        created_at=created,
        updated_at=updated,
        properties={"source": source.format, "source_id": key, "messages": len(turns)},
    )


def _block(turn: Turn) -> str:
    """A message: a heading with its speaker and time, then its text."""
    when = f" · {_shown(turn.at)}" if turn.at else ""
    return f"### {turn.speaker}{when}\n\n{closed(turn.text.strip())}"


def _span(start: str | None, end: str | None) -> str:
    """When a conversation ran, as a reader says it: `on 2024-05-01 12:34 UTC`, or `from
    ... to ...`."""
    if start is None:
        return ""
    if end is None or _shown(end) == _shown(start):
        return f"on {_shown(start)} UTC"
    return f"from {_shown(start)} to {_shown(end)} UTC"


def _shown(stamp: str) -> str:
    """2024-05-01T12:34:56Z as 2024-05-01 12:34."""
    return stamp[:16].replace("T", " ")
