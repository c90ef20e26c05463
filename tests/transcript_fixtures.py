"""Synthetic transcripts in the clients' published formats, made by the tests (no real
person's data): Claude Code's session JSONL, Codex CLI's rollout JSONL, a plain JSONL, and the
hook events Claude Code sends on stdin."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SESSION = "5d3c2b1a-0f9e-4d8c-b7a6-112233445566"


@dataclass
class ClaudeTranscript:
    """A Claude Code transcript being written turn by turn, as the client does."""

    path: Path
    cwd: str
    session_id: str = SESSION
    branch: str = "main"
    minute: int = 0
    lines: list[dict[str, Any]] = field(default_factory=list)
    calls: int = 0

    def _line(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        self.minute += 1
        self.lines.append(
            {
                "type": kind,
                "uuid": f"u{len(self.lines)}",
                "parentUuid": f"u{len(self.lines) - 1}" if self.lines else None,
                "sessionId": self.session_id,
                "cwd": self.cwd,
                "gitBranch": self.branch,
                "version": "2.1.12",
                "isSidechain": False,
                "userType": "external",
                "timestamp": f"2026-11-20T{10 + self.minute // 3600:02d}:"
                f"{self.minute // 60 % 60:02d}:{self.minute % 60:02d}.000Z",
                "message": message,
                **extra,
            }
        )

    def user(self, text: str) -> ClaudeTranscript:
        self._line("user", {"role": "user", "content": text})
        return self

    def say(self, text: str) -> ClaudeTranscript:
        self._line("assistant", {"role": "assistant", "content": [{"type": "text", "text": text}]})
        return self

    def tool(
        self, name: str, arguments: dict[str, Any], result: str, error: bool = False
    ) -> ClaudeTranscript:
        self.calls += 1
        call_id = f"toolu_{self.calls:04d}"
        use = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
        self._line("assistant", {"role": "assistant", "content": [use]})
        block = {
            "type": "tool_result",
            "tool_use_id": call_id,
            "content": result,
            "is_error": error,
        }
        self._line("user", {"role": "user", "content": [block]})
        return self

    def write(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        return self.path


def flaky_login_session(path: Path, cwd: str) -> ClaudeTranscript:
    """A session that fixes a flaky login test: a failing command, edits, a fix."""
    return (
        ClaudeTranscript(path, cwd)
        .user("The login test fails about one run in five on CI, can you find out why?")
        .tool("Read", {"file_path": f"{cwd}/tests/test_login.py"}, "def test_login(): ...")
        .tool(
            "Bash",
            {"command": "pytest tests/test_login.py -x"},
            "FAILED tests/test_login.py::test_login - TimeoutError: session cookie not set\n"
            "1 failed in 2.31s",
            error=True,
        )
        .say("The test races the cookie write: it reads the session before the server sets it.")
        .tool(
            "Edit",
            {"file_path": f"{cwd}/tests/test_login.py", "old_string": "a", "new_string": "b"},
            "ok",
        )
        .tool(
            "Write",
            {"file_path": f"{cwd}/tests/helpers/wait.py", "content": "x"},
            "File created successfully",
        )
        .tool("Bash", {"command": "pytest tests/test_login.py --count 50"}, "50 passed in 20.1s")
        .say("Fixed: the test now waits for the cookie with wait_for_cookie(); 50 runs pass.")
    )


def hook_input(event: str, cwd: str, transcript: Path | None = None, **extra: Any) -> str:
    """The JSON Claude Code sends a command hook on stdin (code.claude.com/docs/en/hooks):
    the fields every event has, and each event's own (`source` for SessionStart, `trigger`
    for PreCompact, `stop_hook_active` for Stop, `reason` for SessionEnd)."""
    own: dict[str, dict[str, Any]] = {
        "SessionStart": {"source": "startup", "model": "claude-sonnet-4-5"},
        "PreCompact": {"trigger": "auto", "custom_instructions": ""},
        "Stop": {"stop_hook_active": False},
        "SessionEnd": {"reason": "prompt_input_exit"},
    }
    payload = {
        "session_id": SESSION,
        "transcript_path": str(transcript) if transcript else f"/nonexistent/{SESSION}.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": event,
        **own.get(event, {}),
        **extra,
    }
    return json.dumps(payload)
