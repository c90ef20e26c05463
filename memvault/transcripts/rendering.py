"""A session memory's text from a session's digest: a summary line, the person's requests as
written, the facts (files, commands, errors and what followed), then the dialogue's head and
tail, all within a size cap that leaves the dialogue's middle out first and says what it left
out. Every piece is redacted of secrets before it is placed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memvault.core.secrets import redacted
from memvault.transcripts.digest import Digest, Kept, Trouble
from memvault.transcripts.events import Said
from memvault.transcripts.project import Project

MAX_BYTES = 64 * 1024
# Shares of the cap: the requests and the facts take what they need up to theirs, the
# dialogue gets the rest.
REQUEST_SHARE = 0.35
FACT_SHARE = 0.30
TITLE_WORDS = 60
MAX_LISTED = 100


@dataclass(frozen=True)
class SessionText:
    """What a captured session's memory is made of: its title, the text memvault keeps
    current, and the properties it sets."""

    title: str
    text: str
    properties: dict[str, Any]


def render(found: Digest, project: Project, cap: int = MAX_BYTES) -> SessionText:
    """The memory text of a session, within `cap` bytes of UTF-8."""
    summary = _summary(found, project)
    budget = cap - _size(summary) - 200
    requests = _fitted(
        "Requests",
        [_request(said) for said in _all(found.requests)],
        int(budget * REQUEST_SHARE),
        "requests",
    )
    facts = _fitted("What happened", _facts(found), int(budget * FACT_SHARE), "facts")
    rest = budget - _size(requests) - _size(facts)
    dialogue = _fitted(
        "Dialogue",
        [_turn(said) for said in _all(found.dialogue)],
        rest,
        "turns",
        found.dialogue.dropped,
    )
    text = "\n".join(part for part in (summary, requests, facts, dialogue) if part)
    return SessionText(_title(found, project), text, _properties(found, project))


def _summary(found: Digest, project: Project) -> str:
    where = project.name + (
        f" (branch {found.branch or project.branch})" if found.branch or project.branch else ""
    )
    span = (
        f"{_when(found.started)} to {_when(found.ended)}" if found.started else "time not recorded"
    )
    calls = sum(found.tools.values())
    counts = f"{_count(len(found.requests), 'request')}, {_count(calls, 'tool call')}"
    return redacted(f"Session in {where}, {span}: {counts}.\n")


def _facts(found: Digest) -> list[str]:
    lines: list[str] = []
    for kind in ("created", "edited", "deleted", "read"):
        paths = list(found.files[kind])
        if paths:
            shown = ", ".join(f"`{path}`" for path in paths[:MAX_LISTED])
            more = f" and {len(paths) - MAX_LISTED} more" if len(paths) > MAX_LISTED else ""
            lines.append(f"- Files {kind}: {shown}{more}")
    head, dropped, tail = found.commands.kept()
    if head:
        more = f" ({dropped} more not listed)" if dropped else ""
        ran = "; ".join(f"`{line}`" for line in (*head, *tail))
        lines.append(f"- Commands that ran{more}: {ran}")
    lines += [f"- Failed: {_trouble(trouble)}" for trouble in _all(found.troubles)]
    if found.tools:
        lines.append(
            "- Tools used: "
            + ", ".join(f"{name} ({count})" for name, count in found.tools.most_common())
        )
    return lines


def _trouble(trouble: Trouble) -> str:
    errors = " / ".join(trouble.errors) or "failed"
    followed = f" Then: {trouble.next}" if trouble.next else ""
    return f"`{trouble.what}`: {errors}.{followed}"


def _request(said: Said) -> str:
    lines = said.text.strip().splitlines() or [""]
    quoted = "\n".join(f"  {line}" if n else line for n, line in enumerate(lines))
    return f"- ({_when(said.at)}) {quoted}"


def _turn(said: Said) -> str:
    who = "Person" if said.role == "user" else "Assistant"
    return f"**{who}** ({_when(said.at)[11:] or '?'}): " + " ".join(said.text.split())


def _fitted(heading: str, lines: Sequence[str], budget: int, noun: str, dropped: int = 0) -> str:
    """A section of `lines` within `budget` bytes: its first and last lines, taken in turn,
    and a line saying how many were left out (with `dropped` ones the digest never kept)."""
    if not lines:
        return ""
    lines = [redacted(line) for line in lines]
    head: list[str] = []
    tail: list[str] = []
    used = _size(heading) + 80
    for n in range(len(lines)):
        line = lines[n // 2] if n % 2 == 0 else lines[-1 - n // 2]
        if used + _size(line) + 1 > budget:
            break
        used += _size(line) + 1
        (head if n % 2 == 0 else tail).append(line)
    left_out = len(lines) - len(head) - len(tail) + dropped
    middle = (
        [f"- … {left_out} {noun} left out to keep this memory under {MAX_BYTES // 1024} KB …"]
        if left_out
        else []
    )
    return f"## {heading}\n" + "\n".join([*head, *middle, *reversed(tail)]) + "\n"


def _all(kept: Kept[Any]) -> list[Any]:
    head, _, tail = kept.kept()
    return [*head, *tail]


def _title(found: Digest, project: Project) -> str:
    day = (found.started or "")[:10] or "undated"
    first = next(iter(found.requests.head), None)
    words = " ".join(first.text.split()) if first else (found.session_id or "")[:8]
    words = redacted(words)
    if len(words) > TITLE_WORDS:
        words = words[: TITLE_WORDS - 1].rstrip() + "…"
    return f"Session {day} {project.name}: {words}" if words else f"Session {day} {project.name}"


def _properties(found: Digest, project: Project) -> dict[str, Any]:
    return {
        "session_id": found.session_id,
        "cwd": redacted(found.cwd or project.root),
        "repository": project.name if project.repository else None,
        "branch": found.branch or project.branch,
        "files_modified": [redacted(path) for path in found.modified[:MAX_LISTED]],
        "tools_used": [name for name, _ in found.tools.most_common()],
        "started": found.started,
        "ended": found.ended,
    }


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _when(at: str | None) -> str:
    """A timestamp as `YYYY-MM-DD HH:MM` (UTC as the transcript gives it)."""
    return at[:16].replace("T", " ") if at else "?"


def _size(text: str) -> int:
    return len(text.encode("utf-8"))
