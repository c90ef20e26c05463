"""Session notes: a dated memory of what a session did, linked both ways to what it names."""

from __future__ import annotations

import re

from . import clock
from .errors import Invalid, NotFound
from .markdown import find_links
from .model import Memory
from .records import SessionNotes
from .vault import VaultService

SESSION_CATEGORY = "session"
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


def save_session_notes(
    vault: VaultService,
    summary: str,
    highlights: list[str] | None = None,
    next_steps: list[str] | None = None,
    decisions: list[str] | None = None,
    scope: str | None = None,
) -> SessionNotes:
    """Write `Session <date time>` in the session category and link it with every memory the
    notes name, by [[wikilink]] or by id."""
    if not summary or not summary.strip():
        raise Invalid("summary is empty; say in a few lines what the session did")
    parts = [f"## Summary\n{summary.strip()}\n"]
    for heading, items in (
        ("Highlights", highlights),
        ("Decisions", decisions),
        ("Next steps", next_steps),
    ):
        if items:
            parts.append(f"## {heading}\n" + "".join(f"- {item.strip()}\n" for item in items))
    body = "\n".join(parts)
    local = clock.now().astimezone()
    title = f"Session {local.strftime('%Y-%m-%d %H:%M')}"
    memory = vault.create(title, body, ["session"], SESSION_CATEGORY, scope, allow_duplicate=True)
    linked: list[Memory] = []
    unresolved: list[str] = []
    for name in _named(body):
        try:
            change = vault.link(memory.id, name)
        except NotFound:
            unresolved.append(name)
            continue
        except Invalid:
            continue
        if change.target.id not in {m.id for m in linked}:
            linked.append(change.target)
    return SessionNotes(vault.get(memory.id), linked, unresolved)


def _named(body: str) -> list[str]:
    """What the notes name: wikilink targets and memory ids, in order, once each."""
    names = [link.target for link in find_links(body) if not link.is_attachment]
    names += _UUID.findall(body)
    return list(dict.fromkeys(names))
