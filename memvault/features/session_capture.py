"""Captured sessions: one memory per session id, kept current from the session's transcript.

The text memvault derives from the transcript lies between two marks; a person's notes, the
`## Related` list and everything else outside them are theirs and survive every capture.
Capturing the same transcript again changes nothing; a longer one replaces only what lies
between the marks. No LLM is involved and nothing leaves the machine."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.core.memory import Memory
from memvault.core.records import Filter
from memvault.errors import Conflict, Invalid, NotFound
from memvault.service.vault import VaultService
from memvault.transcripts.digest import Digest, digest
from memvault.transcripts.project import Project, project_of
from memvault.transcripts.reading import read_events
from memvault.transcripts.rendering import SessionText, render

SESSION_CATEGORY = "session"
START = "<!-- memvault:session start: written from the transcript at each capture -->"
END = "<!-- memvault:session end: notes below this line are kept -->"
CAPTURE_AGENT = "memvault capture"
Outcome = Literal["created", "updated", "unchanged", "left alone", "empty"]


@dataclass(frozen=True)
class Captured:
    """What a capture did: the session's memory (None when there was nothing to capture),
    the outcome, the transcript lines that were not JSON, and a note on anything left alone."""

    memory: Memory | None
    outcome: Outcome
    skipped_lines: int = 0
    note: str = ""


def capture_transcript(
    vault: VaultService,
    path: Path,
    fmt: str,
    scope: str | None = None,
    session_id: str | None = None,
    agent: str = CAPTURE_AGENT,
    dry_run: bool = False,
) -> Captured:
    """Capture the transcript at `path` (written in `fmt`) into its session's memory, in
    `scope` (default: the project the session worked in); a `dry_run` says what it would do
    and writes nothing."""
    events, lines = read_events(path, fmt)
    found = digest(events)
    found.session_id = session_id or found.session_id or Path(path).stem
    if not found.turns:
        return Captured(None, "empty", lines.skipped, "the transcript holds no dialogue yet")
    project = project_of(found.cwd) if found.cwd else Project(Path(path).parent.name, "")
    text = render(found, project)
    saved = save_session(vault, found, text, scope or project.name, agent, dry_run)
    return Captured(saved.memory, saved.outcome, lines.skipped, saved.note)


def save_session(
    vault: VaultService,
    found: Digest,
    text: SessionText,
    scope: str,
    agent: str,
    dry_run: bool = False,
) -> Captured:
    """Create or bring up to date the memory of session `found.session_id`, dated by the
    session (made when it began, updated when it last spoke), then link it with the memories
    the session read or wrote through memvault."""
    region = f"{START}\n{text.text.rstrip()}\n\n{END}\n"
    options = WriteOptions(agent, allow_duplicate=True, secrets="redact", at=found.ended)
    existing = session_memory(vault, found.session_id or "")
    if existing is None:
        if dry_run:
            return Captured(None, "created")
        draft = Draft(
            text.title,
            region,
            ("session",),
            SESSION_CATEGORY,
            scope,
            properties=text.properties,
            created_at=found.started,
        )
        result = Captured(vault.create(draft, options), "created")
    else:
        if (existing.updated_at or "") > (found.ended or ""):
            options = replace(options, at=None)  # edited since the session: not back in time
        result = _refresh(vault, existing, region, text, options, dry_run)
    if (
        result.memory is not None
        and result.outcome not in ("left alone", "unchanged")
        and not dry_run
    ):
        _link(vault, result.memory, found, agent)
    return result


def session_memory(vault: VaultService, session_id: str) -> Memory | None:
    """The memory captured for a session id, archived or not (None: not captured yet)."""
    where = Filter.of(where=(("session_id", session_id),), archived=None)
    rows, _ = vault.list_memories(where, "created", 1)
    return vault.get(rows[0].id) if rows else None


def _refresh(
    vault: VaultService,
    memory: Memory,
    region: str,
    text: SessionText,
    options: WriteOptions,
    dry_run: bool,
) -> Captured:
    """Replace what lies between the marks (by find and replace, so that a person's edit
    elsewhere, even one saved a moment ago, is kept) and the captured properties."""
    for _ in range(3):
        old = _region(memory.body)
        if old is None:
            note = "a person removed the capture marks, so this memory is theirs now"
            return Captured(memory, "left alone", note=note)
        properties = {k: v for k, v in text.properties.items() if memory.metadata.get(k) != v}
        if old == region and not properties:
            return Captured(memory, "unchanged")
        if dry_run:
            return Captured(memory, "updated")
        edit = None if old == region else BodyEdit(find=old, replace=region, expected_count=1)
        revision = Revision(edit=edit, properties=properties or None)
        try:
            return Captured(vault.update(memory.id, revision, options), "updated")
        except (Invalid, Conflict):
            memory = vault.get(memory.id)
    raise Conflict(f"{memory.path} kept changing while the session was captured; try again")


def _region(body: str) -> str | None:
    """The captured text between the marks, marks included (None when they are gone)."""
    start = body.find(START)
    end = body.find(END, start)
    if start < 0 or end < 0:
        return None
    stop = end + len(END)
    return body[start : stop + 1] if body[stop : stop + 1] == "\n" else body[start:stop]


def _link(vault: VaultService, memory: Memory, found: Digest, agent: str) -> None:
    """Link the session's memory with each memory it read or wrote (names that no longer
    resolve, or name several memories, are passed over)."""
    for name in found.memories:
        try:
            vault.link(memory.id, name, agent=agent)
        except (NotFound, Invalid, Conflict):
            continue
