"""Captures handed from a hook to one detached worker per vault, so that a hook returns at
once whatever the transcript's size.

A hook writes a job file (one per session: a newer job of a session replaces the one waiting,
which merges the captures of a session that is still going) and starts the worker unless one
holds the vault's capture lock. The worker takes jobs until none is left; a job file goes
only once its capture is written, and only if no newer job replaced it meanwhile, so a worker
killed mid-capture loses nothing: the next one does the job again (a capture is idempotent).
The lock dies with its process, so workers never pile up: a second one exits at once."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from filelock import FileLock, Timeout

QUEUE_FOLDER = "captures"
LOCK_FILE = "capture.lock"
# The worker runs below the client and the server: captures can wait.
NICE = 10


@dataclass(frozen=True)
class Job:
    """A capture to do: the transcript, its format, the session, the scope it goes to (None:
    the project's), and the event that asked for it."""

    transcript: str
    format: str
    session_id: str
    scope: str | None
    event: str


def queue_folder(state_dir: Path) -> Path:
    """Where a vault's waiting captures are kept."""
    return state_dir / QUEUE_FOLDER


def enqueue(state_dir: Path, job: Job) -> Path:
    """Write `job` (replacing a job of the same session that still waits)."""
    folder = queue_folder(state_dir)
    folder.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(job.session_id.encode()).hexdigest()[:24]
    path = folder / f"{name}.json"
    temp = folder / f".{name}.{os.getpid()}.tmp"
    temp.write_text(json.dumps(asdict(job)), encoding="utf-8")
    os.replace(temp, path)
    return path


def worker_running(state_dir: Path) -> bool:
    """Whether a worker holds the vault's capture lock now."""
    lock = FileLock(state_dir / LOCK_FILE, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        return True
    lock.release()
    return False


def start_worker(
    vault: Path, state_dir: Path, sync: bool = False, settings: dict[str, str] | None = None
) -> bool:
    """Start a detached worker for the vault unless one runs; whether one was started. It
    outlives the hook (its own session, no terminal, nothing inherited on stdout); with
    `sync` it first brings the index up to date with the files. `settings` are environment
    variables the worker reads as the CLI does (the hook's --index-path, --embed-model)."""
    if worker_running(state_dir):
        return False
    command = [
        sys.executable,
        "-m",
        "memvault.hooks.worker",
        str(vault),
        *(["--sync"] if sync else []),
    ]
    subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        env={**os.environ, **(settings or {})},
    )
    return True


def work(
    state_dir: Path, capture: Callable[[Job], None], first: Callable[[], None] | None = None
) -> int:
    """Run `first`, then do every waiting job, while holding the vault's capture lock
    (nothing when another worker holds it); how many jobs were done. A job that fails is
    logged by `capture` and dropped: the next capture of that session tries again."""
    done = 0
    while True:
        lock = FileLock(state_dir / LOCK_FILE, timeout=0)
        try:
            lock.acquire()
        except Timeout:
            return done
        try:
            if first is not None:
                first()
                first = None
            for path, raw in _waiting(state_dir):
                try:
                    capture(Job(**json.loads(raw)))
                finally:
                    _finish(path, raw)
                done += 1
        finally:
            lock.release()
        # A hook may have queued a job after the last look and before the release, seen the
        # lock held and left it to this worker: look once more.
        if not any(_waiting(state_dir)):
            return done


def _waiting(state_dir: Path) -> Iterator[tuple[Path, str]]:
    """The waiting jobs, oldest first, with their text as read."""
    folder = queue_folder(state_dir)
    try:
        paths = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
    except OSError:
        return
    for path in paths:
        try:
            yield path, path.read_text(encoding="utf-8")
        except OSError:
            continue


def _finish(path: Path, raw: str) -> None:
    """Remove a done job's file, unless a newer job of the session replaced it meanwhile."""
    try:
        if path.read_text(encoding="utf-8") == raw:
            path.unlink()
    except OSError:
        return
