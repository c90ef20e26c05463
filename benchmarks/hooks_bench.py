"""Claude Code's hooks as the client runs them (issue 34): SessionStart's briefing on a big
vault, a Stop hook's return with a huge transcript, and the capture of 5 MB and 100 MB
transcripts. Each hook is a fresh process fed its JSON on stdin, as the client does; between
runs the background worker a hook starts is let finish, as it would between sessions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memvault.config import Settings
from memvault.hooks.capture_queue import worker_running

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from tests.transcript_fixtures import hook_input  # noqa: E402

SESSION_STARTS = 20
STOPS = 10


def transcript(megabytes: int) -> Path:
    """A Claude Code transcript of about `megabytes` MB (cached): a long session of requests,
    answers, file reads and commands, some failing."""
    path = HERE / ".cache" / f"transcript-{megabytes}mb.jsonl"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    size, n = 0, 0
    with temp.open("w") as handle:
        while size < megabytes * 1024 * 1024:
            n += 1
            stamp = f"2026-11-20T{(n // 3600) % 24:02d}:{(n // 60) % 60:02d}:{n % 60:02d}Z"
            base = {
                "sessionId": "bench-session",
                "cwd": "/work/shop",
                "gitBranch": "main",
                "timestamp": stamp,
            }
            lines = [
                {
                    **base,
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": f"Request {n}: tidy the invoice module part {n}",
                    },
                },
                {
                    **base,
                    "type": "assistant",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "text",
                                "text": f"Looking at part {n}. "
                                + "The module builds invoices from orders. " * 20,
                            },
                            {
                                "type": "tool_use",
                                "id": f"t{n}",
                                "name": "Read",
                                "input": {"file_path": f"/work/shop/src/invoice_{n % 50}.py"},
                            },
                        ],
                    },
                },
                {
                    **base,
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": f"t{n}",
                                "content": "def invoice(order):\n    ...\n" * 60,
                                "is_error": False,
                            },
                        ],
                    },
                },
                {
                    **base,
                    "type": "assistant",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": f"b{n}",
                                "name": "Bash",
                                "input": {"command": f"pytest tests/test_invoice_{n % 50}.py"},
                            },
                        ],
                    },
                },
                {
                    **base,
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": f"b{n}",
                                "content": "FAILED test_total - AssertionError"
                                if n % 7 == 0
                                else "3 passed",
                                "is_error": n % 7 == 0,
                            },
                        ],
                    },
                },
            ]
            text = "".join(json.dumps(line) + "\n" for line in lines)
            handle.write(text)
            size += len(text)
    os.replace(temp, path)
    return path


def _hook(command: list[str], stdin: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, input=stdin, text=True, capture_output=True, env=env, check=True)
    return time.perf_counter() - started


def _settle(vault: Path) -> None:
    """Wait for the vault's capture worker to finish (the gap between two sessions)."""
    state = Settings(vault=vault).state_dir
    time.sleep(0.2)
    while worker_running(state):
        time.sleep(0.05)


def session_starts(memvault: list[str], vault: Path) -> list[float]:
    """Seconds of each SessionStart hook run on the vault."""
    with tempfile.TemporaryDirectory() as state:
        env = {**os.environ, "XDG_STATE_HOME": state}
        stdin = hook_input("SessionStart", "/work/shop")
        times = []
        for _ in range(SESSION_STARTS):
            times.append(_hook([*memvault, "hook", "SessionStart"], stdin, env))
            _settle(vault)
        return times


def stop_returns(memvault: list[str], vault: Path, path: Path) -> list[float]:
    """Seconds each Stop hook takes to return with the transcript at `path`."""
    with tempfile.TemporaryDirectory() as state:
        env = {**os.environ, "XDG_STATE_HOME": state}
        times = []
        for n in range(STOPS):
            stdin = hook_input("Stop", "/work/shop", path, session_id=f"bench-stop-{n}")
            times.append(_hook([*memvault, "hook", "Stop"], stdin, env))
            _settle(vault)
        return times


def capture_seconds(memvault: list[str], path: Path, session: str) -> float:
    """Seconds `memvault capture` takes on the transcript at `path` (a new session)."""
    return _hook([*memvault, "capture", str(path), "--session-id", session], "", dict(os.environ))
