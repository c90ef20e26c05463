"""The shapes MCP tools return: pydantic models, so each tool publishes an output schema."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

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
