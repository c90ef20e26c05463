"""Session notes: a dated memory of what a session did, linked both ways to what it names."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from memvault.core import clock
from memvault.core.drafts import Draft, WriteOptions
from memvault.core.markdown import find_links
from memvault.core.memory import Memory
from memvault.core.records import SessionNotes
from memvault.core.secrets import SecretPolicy, screened, screened_fields
from memvault.errors import Invalid, NotFound
from memvault.service.vault import VaultService

SESSION_CATEGORY = "session"
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


@dataclass(frozen=True)
class SessionFields:
    """What a session's notes hold: the summary, lists under their headings, and free
    properties (flow, tone, ...) kept as frontmatter keys."""

    summary: str
    highlights: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)
    properties: dict[str, Any] = field(default_factory=dict)

    def screened(self, secrets: SecretPolicy) -> SessionFields:
        """These notes with each field screened for secrets, so a refusal names the field
        and its line (secret_scan.screened)."""

        def items(name: str, values: list[str]) -> list[str]:
            """A list's items, each screened."""
            return [
                screened(value, secrets, f"{name} item {n}") for n, value in enumerate(values, 1)
            ]

        return SessionFields(
            screened(self.summary, secrets, "the summary"),
            items("highlights", self.highlights),
            items("decisions", self.decisions),
            items("next_steps", self.next_steps),
            items("open_questions", self.open_questions),
            screened_fields(self.properties, secrets),
        )

    def body(self) -> str:
        """The markdown body: the summary, then each list that has items under its heading."""
        parts = [f"## Summary\n{self.summary.strip()}\n"]
        for heading, items in (
            ("Highlights", self.highlights),
            ("Decisions", self.decisions),
            ("Next steps", self.next_steps),
            ("Open questions", self.open_questions),
        ):
            if items:
                parts.append(f"## {heading}\n" + "".join(f"- {item.strip()}\n" for item in items))
        return "\n".join(parts)


def save_session_notes(
    vault: VaultService,
    notes: SessionFields,
    scope: str | None = None,
    secrets: SecretPolicy = "refuse",
    agent: str | None = None,
) -> SessionNotes:
    """Write `Session <date time>` in the session category and link it with every memory the
    notes name, by [[wikilink]] or by id; `agent` is recorded as who wrote the notes and
    changed the memories linked."""
    if not notes.summary or not notes.summary.strip():
        raise Invalid("summary is empty; say in a few lines what the session did")
    notes = notes.screened(secrets)
    local = clock.now().astimezone()
    title = f"Session {local.strftime('%Y-%m-%d %H:%M')}"
    draft = Draft(
        title, notes.body(), ["session"], SESSION_CATEGORY, scope, properties=notes.properties
    )
    memory = vault.create(draft, WriteOptions(agent, allow_duplicate=True, secrets=secrets))
    body = memory.body
    linked: list[Memory] = []
    unresolved: list[str] = []
    for name in _named(body):
        try:
            change = vault.link(memory.id, name, agent=agent)
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
