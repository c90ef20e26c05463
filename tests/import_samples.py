"""Small synthetic files in the published formats `memvault import` reads (no real person's
data): a Claude.ai and a ChatGPT data export's conversations.json, and the MCP memory
server's memory.json, each with a malformed entry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# A key of the shape AWS issues (the documentation's example, one letter changed).
AWS_KEY = "AKIAIOSFODNN7EXAMPLF"


def claude_message(uuid: str, sender: str, text: str, at: str) -> dict[str, Any]:
    """A Claude.ai message: its text both in `text` and as one content block."""
    return {
        "uuid": uuid,
        "sender": sender,
        "text": text,
        "content": [{"type": "text", "text": text}],
        "created_at": at,
        "updated_at": at,
        "attachments": [],
        "files": [],
    }


def claude_conversations() -> list[Any]:
    """Two conversations, one empty, one not an object, one without a uuid."""
    return [
        {
            "uuid": "0b6c1e2a-1111-4c4c-9a9a-000000000001",
            "name": "Flaky login test",
            "created_at": "2024-05-01T12:00:00.123456+00:00",
            "updated_at": "2024-05-02T08:30:00.000000+00:00",
            "account": {"uuid": "acc"},
            "chat_messages": [
                claude_message(
                    "m1",
                    "human",
                    f"Why does the login test fail? key {AWS_KEY}",
                    "2024-05-01T12:00:00Z",
                ),
                {
                    **claude_message("m2", "assistant", "", "2024-05-01T12:00:07Z"),
                    "content": [
                        {"type": "thinking", "thinking": "hidden reasoning"},
                        {"type": "text", "text": "It races the session cookie."},
                        {"type": "tool_use", "name": "search", "input": {}},
                    ],
                },
            ],
        },
        {
            "uuid": "0b6c1e2a-1111-4c4c-9a9a-000000000002",
            "name": "",
            "created_at": "2024-06-01T09:00:00Z",
            "updated_at": "2024-06-01T09:05:00Z",
            "chat_messages": [
                {
                    **claude_message(
                        "m3", "human", "Plan the invoice export\nwith CSV", "2024-06-01T09:00:00Z"
                    ),
                    "attachments": [{"file_name": "invoices.csv", "file_size": 10}],
                },
                claude_message("m4", "assistant", "Start with the totals.", "2024-06-01T09:05:00Z"),
            ],
        },
        {"uuid": "0b6c1e2a-1111-4c4c-9a9a-000000000003", "name": "Empty", "chat_messages": []},
        "not a conversation",
        {"name": "No uuid", "chat_messages": []},
    ]


def chatgpt_node(
    node: str,
    parent: str | None,
    children: list[str],
    role: str | None,
    text: str = "",
    **more: Any,
) -> dict[str, Any]:
    """A node of a ChatGPT conversation's mapping (no message when `role` is None)."""
    message = None
    if role is not None:
        message = {
            "id": f"msg-{node}",
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": more.pop("create_time", None),
            "content": {"content_type": more.pop("content_type", "text"), "parts": [text]},
            "status": "finished_successfully",
            "recipient": more.pop("recipient", "all"),
            "metadata": more.pop("metadata", {}),
        }
    return {"id": node, "message": message, "parent": parent, "children": children}


def chatgpt_conversations() -> list[Any]:
    """One conversation with a system message, a hidden one, a tool call and two branches
    (the second shown); one without a mapping, one whose current_node is missing."""
    nodes = [
        chatgpt_node("root", None, ["sys"], None),
        chatgpt_node("sys", "root", ["ask"], "system", "You are ChatGPT."),
        chatgpt_node(
            "ask",
            "sys",
            ["old", "hidden"],
            "user",
            "Which files for the invoice export?",
            create_time=1700000000.25,
        ),
        chatgpt_node("old", "ask", [], "assistant", "OLD BRANCH", create_time=1700000005.0),
        chatgpt_node(
            "hidden",
            "ask",
            ["call"],
            "user",
            "HIDDEN CONTEXT",
            metadata={"is_visually_hidden_from_conversation": True},
        ),
        chatgpt_node(
            "call",
            "hidden",
            ["tool"],
            "assistant",
            "search('invoice')",
            recipient="browser",
            content_type="code",
        ),
        chatgpt_node("tool", "call", ["answer"], "tool", "TOOL OUTPUT"),
        chatgpt_node(
            "answer", "tool", [], "assistant", "invoice.py and export.py", create_time=1700000060.0
        ),
    ]
    return [
        {
            "id": "6655aa00-0000-4000-8000-000000000001",
            "conversation_id": "6655aa00-0000-4000-8000-000000000001",
            "title": "Invoice export files",
            "create_time": 1700000000.0,
            "update_time": 1700003600.0,
            "mapping": {node["id"]: node for node in nodes},
            "current_node": "answer",
        },
        {"id": "6655aa00-0000-4000-8000-000000000002", "title": "No mapping"},
        {
            "id": "6655aa00-0000-4000-8000-000000000003",
            "title": "Lost",
            "mapping": {},
            "current_node": "gone",
        },
    ]


def mcp_lines() -> list[str]:
    """Entities, relations both ways, one to an unknown entity, and two malformed lines."""
    items = [
        {
            "type": "entity",
            "name": "Alice",
            "entityType": "person",
            "observations": ["Speaks Spanish", f"Her deploy key is {AWS_KEY}"],
        },
        {"type": "entity", "name": "Acme Corp", "entityType": "organization", "observations": []},
        {"type": "relation", "from": "Alice", "to": "Acme Corp", "relationType": "works_at"},
        {"type": "relation", "from": "Acme Corp", "to": "Alice", "relationType": "employs"},
        {"type": "relation", "from": "Alice", "to": "Bob", "relationType": "knows"},
        {"type": "entity", "name": "Nameless", "observations": "not a list"},
    ]
    return [*map(json.dumps, items[:3]), "{not json", *map(json.dumps, items[3:])]


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
