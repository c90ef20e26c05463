"""The MCP reference memory server's `memory.json` (JSON Lines): each entity
(`{"type": "entity", "name", "entityType", "observations": [...]}`) becomes a memory, its
observations a list; each relation (`{"type": "relation", "from", "to", "relationType"}`)
a link between two of them."""

from __future__ import annotations

import json
from typing import Any

from memvault.features.importers import MCP_MEMORY
from memvault.features.importers.records import Entry, Parsed, Relation, Skip, text_of
from memvault.features.importers.sizes import MAX_BYTES, fitted

CATEGORY = "entity"


def read(text: str) -> Parsed:
    """An entry for each entity, a relation for each relation, a Skip for each other line."""
    parsed = Parsed(MCP_MEMORY)
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            item = json.loads(line)
        except ValueError as exc:
            parsed.entries.append(Skip(where, f"it is not JSON ({exc})"))
            continue
        kind = kind_of(item)
        if kind == "entity":
            parsed.entries.append(_entity(where, item))
        elif kind == "relation":
            parsed.relations.append(_relation(where, item))
        else:
            parsed.entries.append(Skip(where, "it is neither an entity nor a relation"))
    return parsed


def kind_of(item: object) -> str | None:
    """`entity` or `relation` for a line of a memory.json (by its `type`, or by the fields
    of one written without it), else None."""
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind in ("entity", "relation"):
        return str(kind)
    if kind is None and "entityType" in item:
        return "entity"
    if kind is None and "relationType" in item:
        return "relation"
    return None


def _entity(where: str, item: dict[str, Any]) -> Entry | Skip:
    name = text_of(item.get("name")).strip()
    if not name:
        return Skip(where, "the entity has no name")
    observations = item.get("observations")
    if not isinstance(observations, list):
        return Skip(f"{where} ({name})", "its observations are not a list")
    items = [_item(str(text)) for text in observations if str(text).strip()]
    kind = text_of(item.get("entityType")).strip()
    body = fitted("## Observations\n", items, "observation", MAX_BYTES, "\n") if items else ""
    return Entry(
        source_id=name,
        where=f"{where} ({name})",
        title=name,
        body=body or "No observations.",
        category=CATEGORY,
        properties={"source": MCP_MEMORY, "source_id": name, "entity_type": kind or "entity"},
    )


def _item(text: str) -> str:
    """An observation as a list item, its later lines indented under it."""
    return "- " + "\n  ".join(text.strip().splitlines())


def _relation(where: str, item: dict[str, Any]) -> Relation | Skip:
    ends = [text_of(item.get(key)).strip() for key in ("from", "to", "relationType")]
    missing = [
        key for key, value in zip(("from", "to", "relationType"), ends, strict=True) if not value
    ]
    if missing:
        return Skip(where, f"the relation has no {' and no '.join(missing)}")
    return Relation(ends[0], ends[1], ends[2], where)
