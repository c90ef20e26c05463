"""The records the index and the services hand to the faces: plain dataclasses, no I/O.

Faces (CLI, MCP server) import these and `model.Memory`, never the index or the store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from memvault.core.memory import Memory


class FileInfo(NamedTuple):
    """What a walk sees of a markdown file, enough to tell whether it changed (a tuple: a walk
    makes one per file, so it should cost little)."""

    path: str
    size: int
    mtime_ns: int


class Snapshot(NamedTuple):
    """A file as memvault read it for an edit: its text, size, mtime and content hash. The
    write checks the file still matches just before replacing it (see storage/files.py)."""

    text: str
    size: int
    mtime_ns: int
    digest: str


@dataclass(frozen=True)
class Skipped:
    """A file the walk or a read could not use, and why."""

    path: str
    reason: str


# Which time a `since`/`until` filter reads: when a memory last changed, or when it was made.
TimeField = Literal["updated", "created"]


@dataclass(frozen=True)
class Filter:
    """Which memories a search or a listing covers. `category` and `scope` take one name or
    several (any of them). Scoped memories are included with the global (unscoped) ones unless
    `only_scope`. `archived`: False leaves out archived and expired memories, True gives only
    archived ones, None gives every memory. `since`/`until` bound the `time_field` (updated or
    created): as the caller wrote them (`7d`, `last week`, an ISO date), which the service turns
    into UTC timestamps (core/timespec.py) before the index reads them. `where`: the (property,
    value) pairs a memory must hold (`properties.where_pairs`). Superseded memories are left
    out unless `include_superseded`."""

    category: str | tuple[str, ...] | None = None
    tags: tuple[str, ...] = ()
    scope: str | tuple[str, ...] | None = None
    only_scope: bool = False
    archived: bool | None = False
    since: str | None = None
    until: str | None = None
    time_field: TimeField = "updated"
    where: tuple[tuple[str, str], ...] = ()
    include_superseded: bool = False

    @classmethod
    def of(
        cls,
        category: str | Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        scope: str | Sequence[str] | None = None,
        only_scope: bool = False,
        archived: bool | None = False,
        since: str | None = None,
        until: str | None = None,
        time_field: TimeField = "updated",
        where: tuple[tuple[str, str], ...] = (),
        include_superseded: bool = False,
    ) -> Filter:
        """A Filter from a face's arguments, where several names come as a list."""
        return cls(
            _one_or_tuple(category),
            tuple(tags or ()),
            _one_or_tuple(scope),
            only_scope,
            archived,
            since,
            until,
            time_field,
            where,
            include_superseded,
        )

    @property
    def categories(self) -> tuple[str, ...]:
        """The categories asked for (none: every category)."""
        return _names(self.category)

    @property
    def scopes(self) -> tuple[str, ...]:
        """The scopes asked for (none: every scope)."""
        return _names(self.scope)


def _one_or_tuple(value: str | Sequence[str] | None) -> str | tuple[str, ...] | None:
    return value if value is None or isinstance(value, str) else tuple(value)


def _names(value: str | tuple[str, ...] | None) -> tuple[str, ...]:
    """One name or several as a tuple, blanks left out."""
    names = (value,) if isinstance(value, str) else value or ()
    return tuple(name for name in names if name.strip())


@dataclass
class SearchHit:
    """One search result, as the tools and the CLI show it: `score` ranks the hits of one
    search (bm25, fused or cosine by mode), `relevance` (0..1) says how much of the query the
    memory answers, comparably across queries (see search/relevance.py)."""

    id: str
    title: str
    path: str
    version: str
    category: str | None
    tags: list[str]
    score: float
    snippet: str
    updated_at: str | None
    last_reviewed: str | None
    scope: str | None
    age: str
    relevance: float = 0.0
    created_by: str | None = None
    updated_by: str | None = None


# Reports how much of a long job is done: (done, total).
Progress = Callable[[int, int], None]
# How a search finds memories: by words and meaning fused, by words, or by meaning.
SearchMode = Literal["hybrid", "keyword", "semantic"]


# How similar_mem found a memory's related ones: by its vectors, or by its words (no vectors).
RelatedBy = Literal["meaning", "words"]


@dataclass
class Related:
    """The memories related to one (`id`, its id), best first: each hit's `relevance` is its
    similarity (0..1: the cosine of the two notes' mean vectors `by` meaning, the share of the
    memory's key words it holds `by` words)."""

    id: str
    by: RelatedBy
    results: list[SearchHit]


@dataclass(frozen=True)
class SemanticStatus:
    """Whether semantic search is on (with which model, or why not), and how many notes have
    their vectors and how many wait for them."""

    enabled: bool
    model: str | None
    reason: str
    embedded: int
    pending: int
    # The reranker in a line ("reranking: NAME, the best 20 within 300 ms"), or why it is off;
    # empty when none is set (semantic/reranker.py).
    reranking: str = ""
    # The cores a server's background embedding runs the model on (MEMVAULT_EMBED_CORES), and
    # whether it waits now for the server's requests to stop (semantic/throttle.py).
    cores: int = 0
    paused: bool = False


# What `Backlog.seconds` reckons with, measured on this project's 2-core machine: one process
# embeds about 80 chunks a second (generated notes: 169 a second on two workers), and loading
# the model takes about half a second.
CHUNKS_PER_SECOND = 80
LOAD_SECONDS = 0.5


@dataclass(frozen=True)
class Backlog:
    """Notes waiting for their vectors, and about how many chunks they hold."""

    notes: int
    chunks: int

    def seconds(self) -> float:
        """About how long one process takes to embed them (the model's load included)."""
        return (LOAD_SECONDS + self.chunks / CHUNKS_PER_SECOND) if self.notes else 0.0


@dataclass
class SearchPage:
    """One page of a search: its hits, how many match in all, where the page starts, whether
    more follow it, and how it was ranked (a default search is full-text until the vault's
    notes are embedded and a server has loaded their vectors)."""

    results: list[SearchHit]
    total: int
    offset: int = 0
    has_more: bool = False
    mode: SearchMode = "keyword"
    # `total` is where counting stopped: more than that many match (index/searching.COUNTED).
    total_capped: bool = False
    # When not 0, the page is the best of only this many of the matches (FTS rows) a search
    # ranks at most (index/searching.RANKED): more words or a filter rank them all.
    ranked: int = 0
    # Why meaning took no part, or only a part, when it was asked for or is the default:
    # "by words only: no memory is embedded yet (...)", and why a reranker's order did not
    # stand ("not reranked: past the reranker's 300 ms"); empty when each took its part.
    caveat: str = ""
    # How many of the best hits a reranker put in its order (0: none did).
    reranked: int = 0


@dataclass
class NoteRow:
    """A memory as the index knows it, without its body; `version` is a short hash of its
    file's content (edit_mem's expected_version)."""

    id: str
    title: str
    path: str
    version: str
    category: str | None
    tags: list[str]
    created_at: str | None
    updated_at: str | None
    last_reviewed: str | None
    scope: str | None
    expires_at: str | None
    access_count: int
    last_access: str | None
    age: str
    problem: str | None
    created_by: str | None = None
    updated_by: str | None = None
    superseded_by: str | None = None


@dataclass
class LinkRow:
    """A link between two notes as the index resolved it; target fields are None while the
    link dangles."""

    source: str
    source_id: str
    source_title: str
    raw: str
    target: str | None
    target_id: str | None
    target_title: str | None
    related: bool


@dataclass
class Usage:
    """Kept state of one memory: how often it was used, and when last."""

    access_count: int = 0
    last_access: str | None = None


@dataclass
class Stats:
    """Counts by category, scope and tag; never-used memories; files and bytes, in all and by
    category and scope."""

    memories: int
    bytes: int
    by_category: dict[str, int]
    by_scope: dict[str, int]
    by_tag: dict[str, int]
    never_used: list[str]
    bytes_by_category: dict[str, int] = field(default_factory=dict)
    bytes_by_scope: dict[str, int] = field(default_factory=dict)
    # Semantic search's state (VaultService.stats adds it; the index knows nothing of it).
    semantic: SemanticStatus | None = None


@dataclass
class Suggestion:
    """A memory that nearly matches an identifier, with how confident the match is (0..1)."""

    id: str
    title: str
    path: str
    score: float


@dataclass
class Recall:
    """What `recall` found, how sure it is (1.0 = named exactly) and how it matched."""

    memory: Memory
    confidence: float
    matched_by: str


@dataclass
class Head:
    """A memory read from the start of its file: the file's `size` in bytes, and whether the
    memory's body is `cut` (the file is bigger than what was read)."""

    memory: Memory
    size: int
    cut: bool


@dataclass
class Succession:
    """The memories one replaced (`supersedes`) and the one that replaced it (`superseded_by`):
    each link as written in its frontmatter, with the memory it names now (None if none)."""

    supersedes: list[tuple[str, Memory | None]] = field(default_factory=list)
    superseded_by: list[tuple[str, Memory | None]] = field(default_factory=list)


@dataclass
class Saved:
    """What a key-value write did: the memory, and whether it replaced one (else created it)."""

    memory: Memory
    replaced: bool


@dataclass
class Deleted:
    memory: Memory
    changed: list[str]


@dataclass
class LinkChange:
    """What `link` or `unlink` did: both memories' outgoing links, and the markdown written."""

    source: Memory
    target: Memory
    source_links: list[LinkRow]
    target_links: list[LinkRow]
    markdown: str | None
    changed: bool


@dataclass
class BriefingItem:
    id: str
    title: str
    path: str
    category: str | None
    section: str
    age: str
    stale: bool
    line: str


@dataclass
class Briefing:
    text: str
    tokens: int
    items: list[BriefingItem] = field(default_factory=list)


@dataclass
class SessionNotes:
    memory: Memory
    linked: list[Memory]
    unresolved: list[str]
