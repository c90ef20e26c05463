"""Claude Code's transcripts (`~/.claude/projects/<project>/<session id>.jsonl`): one JSON
object a line; `user` lines hold the person's words or tool results, `assistant` lines the
answer's text and tool calls; every line carries `sessionId`, `cwd`, `gitBranch` and a
`timestamp`. Side chains (a subagent's own dialogue) and meta lines (the client's notices,
slash-command echoes) are not the session's dialogue and are left out."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memvault.transcripts.events import Event, Said, ToolCall, ToolResult, Where, text_of

# What the client writes into the person's turn that the person did not type.
_CLIENT_MARKS = ("<command-name>", "<local-command-", "<command-message>", "Caveat: ")


def events(lines: Iterator[dict[str, Any]]) -> Iterator[Event]:
    """The events of a Claude Code transcript's lines, in order."""
    for line in lines:
        kind = line.get("type")
        if kind not in ("user", "assistant"):
            continue
        at = _text(line.get("timestamp"))
        yield Where(
            _text(line.get("sessionId")), _text(line.get("cwd")), _text(line.get("gitBranch")), at
        )
        if line.get("isSidechain") or line.get("isMeta"):
            continue
        message = line.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if kind == "user":
            yield from _user(content, at)
        else:
            yield from _assistant(content, at)


def _user(content: Any, at: str | None) -> Iterator[Event]:
    """The person's words, or the results of the tools the assistant called."""
    if isinstance(content, str):
        if content.strip() and not content.lstrip().startswith(_CLIENT_MARKS):
            yield Said("user", content, at)
        return
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            failed = bool(block.get("is_error"))
            yield ToolResult(
                str(block.get("tool_use_id", "")), text_of(block.get("content")), failed, at
            )
        elif block.get("type") == "text":
            text = text_of(block)
            if text.strip() and not text.lstrip().startswith(_CLIENT_MARKS):
                yield Said("user", text, at)


def _assistant(content: Any, at: str | None) -> Iterator[Event]:
    """The answer's text and tool calls (its thinking is not part of the record)."""
    if isinstance(content, str):
        if content.strip():
            yield Said("assistant", content, at)
        return
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and text_of(block).strip():
            yield Said("assistant", text_of(block), at)
        elif block.get("type") == "tool_use":
            given = block.get("input")
            arguments = given if isinstance(given, dict) else {}
            yield ToolCall(str(block.get("id", "")), str(block.get("name", "")), arguments, at)


def _text(value: Any) -> str | None:
    """A string field's value, None for anything else."""
    return value if isinstance(value, str) and value else None
