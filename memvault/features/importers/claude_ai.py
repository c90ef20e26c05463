"""A Claude.ai data export's `conversations.json`: a list of conversations (`uuid`, `name`,
`created_at`, `updated_at`, `chat_messages`), each message with its `sender` (human or
assistant), its `content` blocks (`{type: text, text}`; tool use and thinking are left
out), its `text` and `created_at`, and the names of the files attached."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memvault.features.importers import CLAUDE_AI, dialogue
from memvault.features.importers.dialogue import Source, Turn
from memvault.features.importers.records import (
    Parsed,
    fields,
    listed,
    source_time,
    text_of,
)

_SPEAKERS = {"human": "User", "assistant": "Claude"}


def read(data: list[Any]) -> Parsed:
    """A memory for each conversation with at least one message, a Skip for the others."""
    return dialogue.read(_SOURCE, data)


def _turns(conversation: Mapping[str, Any]) -> list[Turn] | str:
    """The messages with text, or why there are none to read."""
    messages = conversation.get("chat_messages")
    if not isinstance(messages, list):
        return "it has no chat_messages list"
    return [turn for turn in map(_turn, messages) if turn is not None]


def _turn(message: object) -> Turn | None:
    """A message by the person or Claude with some text, or None."""
    found = fields(message)
    speaker = _SPEAKERS.get(text_of(found.get("sender")))
    if speaker is None:
        return None
    texts = [
        text_of(block.get("text"))
        for block in listed(found.get("content"))
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    text = "\n\n".join(t for t in texts if t.strip()) or text_of(found.get("text"))
    attached = [
        text_of(fields(file).get("file_name"))
        for key in ("attachments", "files")
        for file in listed(found.get(key))
    ]
    names = sorted({name for name in attached if name})
    if names:
        text = f"{text}\n\n_Attached: {', '.join(names)}_"
    if not text.strip():
        return None
    return Turn(speaker, text, source_time(found.get("created_at")))


_SOURCE = Source(CLAUDE_AI, "Claude.ai", ("uuid",), "name", ("created_at", "updated_at"), _turns)
