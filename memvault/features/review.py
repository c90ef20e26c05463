"""What the web page shows beside search: the review queues a person works through, the
overview's counts over time, and the link graph (a memory's neighbourhood, or the whole vault
by category so that 10k memories stay readable)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Generic, Literal, TypeVar, get_args

from memvault.config import ContextSettings
from memvault.core import clock
from memvault.core.memory import Memory
from memvault.core.records import Filter, NoteRow, SemanticStatus, Stats
from memvault.core.reports import DuplicatePair
from memvault.presentation.lines import check_problems
from memvault.service.vault import VaultService

# A queue comes a page at a time, this many rows by default (its count says how many there
# are): a queue of thousands, listed whole, held the page up for seconds.
PAGE = 50
# The queues of memories, and `problems`: what `check` finds, one line each.
QueueName = Literal["stale", "unused", "expiring", "superseded", "problems"]
QUEUES: tuple[QueueName, ...] = get_args(QueueName)
# The queues of live memories, worked out from one list of them.
Waiting = Literal["stale", "unused", "expiring"]
EXPIRING_DAYS = 30
DUPLICATE_PAIRS = 20
# A neighbourhood graph stops growing here: a hub's links are cut, never the tab frozen.
GRAPH_NODES = 150
GRAPH_CATEGORIES = 40
EVERY = 10_000_000


Row = TypeVar("Row")


@dataclass
class Queue(Generic[Row]):
    """One page of what waits for one kind of review: how many in all, where the page starts
    in the queue, and its rows."""

    count: int = 0
    offset: int = 0
    items: list[Row] = field(default_factory=list)


@dataclass
class Review:
    """The queues' first pages: not reviewed for `days`, never used, expiring soon, superseded
    (replaced by a newer memory), what `check` finds (broken and one-sided links, malformed and
    unreadable notes, lost appends), and near duplicates (with both memories)."""

    days: float
    stale: Queue[NoteRow]
    unused: Queue[NoteRow]
    expiring: Queue[NoteRow]
    superseded: Queue[NoteRow]
    problems: Queue[str]
    duplicates: list[tuple[DuplicatePair, NoteRow, NoteRow]]


@dataclass
class Overview:
    """Counts by category and scope, memories created and used per month, size and health."""

    stats: Stats
    created_by_month: dict[str, int]
    used_by_month: dict[str, int]
    malformed: int
    semantic: SemanticStatus


@dataclass
class Node:
    """A memory (or, for the whole vault, a category) in the graph: how many links it has
    shown (memories in a category), and how many links from the start it lies (0..2)."""

    id: str
    label: str
    group: str
    size: int
    depth: int


@dataclass
class Graph:
    """Nodes and weighted edges (by node id); `capped` when nodes were left out."""

    nodes: list[Node]
    edges: list[tuple[str, str, int]]
    capped: bool


def every_note(vault: VaultService) -> list[NoteRow]:
    """Every live memory as the index knows it, newest first."""
    return vault.list_memories(Filter(), "updated", EVERY)[0]


def stale_days(vault: VaultService) -> float:
    """After how many days without a review a memory is stale: the vault's policies'
    `stale_days`, as for the briefing, else the briefing's default."""
    return vault.policies.stale_days or ContextSettings.stale_days


def review(vault: VaultService, days: float | None = None, limit: int = PAGE) -> Review:
    """The review queues, `limit` rows of each; `days` is how long since the last review makes
    a memory stale (None: the vault's own threshold, `stale_days`)."""
    days = stale_days(vault) if days is None else days
    rows = every_note(vault)
    by_path = {r.path: r for r in rows}
    pairs = [
        (pair, by_path[pair.first], by_path[pair.second])
        for pair in vault.upkeep.near_duplicates(DUPLICATE_PAIRS)
        if pair.first in by_path and pair.second in by_path
    ]
    return Review(
        days,
        _page(_waiting("stale", rows, days), 0, limit),
        _page(_waiting("unused", rows, days), 0, limit),
        _page(_waiting("expiring", rows, days), 0, limit),
        _page(_superseded(vault), 0, limit),
        _page(check_problems(vault.upkeep.check()), 0, limit),
        pairs,
    )


def queue(
    vault: VaultService,
    name: QueueName,
    days: float | None = None,
    offset: int = 0,
    limit: int = PAGE,
) -> Queue[NoteRow] | Queue[str]:
    """`limit` rows of one queue from `offset` on (the page's next page), counted whole; only
    that queue is worked out."""
    if name == "problems":
        return _page(check_problems(vault.upkeep.check()), offset, limit)
    if name == "superseded":
        return _page(_superseded(vault), offset, limit)
    days = stale_days(vault) if days is None else days
    return _page(_waiting(name, every_note(vault), days), offset, limit)


def overview(vault: VaultService) -> Overview:
    """The vault's counts, and its growth and use month by month."""
    rows = every_note(vault)
    created = Counter((r.created_at or "")[:7] for r in rows if r.created_at)
    used = Counter((r.last_access or "")[:7] for r in rows if r.last_access)
    return Overview(
        vault.stats(),
        dict(sorted(created.items())),
        dict(sorted(used.items())),
        sum(1 for r in rows if r.problem),
        vault.semantic_status(),
    )


def graph(vault: VaultService, identifier: str | None, depth: int) -> Graph:
    """A memory's neighbourhood to `depth` links either way, or without one the whole vault
    as categories (sized by their memories) joined by how many links run between them."""
    if identifier is None:
        return _categories(vault)
    start = _named(vault, identifier)
    nodes = {start.path: Node(start.id, start.title, start.category or "", 0, 0)}
    edges: dict[tuple[str, str], int] = {}
    frontier, capped = [start], False
    for level in (1, 2)[:depth]:
        reached = []
        for memory in frontier:
            for row in [*vault.outgoing(memory), *vault.backlinks(memory)]:
                if row.target is None or row.target_id is None:
                    continue
                ends = (
                    (row.source, row.source_id, row.source_title),
                    (row.target, row.target_id, row.target_title or ""),
                )
                for path, node_id, title in ends:
                    if path not in nodes:
                        if len(nodes) >= GRAPH_NODES:
                            capped = True
                            continue
                        nodes[path] = Node(node_id, title, _folder(path), 0, level)
                        reached.append(path)
                if row.source in nodes and row.target in nodes and row.source != row.target:
                    key = (nodes[row.source].id, nodes[row.target].id)
                    edges[key] = edges.get(key, 0) + 1
        frontier = [_named(vault, path) for path in reached] if level < depth else []
    for node in nodes.values():
        node.size = sum(1 for a, b in edges if node.id in (a, b))
    return Graph(list(nodes.values()), [(a, b, n) for (a, b), n in edges.items()], capped)


def _named(vault: VaultService, identifier: str) -> Memory:
    """A memory as the graph needs it (its names and path), read from at most the size a
    write may store of its file: a hand-made note can be far bigger, and is never read whole."""
    return vault.head(identifier, vault.limits.max_content).memory


def _categories(vault: VaultService) -> Graph:
    """The whole vault: one node per category (the biggest GRAPH_CATEGORIES)."""
    counts = vault.stats().by_category
    shown = dict(sorted(counts.items(), key=lambda item: -item[1])[:GRAPH_CATEGORIES])
    nodes = [Node(name, name, name, count, 0) for name, count in shown.items()]
    edges = []
    for source, target, count in vault.category_links():
        a, b = source or "(none)", target or "(none)"
        if a in shown and b in shown and a != b:
            edges.append((a, b, count))
    return Graph(nodes, edges, len(shown) < len(counts))


def _waiting(name: Waiting, rows: list[NoteRow], days: float) -> list[NoteRow]:
    """The live memories (`rows`) in the queue `name` (stale, unused or expiring), in its
    order: the longest unreviewed first, the newest unused first, the soonest expiring first."""
    if name == "stale":
        cutoff = clock.iso(clock.now() - timedelta(days=days))
        return sorted((r for r in rows if _reviewed(r) < cutoff), key=_reviewed)
    if name == "unused":
        return [r for r in rows if r.access_count == 0]
    soon = clock.iso(clock.now() + timedelta(days=EXPIRING_DAYS))
    return sorted((r for r in rows if r.expires_at and r.expires_at <= soon), key=_expiry)


def _superseded(vault: VaultService) -> list[NoteRow]:
    """The memories a newer one replaced, newest first."""
    rows = vault.list_memories(Filter(include_superseded=True), "updated", EVERY)[0]
    return [r for r in rows if r.superseded_by]


def _page(rows: list[Row], offset: int, limit: int) -> Queue[Row]:
    """A queue of these rows: all counted, `limit` of them listed from `offset` on."""
    return Queue(len(rows), offset, rows[offset : offset + limit])


def _reviewed(row: NoteRow) -> str:
    """When a memory was last reviewed, as the briefing counts it: its review time, else when
    it was made or changed (a note written by hand without dates is as new as its file)."""
    return row.last_reviewed or row.created_at or row.updated_at or ""


def _expiry(row: NoteRow) -> str:
    """Sort key: soonest expiry first."""
    return row.expires_at or ""


def _folder(path: str) -> str:
    """A path's folder: its category ('' at the vault's root)."""
    return path.rpartition("/")[0]
