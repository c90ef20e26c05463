"""The shapes MCP tools return: pydantic models, so each tool publishes an output schema."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from .context import BriefingItem
from .index import NoteRow, SearchHit


class Written(BaseModel):
    id: str
    title: str
    path: str
    created_at: str | None


class LinkEnd(BaseModel):
    """The other end of a link; `id` is null while the link dangles."""

    id: str | None
    title: str | None
    path: str | None


class MemoryOut(BaseModel):
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


class Edited(BaseModel):
    id: str
    path: str
    updated_at: str | None


class Removed(BaseModel):
    id: str
    path: str
    removed_links: list[str] = Field(description="Memories whose links to this one were removed")


class SearchOut(BaseModel):
    results: list[SearchHit]
    total: int


class ListOut(BaseModel):
    items: list[NoteRow]
    total: int


class LinkSide(BaseModel):
    id: str
    title: str
    path: str
    links: list[LinkEnd]


class LinkOut(BaseModel):
    source: LinkSide
    target: LinkSide
    markdown: str | None = Field(description="The link written into the source; null if none")
    changed: bool


class DateOut(BaseModel):
    date: str
    format: str
    timezone: str
    utc_offset: str


class Section(BaseModel):
    """A heading in the memory and the text to put under it (the heading line is kept)."""

    heading: str
    content: str


class Verified(BaseModel):
    id: str
    title: str
    path: str
    last_reviewed: str | None


class ContextOut(BaseModel):
    briefing: str
    tokens: int = Field(description="Estimated tokens in the briefing (about 4 characters each)")
    items: list[BriefingItem]


class ExportOut(BaseModel):
    memories: list[dict[str, Any]]
    count: int


class SessionOut(BaseModel):
    id: str
    title: str
    path: str
    linked: list[LinkEnd]
    unresolved: list[str]
