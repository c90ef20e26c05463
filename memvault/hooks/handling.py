"""What each hook event does. SessionStart prints the project's briefing as the client's
additional context; PreCompact, Stop and SessionEnd queue a capture of the transcript for the
vault's worker and return at once. A hook never fails the client's session: whatever goes
wrong is one line in the run log, the exit is 0, and nothing but the context reaches stdout."""

from __future__ import annotations

import fnmatch
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memvault.config import ContextSettings, Settings
from memvault.errors import Invalid, NotFound
from memvault.features.briefing import build_briefing
from memvault.features.session_capture import session_memory
from memvault.hooks import run_log
from memvault.hooks.capture_queue import Job, enqueue, start_worker
from memvault.policies import load_policies
from memvault.service.vault import VaultService
from memvault.transcripts.project import project_of

BRIEFING = "SessionStart"
CAPTURES = ("PreCompact", "Stop", "SessionEnd")
DEFAULT_BUDGET = 1500


@dataclass(frozen=True)
class HookSetup:
    """How the hooks were installed: the vault, the scope (None: the project's), the
    briefing's token budget, the folders never captured, the briefing's settings, and the
    index and model the hook was given (None: the defaults), which its worker uses too."""

    vault: Path
    scope: str | None = None
    budget: int = DEFAULT_BUDGET
    exclude: tuple[str, ...] = ()
    context: ContextSettings = field(default_factory=ContextSettings)
    index_path: Path | None = None
    embed_model: str | None = None

    def start_worker(self, sync: bool = False) -> bool:
        """Start the vault's worker (unless one runs) on this index and model."""
        given = {
            "MEMVAULT_INDEX_PATH": str(self.index_path) if self.index_path else "",
            "MEMVAULT_EMBED_MODEL": self.embed_model or "",
        }
        state_dir = Settings(vault=self.vault).state_dir
        return start_worker(self.vault, state_dir, sync, {k: v for k, v in given.items() if v})


def vault_settings(vault: Path, embed_model: str | None = None) -> Settings:
    """The settings a hook or the worker opens a vault with: the index path and model from
    the environment, as the CLI reads them, and the vault's policies."""
    settings = Settings(
        vault=vault,
        index_path=Path(os.environ["MEMVAULT_INDEX_PATH"])
        if os.environ.get("MEMVAULT_INDEX_PATH")
        else None,
        embed_model=embed_model or os.environ.get("MEMVAULT_EMBED_MODEL") or None,
    )
    return replace(settings, policies=load_policies(settings.state_dir))


def run_hook(event: str, stdin: str, setup: HookSetup, opened: Callable[[], VaultService]) -> str:
    """Do what `event` asks with the client's JSON `stdin`; what to print (the briefing's
    context for SessionStart, else nothing). Never raises."""
    started = time.monotonic()
    session = ""
    try:
        payload = _payload(stdin)
        session = str(payload.get("session_id") or "")
        if event == BRIEFING:
            output, detail = _brief(payload, setup, opened)
            run_log.record(event, setup.vault, "ok", detail, session, started)
            return output
        if event in CAPTURES:
            outcome, detail = _queue(event, payload, setup)
            run_log.record(event, setup.vault, outcome, detail, session, started)
            return ""
        run_log.record(
            event, setup.vault, "skipped", "memvault does nothing on this event", session, started
        )
    except Exception as exc:
        run_log.record(
            event, setup.vault, "error", f"{type(exc).__name__}: {exc}", session, started
        )
    return ""


def _payload(stdin: str) -> dict[str, Any]:
    try:
        payload = json.loads(stdin) if stdin.strip() else {}
    except ValueError as exc:
        raise Invalid(f"the hook's input is not JSON ({exc})") from exc
    if not isinstance(payload, dict):
        raise Invalid("the hook's input is not a JSON object")
    return payload


def _brief(
    payload: dict[str, Any], setup: HookSetup, opened: Callable[[], VaultService]
) -> tuple[str, str]:
    """The briefing of the session's project, as Claude Code's additional context. It reads
    the index as it is (a server keeps it current; otherwise the last capture did) and starts
    the vault's worker to sync it, so that the session is not kept waiting for a walk of the
    vault: what a person changed with no memvault running shows from the next session on."""
    scope = setup.scope or project_of(_cwd(payload)).name
    vault = opened()
    if not vault.upkeep.built:
        vault.close()
        setup.start_worker(sync=True)
        return "", "no briefing: the vault's index is new; the worker is building it"
    try:
        briefing = build_briefing(vault, scope, setup.budget, setup.context)
        text = briefing.text
        earlier = (
            session_memory(vault, str(payload.get("session_id") or ""))
            if payload.get("source") in ("resume", "compact")
            else None
        )
        if earlier is not None:
            text += f"\nThis session so far is captured as {earlier.title!r} (id {earlier.id}).\n"
    finally:
        vault.close()
    setup.start_worker(sync=True)
    context = {"hookEventName": BRIEFING, "additionalContext": text}
    detail = (
        f"briefed scope {scope}: {len(briefing.items)} memories, about {briefing.tokens} tokens"
    )
    return json.dumps({"hookSpecificOutput": context}, ensure_ascii=False), detail


def _queue(event: str, payload: dict[str, Any], setup: HookSetup) -> tuple[str, str]:
    """Queue a capture of the session's transcript, and start the vault's worker if none runs."""
    cwd = _cwd(payload)
    if excluded(cwd, setup.exclude):
        return "skipped", f"{cwd} is excluded from capture"
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str) or not transcript:
        raise Invalid("the hook's input has no transcript_path")
    if not setup.vault.expanduser().is_dir():
        raise NotFound(f"the vault {setup.vault} does not exist")
    session = str(payload.get("session_id") or Path(transcript).stem)
    enqueue(
        Settings(vault=setup.vault).state_dir,
        Job(transcript, "claude-code", session, setup.scope, event),
    )
    started = setup.start_worker()
    return (
        "queued",
        "capture queued, worker started" if started else "capture queued for the running worker",
    )


def excluded(cwd: str, patterns: tuple[str, ...]) -> bool:
    """Whether `cwd` or a folder holding it matches one of the `--exclude` globs."""
    folder = Path(cwd).expanduser()
    globs = [os.path.expanduser(pattern) for pattern in patterns]
    return any(
        fnmatch.fnmatch(str(place), glob) for place in (folder, *folder.parents) for glob in globs
    )


def _cwd(payload: dict[str, Any]) -> str:
    cwd = payload.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else os.getcwd()
