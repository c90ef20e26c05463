"""A transcript as one stream of events, whatever client wrote it: what the person and the
assistant said, the tools the assistant called and what each returned, and the session's
whereabouts (id, folder, branch) as the client records them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

Role = Literal["user", "assistant"]


@dataclass(frozen=True)
class Said:
    """Words of the person (`user`) or the assistant, as written."""

    role: Role
    text: str
    at: str | None = None


@dataclass(frozen=True)
class ToolCall:
    """The assistant calling a tool: its name and arguments, and the id its result names."""

    id: str
    name: str
    input: dict[str, Any]
    at: str | None = None


@dataclass(frozen=True)
class ToolResult:
    """What a tool returned to the call of id `id`; `failed` when the client says so or the
    command exited non-zero."""

    id: str
    text: str
    failed: bool = False
    at: str | None = None


@dataclass(frozen=True)
class Where:
    """The session's whereabouts as a line of the transcript gives them (None: not given)."""

    session_id: str | None = None
    cwd: str | None = None
    branch: str | None = None
    at: str | None = None


Event = Said | ToolCall | ToolResult | Where


def moment(value: Any) -> str | None:
    """A timestamp as ISO 8601 text: a string as given, seconds since 1970 in UTC."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return datetime.fromtimestamp(value, UTC).isoformat().replace("+00:00", "Z")
    return None


def mapping(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one: fields missing or of the wrong
    kind read as absent."""
    return value if isinstance(value, dict) else {}


def text_of(content: Any) -> str:
    """The text in a message's content: a string, or the text parts of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [text_of(block) for block in content]
        return "\n".join(part for part in parts if part)
    if isinstance(content, dict):
        for key in ("text", "content", "output"):
            if isinstance(content.get(key), str | list):
                return text_of(content[key])
    return ""
