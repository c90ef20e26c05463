"""The shapes MCP tools return: pydantic models, so each tool publishes an output schema."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from .records import BriefingItem, NoteRow, SearchHit

# Keywords that constrain only values of their own type, so they stay true when null joins it.
_TYPE_ONLY = frozenset({"type", "items", "additionalProperties"})


class Output(BaseModel):
    """A tool's result. Its schema writes `X | None` as `"type": [X, "null"]`, not pydantic's
    `anyOf`: the same values pass, and clients that validate results with the `jsonschema`
    package (the MCP SDK's does) check it several times faster, since every null then raises
    no error inside an anyOf (search_mem at 100k notes: about 4 ms less per call)."""

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        _nullable_as_type(handler.resolve_ref_schema(schema), handler, set())
        return schema


def _nullable_as_type(node: object, handler: GetJsonSchemaHandler, seen: set[int]) -> None:
    """Rewrite, in place and through references, each `anyOf: [{type: X, ...}, {type: null}]`
    whose X schema has only type-bound keywords as `type: [X, "null"]`."""
    if isinstance(node, list):
        for item in node:
            _nullable_as_type(item, handler, seen)
        return
    if not isinstance(node, dict) or id(node) in seen:
        return
    seen.add(id(node))
    if "$ref" in node:
        _nullable_as_type(handler.resolve_ref_schema(node), handler, seen)
    options = node.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        other = options[1 - options.index({"type": "null"})]
        if isinstance(other.get("type"), str) and other.keys() <= _TYPE_ONLY:
            del node["anyOf"]
            node.update(other, type=[other["type"], "null"])
    for value in list(node.values()):
        _nullable_as_type(value, handler, seen)


class Written(Output):
    id: str
    title: str
    path: str
    created_at: str | None


class LinkEnd(Output):
    """The other end of a link; `id` is null while the link dangles."""

    id: str | None
    title: str | None
    path: str | None


class MemoryOut(Output):
    """A memory as `read_mem` returns it; the json format adds aliases and raw frontmatter."""

    id: str
    title: str
    content: str
    tags: list[str]
    category: str | None
    created_at: str | None
    updated_at: str | None
    last_reviewed: str | None
    path: str
    links: list[LinkEnd]
    backlinks: list[LinkEnd]
    scope: str | None = None
    expires_at: str | None = None
    age: str = Field(description="How long ago it was last updated, e.g. '3 days ago'")
    reviewed: str = Field(description="How long ago it was last verified")
    confidence: float = Field(description="1.0 when named exactly; less for a fuzzy match")
    matched_by: str = Field(description="exact, name (fuzzy) or content")
    aliases: list[str] | None = None
    frontmatter: dict[str, Any] | None = None
    problem: str | None = None


class Edited(Output):
    id: str
    path: str
    updated_at: str | None


class Removed(Output):
    id: str
    path: str
    removed_links: list[str] = Field(description="Memories whose links to this one were removed")


class SearchOut(Output):
    results: list[SearchHit]
    total: int


class ListOut(Output):
    items: list[NoteRow]
    total: int


class LinkSide(Output):
    id: str
    title: str
    path: str
    links: list[LinkEnd]


class LinkOut(Output):
    source: LinkSide
    target: LinkSide
    markdown: str | None = Field(description="The link written into the source; null if none")
    changed: bool


class DateOut(Output):
    date: str
    format: str
    timezone: str
    utc_offset: str


class Section(BaseModel):
    """A heading in the memory and the text to put under it (the heading line is kept)."""

    heading: str
    content: str


class Verified(Output):
    id: str
    title: str
    path: str
    last_reviewed: str | None


class ContextOut(Output):
    briefing: str
    tokens: int = Field(description="Estimated tokens in the briefing (about 4 characters each)")
    items: list[BriefingItem]


class ExportOut(Output):
    memories: list[dict[str, Any]]
    count: int


class SessionOut(Output):
    id: str
    title: str
    path: str
    linked: list[LinkEnd]
    unresolved: list[str]
