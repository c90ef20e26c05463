"""A ChatGPT data export's `conversations.json`: a list of conversations (`id` or
`conversation_id`, `title`, `create_time`, `update_time` in Unix seconds), each a tree of
messages (`mapping`: node id -> `{message, parent, children}`) whose branch shown is the
path from `current_node` up to the root. System and tool messages, hidden ones, calls to a
tool and messages without text are left out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memvault.features.importers import CHATGPT, dialogue
from memvault.features.importers.dialogue import Source, Turn
from memvault.features.importers.records import (
    Parsed,
    fields,
    listed,
    source_time,
    text_of,
)

_SPEAKERS = {"user": "User", "assistant": "ChatGPT"}
_TEXT = ("text", "multimodal_text")


def read(data: list[Any]) -> Parsed:
    """A memory for each conversation with at least one message, a Skip for the others."""
    return dialogue.read(_SOURCE, data)


def _turns(conversation: Mapping[str, Any]) -> list[Turn] | str:
    """The messages with text on the branch shown, or why there are none to read."""
    mapping = conversation.get("mapping")
    if not isinstance(mapping, dict):
        return "it has no mapping object"
    current = conversation.get("current_node")
    if not isinstance(current, str) or current not in mapping:
        return "its current_node is not in its mapping"
    return [turn for turn in map(_turn, _branch(mapping, current)) if turn is not None]


def _branch(mapping: Mapping[str, Any], leaf: str) -> list[Mapping[str, Any]]:
    """The nodes from the root down to `leaf`, by their parents (a loop ends the walk)."""
    nodes: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    key: object = leaf
    while isinstance(key, str) and key in mapping and key not in seen:
        seen.add(key)
        node = fields(mapping[key])
        nodes.append(node)
        key = node.get("parent")
    return nodes[::-1]


def _turn(node: Mapping[str, Any]) -> Turn | None:
    """A shown message by the person or ChatGPT with some text, or None."""
    message = fields(node.get("message"))
    speaker = _SPEAKERS.get(text_of(fields(message.get("author")).get("role")))
    hidden = fields(message.get("metadata")).get("is_visually_hidden_from_conversation")
    to_tool = message.get("recipient") not in (None, "all")
    content = fields(message.get("content"))
    if speaker is None or hidden or to_tool or content.get("content_type") not in _TEXT:
        return None
    texts = [part for part in listed(content.get("parts")) if isinstance(part, str)]
    text = "\n\n".join(t for t in texts if t.strip())
    if not text:
        return None
    return Turn(speaker, text, source_time(message.get("create_time")))


_SOURCE = Source(
    CHATGPT,
    "ChatGPT",
    ("conversation_id", "id"),
    "title",
    ("create_time", "update_time"),
    _turns,
)
