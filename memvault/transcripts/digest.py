"""The facts a session leaves, gathered from its events without an LLM and in bounded memory
whatever the transcript's length: the person's requests, the dialogue's head and tail, the
files read, edited and created, the commands run (the failing ones with their error lines),
the errors met and what the assistant did next, the tools used, the memvault memories it read
or wrote, and the time span."""

from __future__ import annotations

import posixpath
import re
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from memvault.core import clock
from memvault.transcripts.events import Event, Said, ToolCall, ToolResult, Where

T = TypeVar("T")
# How many of each kind a digest keeps: the first ones and the last ones, the count of the rest.
KEEP_REQUESTS = 200
KEEP_TURNS = 60
KEEP_COMMANDS = 150
KEEP_ERRORS = 60
KEEP_FILES = 400
# Characters kept of one turn of the dialogue, one request, one error line.
TURN_CHARS = 700
REQUEST_CHARS = 4000
LINE_CHARS = 240
_ERROR_LINE = re.compile(
    r"error|fail|exception|traceback|denied|not found|cannot|fatal|panic|refused", re.IGNORECASE
)
_MEMVAULT_TOOLS = {"read_mem", "write_mem", "edit_mem", "link_mem", "verify_mem"}
_NAMING_ARGS = ("identifier", "id", "title", "source_id", "target_id")


class Kept(Generic[T]):
    """The first `limit` items and the last `limit`, and how many fell between."""

    def __init__(self, limit: int):
        self.head: list[T] = []
        self.tail: deque[T] = deque(maxlen=limit)
        self.limit = limit
        self.dropped = 0

    def add(self, item: T) -> None:
        if len(self.head) < self.limit:
            self.head.append(item)
            return
        if len(self.tail) == self.limit:
            self.dropped += 1
        self.tail.append(item)

    def kept(self) -> tuple[list[T], int, list[T]]:
        """The first items, how many fell between, the last items."""
        return self.head, self.dropped, list(self.tail)

    def __len__(self) -> int:
        return len(self.head) + len(self.tail) + self.dropped


@dataclass
class Trouble:
    """An error the session met (a failed tool call) and what the assistant said next."""

    what: str
    errors: list[str]
    next: str = ""


@dataclass
class Digest:
    """Everything a session memory is made of."""

    session_id: str | None = None
    cwd: str | None = None
    branch: str | None = None
    started: str | None = None
    ended: str | None = None
    requests: Kept[Said] = field(default_factory=lambda: Kept(KEEP_REQUESTS))
    dialogue: Kept[Said] = field(default_factory=lambda: Kept(KEEP_TURNS))
    commands: Kept[str] = field(default_factory=lambda: Kept(KEEP_COMMANDS))
    troubles: Kept[Trouble] = field(default_factory=lambda: Kept(KEEP_ERRORS))
    files: dict[str, dict[str, None]] = field(
        default_factory=lambda: {"created": {}, "edited": {}, "deleted": {}, "read": {}}
    )
    tools: Counter[str] = field(default_factory=Counter)
    memories: dict[str, None] = field(default_factory=dict)
    turns: int = 0

    @property
    def modified(self) -> list[str]:
        """Files created, edited or deleted, in the order first met."""
        found = {**self.files["created"], **self.files["edited"], **self.files["deleted"]}
        return list(found)


def digest(events: Iterable[Event]) -> Digest:
    """The digest of a session's events."""
    found = Digest()
    pending: dict[str, list[ToolCall]] = {}
    awaiting: list[Trouble] = []
    for event in events:
        if isinstance(event, Where):
            _place(found, event)
            continue
        _time(found, event.at)
        if isinstance(event, Said):
            _said(found, event, awaiting)
        elif isinstance(event, ToolCall):
            found.tools[_short_name(event.name)] += 1
            _memory(found, event)
            pending.setdefault(event.id, []).append(event)
        else:
            for call in pending.pop(event.id, []):
                _result(found, call, event, awaiting)
    for call in (call for calls in pending.values() for call in calls):
        if call.name == "Bash":
            found.commands.add(_one_line(str(call.input.get("command", ""))))
    return found


def _place(found: Digest, where: Where) -> None:
    found.session_id = found.session_id or where.session_id
    found.cwd = found.cwd or where.cwd
    found.branch = where.branch or found.branch
    _time(found, where.at)


def _time(found: Digest, at: str | None) -> None:
    """Widen the time span by a line's time (one that is no ISO 8601 time is passed over)."""
    moment = clock.parse(at) if at else None
    if moment is not None:
        found.started = found.started or clock.iso(moment)
        found.ended = clock.iso(moment)


def _said(found: Digest, said: Said, awaiting: list[Trouble]) -> None:
    found.turns += 1
    found.dialogue.add(Said(said.role, _cut(said.text, TURN_CHARS), said.at))
    if said.role == "user":
        found.requests.add(Said("user", _cut(said.text, REQUEST_CHARS), said.at))
        awaiting.clear()
    else:
        for trouble in awaiting:
            trouble.next = _cut(" ".join(said.text.split()), LINE_CHARS * 2)
        awaiting.clear()


def _result(found: Digest, call: ToolCall, result: ToolResult, awaiting: list[Trouble]) -> None:
    _files(found, call, result)
    if call.name == "Bash" and not result.failed:
        found.commands.add(_one_line(str(call.input.get("command", ""))))
    if result.failed:
        trouble = Trouble(_call_line(call), _error_lines(result.text))
        found.troubles.add(trouble)
        awaiting.append(trouble)


def _files(found: Digest, call: ToolCall, result: ToolResult | None) -> None:
    """Files named by a call: read by Read, edited by Edit, created by Write (updated when
    its result says so); a call that failed touched nothing."""
    path = call.input.get("file_path") or call.input.get("notebook_path")
    if not isinstance(path, str) or not path or result is None or result.failed:
        return
    kind = {"Read": "read", "Edit": "edited", "MultiEdit": "edited", "NotebookEdit": "edited"}.get(
        call.name
    )
    if call.name == "Write":
        updated = call.input.get("action") == "Update" or "updated" in result.text[:200]
        kind = "edited" if updated else "created"
    if call.input.get("action") == "Delete":
        kind = "deleted"
    if kind and len(found.files[kind]) < KEEP_FILES:
        found.files[kind][_relative(path, found.cwd)] = None


def _memory(found: Digest, call: ToolCall) -> None:
    """A memvault memory the session read or wrote, by the name its call gave."""
    if _short_name(call.name) not in _MEMVAULT_TOOLS or len(found.memories) >= KEEP_FILES:
        return
    for key in _NAMING_ARGS:
        value = call.input.get(key)
        if isinstance(value, str) and value.strip():
            found.memories[value.strip()] = None


def _short_name(name: str) -> str:
    """An MCP tool's own name: `mcp__memvault__read_mem` is `read_mem`."""
    return name.rsplit("__", 1)[-1] if name.startswith("mcp__") else name


def _call_line(call: ToolCall) -> str:
    """A call on one line: its tool and what it acted on."""
    for key in ("command", "file_path", "notebook_path", "pattern", "url", "query"):
        value = call.input.get(key)
        if isinstance(value, str) and value:
            return f"{_short_name(call.name)}: {_one_line(value)}"
    return _short_name(call.name)


def _error_lines(text: str) -> list[str]:
    """The lines of a failed call's output that say what went wrong (its last line when none
    does), at most three."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    found = [line for line in lines if _ERROR_LINE.search(line)][:3]
    return [_cut(line, LINE_CHARS) for line in (found or lines[-1:])]


def _relative(path: str, cwd: str | None) -> str:
    """A path shown from the session's folder when it lies inside it."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return posixpath.relpath(path, cwd)
    return path


def _one_line(text: str) -> str:
    return _cut(" ".join(text.split()), LINE_CHARS)


def _cut(text: str, limit: int) -> str:
    """`text` within `limit` characters, ending in an ellipsis when cut."""
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
