"""Codex CLI's session files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): lines of
`{timestamp, type, payload}` where `session_meta` gives the session's id, folder and git
branch and `response_item` the dialogue, function calls and their outputs (older files hold
the items bare, after a first line with the session's id). Shell calls become `Bash` calls
and a patch becomes an `Edit` or `Write` call per file, the names the digest knows."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from typing import Any

from memvault.transcripts.events import Event, Said, ToolCall, ToolResult, Where, mapping, text_of

_ITEMS = {
    "message",
    "function_call",
    "function_call_output",
    "local_shell_call",
    "custom_tool_call",
    "custom_tool_call_output",
}
_SHELLS = {"shell", "container.exec", "shell_command", "exec_command", "local_shell"}
# What the client puts in the person's turn: the environment and the instructions files.
_CLIENT_MARKS = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<INSTRUCTIONS>")
_PATCHED = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)
_EXIT = re.compile(r"(?:Exit code|exit_code|Process exited with code)[:=]?\s*(-?\d+)")


def events(lines: Iterator[dict[str, Any]]) -> Iterator[Event]:
    """The events of a Codex session file's lines, in order."""
    for line in lines:
        at = line.get("timestamp") if isinstance(line.get("timestamp"), str) else None
        payload = line.get("payload")
        kind = line.get("type")
        if isinstance(payload, dict):
            if kind == "session_meta":
                yield _meta(payload, at)
            elif kind == "turn_context" and isinstance(payload.get("cwd"), str):
                yield Where(cwd=payload["cwd"], at=at)
            elif kind == "response_item":
                yield from _item(payload, at)
        elif kind in _ITEMS:
            yield from _item(line, at)
        elif isinstance(line.get("id"), str) and kind is None:
            yield _meta(line, at)


def _meta(meta: dict[str, Any], at: str | None) -> Where:
    """The session's id, folder and branch from its first line."""
    git = mapping(meta.get("git"))
    branch = git.get("branch") if isinstance(git.get("branch"), str) else None
    cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else None
    when = meta.get("timestamp") if isinstance(meta.get("timestamp"), str) else at
    return Where(str(meta.get("id")) if meta.get("id") else None, cwd, branch, when)


def _item(item: dict[str, Any], at: str | None) -> Iterator[Event]:
    """One response item as events."""
    kind = item.get("type")
    call_id = str(item.get("call_id") or item.get("id") or "")
    if kind == "message":
        text = text_of(item.get("content"))
        role = item.get("role")
        client_said = role == "user" and text.lstrip().startswith(_CLIENT_MARKS)
        if role in ("user", "assistant") and text.strip() and not client_said:
            yield Said(role, text, at)
    elif kind == "function_call":
        yield from _call(call_id, str(item.get("name", "")), _arguments(item.get("arguments")), at)
    elif kind == "local_shell_call":
        action = mapping(item.get("action"))
        yield from _call(call_id, "local_shell", action, at)
    elif kind == "custom_tool_call":
        yield from _call(call_id, str(item.get("name", "")), {"input": item.get("input")}, at)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        yield _output(call_id, item.get("output"), at)


def _call(call_id: str, name: str, arguments: dict[str, Any], at: str | None) -> Iterator[Event]:
    """A call in the digest's names: a shell command as `Bash`, a patch as a call per file."""
    if name in _SHELLS:
        yield ToolCall(call_id, "Bash", {"command": _command(arguments)}, at)
    elif name == "apply_patch":
        patch = arguments.get("input") or arguments.get("patch") or ""
        for action, path in _PATCHED.findall(patch if isinstance(patch, str) else ""):
            tool = "Write" if action == "Add" else "Edit"
            yield ToolCall(call_id, tool, {"file_path": path.strip(), "action": action}, at)
    else:
        yield ToolCall(call_id, name, arguments, at)


def _command(arguments: dict[str, Any]) -> str:
    """A shell call's command line: `bash -lc SCRIPT` gives the script."""
    command = arguments.get("command") or arguments.get("cmd") or ""
    if isinstance(command, list):
        words = [str(word) for word in command]
        if len(words) == 3 and words[1] in ("-lc", "-c"):
            return words[2]
        return shlex.join(words)
    return str(command)


def _arguments(raw: Any) -> dict[str, Any]:
    """A function call's arguments: a JSON object in a string."""
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return {"arguments": raw}
    return value if isinstance(value, dict) else {"arguments": raw}


def _output(call_id: str, raw: Any, at: str | None) -> ToolResult:
    """A call's output, failed when it says the command exited non-zero."""
    text = raw if isinstance(raw, str) else json.dumps(raw)
    code: int | None = None
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        metadata = mapping(value.get("metadata"))
        code = metadata.get("exit_code") if isinstance(metadata.get("exit_code"), int) else None
        text = text_of(value) or text
    if code is None:
        found = _EXIT.search(text[:500])
        code = int(found.group(1)) if found else None
    return ToolResult(call_id, text, bool(code), at)
