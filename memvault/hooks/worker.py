"""`python -m memvault.hooks.worker VAULT [--sync]`: the detached process that does a vault's
queued captures (capture_queue.py), at a low priority, logging each to the run log; with
`--sync` (started by SessionStart, which briefs from the index as it is) it first brings the
index up to date with the files, so the next briefing sees what a person changed meanwhile."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

from memvault.features.session_capture import capture_transcript
from memvault.hooks import run_log
from memvault.hooks.capture_queue import NICE, Job, work
from memvault.hooks.handling import vault_settings
from memvault.service.vault import VaultService

# Seconds of embedding the worker may spend so that a capture is found by meaning at once.
EMBED_BUDGET = 20.0


def main(vault_path: Path, sync: bool = False) -> int:
    """Do the vault's waiting captures (after a sync of the index if asked); how many."""
    settings = vault_settings(vault_path)
    with contextlib.suppress(AttributeError, OSError):
        os.nice(NICE)
    vault: VaultService | None = None

    def opened() -> VaultService:
        nonlocal vault
        vault = vault or VaultService.open(settings, start=True)
        return vault

    def synced() -> None:
        started = time.monotonic()
        try:
            opened()
        except Exception as exc:
            run_log.record("sync", vault_path, "error", f"{type(exc).__name__}: {exc}", "", started)

    def capture(job: Job) -> None:
        started = time.monotonic()
        try:
            vault = opened()
            done = capture_transcript(
                vault, Path(job.transcript), job.format, job.scope, job.session_id
            )
        except Exception as exc:
            run_log.record(
                "capture",
                vault_path,
                "error",
                f"{type(exc).__name__}: {exc}",
                job.session_id,
                started,
            )
            return
        where = done.memory.path if done.memory else ""
        detail = f"{done.outcome} {where} {done.note}".strip()
        if done.skipped_lines:
            detail += f"; {done.skipped_lines} transcript lines were not JSON"
        run_log.record("capture", vault_path, "ok", detail, job.session_id, started)

    try:
        return work(settings.state_dir, capture, synced if sync else None)
    finally:
        if vault is not None:
            vault.embed_if_quick(EMBED_BUDGET)
            vault.close()


if __name__ == "__main__":
    sys.exit(0 if main(Path(sys.argv[1]), "--sync" in sys.argv[2:]) >= 0 else 1)
