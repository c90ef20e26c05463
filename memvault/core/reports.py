"""What upkeep and `check` report: a rebuild's and a sync's summaries, the file upkeep done,
the problems `check` finds (links, ids, frontmatter, lost appends, secrets, near duplicates)
and an import's outcome. Plain dataclasses, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field

from memvault.core.records import Skipped


@dataclass
class RebuildSummary:
    notes: int = 0
    links: int = 0
    unresolved_links: int = 0
    attachments: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    seconds: float = 0.0
    dropped_vectors: int = 0


@dataclass
class SyncSummary:
    """What an incremental pass found: counts of files by what happened to them."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    moved: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class Maintenance:
    """What upkeep did to the files: renames a crash cut short and finished, and expired
    memories moved to the archive."""

    finished_renames: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """What was done, one line each, as the CLI and the server's start-up report it."""
        return [*self.finished_renames, *(f"archived (expired): {p}" for p in self.archived)]


@dataclass
class LinkPair:
    """A link from one memory to another (as written when it dangles)."""

    source: str
    target: str


@dataclass
class BrokenLink:
    """A link to no note, once for each note and name it names (as first written there), with
    the lines of the file it is on (none when the file cannot be read now)."""

    source: str
    target: str
    lines: list[int]


@dataclass
class DuplicateId:
    id: str
    paths: list[str]


@dataclass
class Malformed:
    """A file memvault indexes read-only, and why."""

    path: str
    problem: str


@dataclass
class LostAppend:
    """An append memvault acknowledged that its memory no longer holds (an editor that read
    the note before it saved that copy over it): where, when, and its text to put back (the
    first 2,000 characters)."""

    path: str
    appended_at: str
    text: str


@dataclass
class AmbiguousLink:
    """A link whose bare name fits several files (it resolves to the nearest)."""

    source: str
    target: str
    candidates: list[str]


@dataclass
class CheckReport:
    """What `memvault check` found, and with `--fix`, what it repaired; `clean` when nothing
    is left to report."""

    broken_links: list[BrokenLink] = field(default_factory=list)
    one_sided_links: list[LinkPair] = field(default_factory=list)
    duplicate_ids: list[DuplicateId] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)
    ambiguous_links: list[AmbiguousLink] = field(default_factory=list)
    unreadable: list[Skipped] = field(default_factory=list)
    secrets: list[FileSecret] = field(default_factory=list)
    lost_appends: list[LostAppend] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    clean: bool = field(init=False)

    def __post_init__(self) -> None:
        self.clean = not (
            self.broken_links
            or self.one_sided_links
            or self.duplicate_ids
            or self.malformed
            or self.ambiguous_links
            or self.unreadable
            or self.secrets
            or self.lost_appends
        )


@dataclass(frozen=True)
class DuplicatePair:
    """Two memories (paths) whose texts are near duplicates, and how alike they are (0..1)."""

    first: str
    second: str
    score: float


@dataclass
class FileSecret:
    """A secret `check --secrets` found in a file: its kind and line, never its text."""

    path: str
    kind: str
    line: int


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    conflicts: list[dict[str, str]] = field(default_factory=list)


@dataclass
class SourceImport:
    """What an import of another tool's data did (or, in a `dry_run`, would do): memories
    added, updated and left unchanged, links added and already there, and the entries
    skipped, each with where it is in the file and why. `interrupted`: stopped by Ctrl-C
    between two memories; the same import again finishes it."""

    format: str
    dry_run: bool = False
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    links_added: int = 0
    links_unchanged: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)
    interrupted: bool = False
