"""A folder of session transcripts imported as captured sessions (a backfill): Claude Code's
`~/.claude/projects/` or Codex CLI's `~/.codex/sessions/`, every `.jsonl` under it captured
as the hooks capture a session (features/session_capture.py), dated by the session, found
again by its session id: a second import adds nothing. A subagent's own transcript is not a
session of its own and is passed over."""

from __future__ import annotations

import json
from pathlib import Path

from memvault.core.reports import SourceImport
from memvault.errors import Invalid, MemvaultError
from memvault.features.importers import TRANSCRIPT_FORMATS
from memvault.features.importers.run import Run
from memvault.features.session_capture import CAPTURE_AGENT, capture_transcript
from memvault.service.vault import VaultService


def transcript_files(folder: Path) -> list[Path]:
    """The transcripts under `folder`, oldest first (a subagent's are left out)."""
    found = [p for p in folder.rglob("*.jsonl") if "subagents" not in p.relative_to(folder).parts]
    return sorted(found, key=lambda p: (p.stat().st_mtime, str(p)))


def sniffed_transcripts(files: list[Path]) -> str:
    """Which client wrote the transcripts: Claude Code's lines carry `sessionId`, Codex's a
    `payload` (or, in older files, a first line with the session's `id`)."""
    for path in files[:20]:
        with path.open("rb") as handle:
            for line in handle:
                try:
                    item = json.loads(line)
                except ValueError:
                    continue
                if isinstance(item, dict) and "sessionId" in item:
                    return "claude-code"
                if isinstance(item, dict) and ("payload" in item or "instructions" in item):
                    return "codex"
    raise Invalid(
        "no Claude Code or Codex transcript found in this folder; name the format with "
        f"--format ({', '.join(TRANSCRIPT_FORMATS)})"
    )


def import_transcripts(vault: VaultService, folder: Path, fmt: str, run: Run) -> SourceImport:
    """Capture every transcript under `folder` (see the module's docstring)."""
    files = transcript_files(folder)
    report = SourceImport(f"{fmt} transcripts", run.dry_run)
    for done, path in enumerate(files, 1):
        if run.stop():
            report.interrupted = True
            break
        where = str(path.relative_to(folder))
        try:
            captured = capture_transcript(
                vault, path, fmt, agent=run.agent or CAPTURE_AGENT, dry_run=run.dry_run
            )
        except MemvaultError as exc:
            report.skipped.append({"entry": where, "reason": exc.in_words("cli")})
            continue
        if captured.outcome == "created":
            report.added += 1
        elif captured.outcome == "updated":
            report.updated += 1
        elif captured.outcome == "unchanged":
            report.unchanged += 1
        else:
            report.skipped.append({"entry": where, "reason": captured.note})
        if run.progress is not None:
            run.progress(done, len(files))
    return report
