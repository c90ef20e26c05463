"""What the tools return: one pydantic model per result, built from the service's records.

The MCP tools return these models (they are the tools' output schemas) and the CLI's `--json`
prints the same JSON, so a script sees one shape whichever face it uses. Commands no tool has
(reindex, sync, check, stats, archive, import) print their record as it is. The readable
one-line texts live in presentation/lines.py. A low, pure module: pydantic and memvault's
records and model.
Importing pydantic costs a command about 0.1 s, so the CLI imports this module only for --json.
"""

from __future__ import annotations

import json
from typing import Any, Self, TypeVar

from pydantic import BaseModel, Field, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from memvault.core import clock
from memvault.core.memory import Memory
from memvault.core.properties import properties_of
from memvault.core.records import (
    Briefing,
    BriefingItem,
    Deleted,
    LinkChange,
    LinkRow,
    NoteRow,
    Recall,
    Related,
    RelatedBy,
    SearchHit,
    SearchMode,
    SearchPage,
    SemanticStatus,
    SessionNotes,
    Stats,
    Succession,
)
from memvault.presentation.lines import ReadFormat, plain_text, reviewed

M = TypeVar("M", bound=BaseModel)

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


def pick(model: type[M], record: object, **values: Any) -> M:
    """A `model` from `values`, each other field read from the record's attribute of the same
    name (so no field list is written twice)."""
    taken = {name: getattr(record, name) for name in model.model_fields if name not in values}
    return model(**taken, **values)


def as_json(model: BaseModel) -> str:
    """A model as the CLI prints it with --json (and read_mem's json text): indented, Unicode
    kept."""
    return json.dumps(model.model_dump(mode="json"), indent=2, ensure_ascii=False)


# -- memories ------------------------------------------------------------------------------


class Written(Output):
    id: str
    title: str
    path: str
    version: str = Field(
        description="Short hash of the file's content (edit_mem's expected_version)"
    )
    created_at: str | None
    replaced: bool = Field(
        default=False,
        description="True when on_exists=replace gave an existing memory this content",
    )

    @classmethod
    def of(cls, memory: Memory, replaced: bool = False) -> Written:
        return pick(cls, memory, replaced=replaced)


class LinkEnd(Output):
    """The other end of a link; `id` is null while the link dangles."""

    id: str | None
    title: str | None
    path: str | None

    @classmethod
    def target(cls, row: LinkRow) -> LinkEnd:
        """Where a link leads; a dangling link is shown by its target as written."""
        title = row.target_title if row.target else row.raw
        return cls(id=row.target_id, title=title, path=row.target)

    @classmethod
    def source(cls, row: LinkRow) -> LinkEnd:
        return cls(id=row.source_id, title=row.source_title, path=row.source)

    @classmethod
    def memory(cls, memory: Memory) -> LinkEnd:
        return pick(cls, memory)

    @classmethod
    def named(cls, raw: str, memory: Memory | None) -> LinkEnd:
        """A property's link: the memory it names, or the link as written when it names none."""
        return cls.memory(memory) if memory else cls(id=None, title=raw, path=None)


def distinct_targets(rows: list[LinkRow]) -> list[LinkRow]:
    """The first link to each target (a dangling one: to each target as written), in order."""
    first: dict[str, LinkRow] = {}
    for row in rows:
        first.setdefault(row.target or f"?{row.raw}", row)
    return list(first.values())


def distinct_sources(rows: list[LinkRow], own_path: str) -> list[LinkRow]:
    """The first backlink from each other memory, in order (a note's links to itself left out)."""
    first: dict[str, LinkRow] = {}
    for row in rows:
        if row.source != own_path:
            first.setdefault(row.source, row)
    return list(first.values())


class MemoryFields(Output):
    """A memory as every face shows it: read_mem (and the CLI's --json, the export) adds its
    links and how it was found; the web page adds what it masks and where it cuts."""

    id: str
    title: str
    content: str
    tags: list[str]
    category: str | None
    created_at: str | None
    updated_at: str | None
    last_reviewed: str | None
    path: str
    version: str = Field(
        description="Short hash of the file's content; pass it as edit_mem's "
        "expected_version to refuse an edit if the memory changed since"
    )
    scope: str | None = None
    expires_at: str | None = None
    properties: dict[str, Any] = Field(
        default_factory=dict,
        description="Frontmatter keys memvault does not own (Obsidian properties)",
    )
    created_by: str | None = Field(default=None, description="Who wrote it")
    updated_by: str | None = Field(default=None, description="Who changed it last")

    @classmethod
    def from_memory(cls, memory: Memory, content: str | None = None, **more: Any) -> Self:
        """The memory's fields, its body as `content` unless another text is given (plain,
        or the start of a big note), with `more` of a subclass's fields."""
        return pick(
            cls,
            memory,
            content=memory.body if content is None else content,
            properties=properties_of(memory.metadata),
            created_by=_text(memory.metadata.get("created_by")),
            updated_by=_text(memory.metadata.get("updated_by")),
            **more,
        )


class MemoryOut(MemoryFields):
    """A memory as `read_mem` returns it; the json format adds aliases and raw frontmatter."""

    links: list[LinkEnd]
    backlinks: list[LinkEnd]
    age: str = Field(description="How long ago it was last updated, e.g. '3 days ago'")
    reviewed: str = Field(
        description="When it was last verified: 'reviewed 3 days ago' or 'never reviewed'"
    )
    confidence: float = Field(description="1.0 when named exactly; less for a fuzzy match")
    matched_by: str = Field(description="exact, or name (a clear fuzzy match on its names)")
    supersedes: list[LinkEnd] = Field(
        default_factory=list, description="The older memories this one replaced"
    )
    superseded_by: list[LinkEnd] = Field(
        default_factory=list, description="The memory that replaced this one: read that instead"
    )
    aliases: list[str] | None = None
    frontmatter: dict[str, Any] | None = None
    problem: str | None = None

    @classmethod
    def of(
        cls,
        found: Recall,
        outgoing: list[LinkRow],
        backlinks: list[LinkRow],
        fmt: ReadFormat = "markdown",
        succession: Succession | None = None,
    ) -> MemoryOut:
        """A recalled memory with its links, properties and succession; `plain` strips the
        markdown from the content and `json` adds aliases, the raw frontmatter and any problem
        reading it."""
        memory = found.memory
        full = fmt == "json"
        succession = succession or Succession()
        return cls.from_memory(
            memory,
            plain_text(memory) if fmt == "plain" else None,
            supersedes=[LinkEnd.named(raw, m) for raw, m in succession.supersedes],
            superseded_by=[LinkEnd.named(raw, m) for raw, m in succession.superseded_by],
            links=[LinkEnd.target(row) for row in distinct_targets(outgoing)],
            backlinks=[LinkEnd.source(row) for row in distinct_sources(backlinks, memory.path)],
            age=clock.age(memory.updated_at),
            reviewed=reviewed(memory.last_reviewed),
            confidence=found.confidence,
            matched_by=found.matched_by,
            aliases=memory.aliases if full else None,
            frontmatter=dict(memory.metadata) if full else None,
            problem=memory.problem if full else None,
        )


def _text(value: object) -> str | None:
    """A frontmatter value as one text, or None when absent or empty."""
    return None if value in (None, "") else str(value)


class Moved(Output):
    id: str
    path: str
    version: str = Field(description="The new version (for the next edit's expected_version)")
    updated_at: str | None

    @classmethod
    def of(cls, memory: Memory) -> Self:
        return pick(cls, memory)


class Edited(Moved):
    moved: list[Moved] | None = Field(
        None, description="id NAME:*: each memory archived or restored (id is NAME:*)"
    )

    @classmethod
    def of(cls, memory: Memory) -> Self:
        return pick(cls, memory, moved=None)

    @classmethod
    def group(cls, name: str, moved: list[Memory]) -> Edited:
        """Every memory of a category or scope (`name`, as `ops:*`) archived or restored."""
        shown = [Moved.of(memory) for memory in moved]
        return cls(id=name, path="", version="", updated_at=None, moved=shown)


class Removed(Output):
    id: str
    path: str
    removed_links: list[str] = Field(description="Memories whose links to this one were removed")

    @classmethod
    def of(cls, deleted: Deleted) -> Removed:
        return pick(cls, deleted.memory, removed_links=deleted.changed)


class Verified(Output):
    id: str
    title: str
    path: str
    last_reviewed: str | None

    @classmethod
    def of(cls, memory: Memory) -> Verified:
        return pick(cls, memory)


# -- search and lists ----------------------------------------------------------------------


class SearchOut(Output):
    results: list[SearchHit]
    total: int
    offset: int
    has_more: bool
    mode: SearchMode
    caveat: str = Field(
        default="",
        description="Why meaning or the reranker took no part, or only a part; empty if they did",
    )
    reranked: int = Field(default=0, description="How many of the best hits a reranker ordered")
    total_capped: bool = Field(
        default=False, description="Counting stopped at total: more than that many match"
    )
    ranked: int = Field(
        default=0,
        description="When not 0, the results are the best of only this many matches (a cap on"
        " a search's work); more words or a filter rank them all",
    )

    @classmethod
    def of(cls, page: SearchPage) -> SearchOut:
        return pick(cls, page)


class SimilarOut(Output):
    id: str
    by: RelatedBy
    results: list[SearchHit]

    @classmethod
    def of(cls, found: Related) -> SimilarOut:
        return pick(cls, found)


class ListOut(Output):
    items: list[NoteRow]
    total: int

    @classmethod
    def of(cls, rows: list[NoteRow], total: int) -> ListOut:
        return cls(items=rows, total=total)


class ExportOut(Output):
    memories: list[dict[str, Any]]
    count: int

    @classmethod
    def of(cls, records: list[dict[str, Any]]) -> ExportOut:
        return cls(memories=records, count=len(records))


# -- links ---------------------------------------------------------------------------------


class LinkSide(Output):
    id: str
    title: str
    path: str
    links: list[LinkEnd]

    @classmethod
    def of(cls, memory: Memory, rows: list[LinkRow]) -> LinkSide:
        return pick(cls, memory, links=[LinkEnd.target(row) for row in distinct_targets(rows)])


class LinkOut(Output):
    source: LinkSide
    target: LinkSide
    markdown: str | None = Field(description="The link written into the source; null if none")
    changed: bool

    @classmethod
    def of(cls, change: LinkChange) -> LinkOut:
        return pick(
            cls,
            change,
            source=LinkSide.of(change.source, change.source_links),
            target=LinkSide.of(change.target, change.target_links),
        )


# -- the session ---------------------------------------------------------------------------


class DateOut(Output):
    date: str
    format: str
    timezone: str
    utc_offset: str

    @classmethod
    def now(cls, fmt: str) -> DateOut:
        """This machine's date and time now, in `fmt` (see clock.current_date)."""
        date, zone, offset = clock.current_date(fmt)
        return cls(date=date, format=fmt, timezone=zone, utc_offset=offset)


class ContextOut(Output):
    briefing: str
    tokens: int = Field(description="Estimated tokens in the briefing (about 4 characters each)")
    items: list[BriefingItem]

    @classmethod
    def of(cls, briefing: Briefing) -> ContextOut:
        return pick(cls, briefing, briefing=briefing.text)


class StatsOut(Output):
    """The vault's figures: counts and bytes by category and scope, counts by tag, the
    never-used memories, and whether semantic search is on and how far its embedding is."""

    memories: int
    bytes: int
    by_category: dict[str, int]
    by_scope: dict[str, int]
    by_tag: dict[str, int]
    never_used: list[str]
    bytes_by_category: dict[str, int]
    bytes_by_scope: dict[str, int]
    semantic: SemanticStatus

    @classmethod
    def of(cls, stats: Stats) -> StatsOut:
        return pick(cls, stats)


class SessionOut(Output):
    id: str
    title: str
    path: str
    linked: list[LinkEnd]
    unresolved: list[str]

    @classmethod
    def of(cls, notes: SessionNotes) -> SessionOut:
        return pick(
            cls,
            notes.memory,
            linked=[LinkEnd.memory(m) for m in notes.linked],
            unresolved=notes.unresolved,
        )
