"""Which tool an import file comes from (`--format auto` tells by its content) and the
reader of each: memvault's own export (features/export_import.py), a Claude.ai or ChatGPT
data export's `conversations.json`, the MCP memory server's `memory.json`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from memvault.errors import Invalid
from memvault.features.importers import (
    CHATGPT,
    CLAUDE_AI,
    FORMATS,
    MCP_MEMORY,
    MEMVAULT,
    chatgpt,
    claude_ai,
    mcp_memory,
)
from memvault.features.importers.records import Parsed

# How far into a list of conversations auto looks for the key that tells the two apart.
_SNIFF = 1024 * 1024
_LIST_KEYS = re.compile(r'"(chat_messages|mapping)"\s*:')
_LIST_READERS: dict[str, Callable[[list[Any]], Parsed]] = {
    CLAUDE_AI: claude_ai.read,
    CHATGPT: chatgpt.read,
}


def sniffed(text: str) -> str:
    """The format a file's content shows: a JSON list of conversations with `chat_messages`
    (Claude.ai) or a `mapping` (ChatGPT); JSON Lines of entities and relations (the MCP
    memory server); else memvault's export (JSON or JSON Lines, which checks itself)."""
    start = text.lstrip()[:1]
    if start == "[":
        found = _LIST_KEYS.search(text, 0, _SNIFF)
        if found is None:
            raise Invalid(
                "this JSON list holds neither Claude.ai's conversations (chat_messages) nor "
                f"ChatGPT's (mapping); name its format with --format ({', '.join(FORMATS)})"
            )
        return CLAUDE_AI if found.group(1) == "chat_messages" else CHATGPT
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        item = json.loads(first)
    except ValueError:
        item = None
    return MCP_MEMORY if mcp_memory.kind_of(item) else MEMVAULT


def parsed(text: str, fmt: str) -> Parsed:
    """What a file of another tool holds, read as `fmt` (one of FORMATS but memvault)."""
    if fmt == MCP_MEMORY:
        return mcp_memory.read(text)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise Invalid(f"not JSON, as a {fmt} conversations.json is: {exc}") from exc
    if not isinstance(data, list):
        raise Invalid(
            f"a {fmt} conversations.json is a JSON list of conversations, "
            f"not a {type(data).__name__}"
        )
    return _LIST_READERS[fmt](data)
