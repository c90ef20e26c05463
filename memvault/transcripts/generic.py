"""A plain transcript: JSON lines of `{role, content, timestamp}` (roles `user`/`human` and
`assistant`/`ai`; content a string or a list of text blocks). Other roles are left out."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memvault.transcripts.events import Event, Role, Said, Where, moment, text_of

_ROLES: dict[str, Role] = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
}


def events(lines: Iterator[dict[str, Any]]) -> Iterator[Event]:
    """The events of a plain transcript's lines, in order."""
    for line in lines:
        at = moment(line.get("timestamp"))
        if isinstance(line.get("session_id"), str):
            yield Where(session_id=line["session_id"], at=at)
        role = _ROLES.get(str(line.get("role", "")).lower())
        text = text_of(line.get("content"))
        if role and text.strip():
            yield Said(role, text, at)
