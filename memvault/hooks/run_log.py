"""One line per hook run and per capture, so that a hook that fails never fails silently:
`$XDG_STATE_HOME/memvault/hooks.jsonl` (~/.local/state when unset), read by `hooks status`.
Lines are appended whole (one write each); the file is cut to its last lines past a size."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from memvault.core import clock

MAX_BYTES = 512 * 1024
KEEP_LINES = 2000


@dataclass(frozen=True)
class Run:
    """A hook run or a capture: when, which event, for which vault and session, how it ended
    (`ok`, `queued`, `skipped` or `error`) with a detail line, and how long it took."""

    at: str
    event: str
    vault: str
    outcome: str
    detail: str = ""
    session_id: str = ""
    seconds: float = 0.0


def log_path() -> Path:
    """Where the runs are logged."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "memvault" / "hooks.jsonl"


def record(
    event: str,
    vault: Path,
    outcome: str,
    detail: str = "",
    session_id: str = "",
    started: float | None = None,
) -> None:
    """Append a run's line (never raising: a log that cannot be written must not fail the
    client's session)."""
    seconds = round(time.monotonic() - started, 3) if started is not None else 0.0
    run = Run(
        clock.now_iso(),
        event,
        str(vault),
        outcome,
        " ".join(detail.split())[:500],
        session_id,
        seconds,
    )
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(run), ensure_ascii=False) + "\n")
        if path.stat().st_size > MAX_BYTES:
            _shorten(path)
    except OSError:
        return


def runs(vault: Path | None = None) -> list[Run]:
    """The logged runs, oldest first (of one vault when given)."""
    try:
        lines = log_path().read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        try:
            run = Run(**json.loads(line))
        except (ValueError, TypeError):
            continue
        if vault is None or run.vault == str(vault):
            found.append(run)
    return found


def last_runs(vault: Path | None = None) -> dict[str, Run]:
    """The last run of each event."""
    return {run.event: run for run in runs(vault)}


def _shorten(path: Path) -> None:
    """Keep the last lines only (written aside and renamed over, so a reader never sees half)."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text("".join(lines[-KEEP_LINES:]), encoding="utf-8")
    os.replace(temp, path)
