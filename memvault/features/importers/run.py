"""An import of another tool's entries into the vault, through VaultService: one memory an
entry, found again by its source and its id there (so a second import adds nothing and
changes nothing), dated as the source dates it, secrets redacted; then the links between
them. Between two memories it can stop (Ctrl-C) and say so: the same import again finishes
it. A dry run counts what it would do and writes nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.core.records import Filter, Progress
from memvault.core.reports import SourceImport
from memvault.errors import MemvaultError
from memvault.features.importers.links import Pair, pairs
from memvault.features.importers.records import Entry, Parsed, Skip, one_line
from memvault.service.vault import VaultService

# The property holding a hash of what the import wrote: the same again is no change.
DIGEST = "source_digest"
# A memory a dry run would add: it has no path yet.
_WOULD_ADD = ""


@dataclass(frozen=True)
class Run:
    """How an import runs: `dry_run` writes nothing, `agent` is who the writes record,
    `stop` is asked between two memories (True: stop there), `progress` told (done, total)."""

    dry_run: bool = False
    agent: str | None = None
    stop: Callable[[], bool] = lambda: False
    progress: Progress | None = None


def import_parsed(vault: VaultService, parsed: Parsed, run: Run = Run()) -> SourceImport:
    """Import what a reader found in a file (see the module's docstring)."""
    return _Import(vault, parsed, run).run()


class _Import:
    """One import: its report, and the memory of each source id met so far."""

    def __init__(self, vault: VaultService, parsed: Parsed, run: Run):
        self._vault = vault
        self._parsed = parsed
        self._run = run
        self.report = SourceImport(parsed.format, run.dry_run)
        self._paths: dict[str, str] = {}
        self._first: dict[str, str] = {}

    def run(self) -> SourceImport:
        """Each entry, then each pair of related entries, until done or asked to stop."""
        linked = pairs(self._parsed.relations, self._skip)
        steps = [partial(self._entry, item) for item in self._parsed.entries]
        steps += [partial(self._link, pair) for pair in linked]
        for done, step in enumerate(steps, 1):
            if self._run.stop():
                self.report.interrupted = True
                break
            step()
            if self._run.progress is not None:
                self._run.progress(done, len(steps))
        return self.report

    def _skip(self, skip: Skip) -> None:
        self.report.skipped.append({"entry": skip.where, "reason": skip.reason})

    def _entry(self, item: Entry | Skip) -> None:
        """Add, update or leave the memory of one entry; skip it, saying why, when it is
        malformed, a repeat of one met before, or refused by the vault."""
        if isinstance(item, Skip):
            self._skip(item)
            return
        earlier = self._first.setdefault(item.source_id, item.where)
        if earlier != item.where:
            self._skip(Skip(item.where, f"{earlier} has the same id"))
            return
        try:
            self._paths[item.source_id] = self._write(item)
        except MemvaultError as exc:
            self._skip(Skip(item.where, exc.in_words("cli")))

    def _write(self, item: Entry) -> str:
        """The path of the entry's memory once added or brought up to date (a dry run only
        counts which it would be)."""
        options = WriteOptions(
            self._run.agent, allow_duplicate=True, secrets="redact", at=item.updated_at
        )
        properties = {**item.properties, DIGEST: item.digest}
        title = one_line(item.title, self._vault.limits.max_title)
        path = self._find(item.source_id)
        if path is None:
            if not self._run.dry_run:
                draft = Draft(
                    title,
                    item.body,
                    category=item.category,
                    properties=properties,
                    created_at=item.created_at,
                )
                path = self._vault.create(draft, options).path
            self.report.added += 1
            return path or _WOULD_ADD
        if self._vault.get(path).metadata.get(DIGEST) == item.digest:
            self.report.unchanged += 1
            return path
        if not self._run.dry_run:
            revision = Revision(title, BodyEdit(content=item.body), properties=properties)
            path = self._vault.update(path, revision, options).path
        self.report.updated += 1
        return path

    def _find(self, source_id: str) -> str | None:
        """The path of the memory an earlier import made of the entry, archived or not."""
        if source_id in self._paths:
            return self._paths[source_id]
        keys = (("source", self._parsed.format), ("source_id", source_id))
        where = Filter(archived=None, where=keys, include_superseded=True)
        rows, _total = self._vault.list_memories(where, "created", 1)
        return rows[0].path if rows else None

    def _link(self, pair: Pair) -> None:
        """Link the memories of two related entries both ways, unless they are already."""
        ends = [self._find(pair.a), self._find(pair.b)]
        missing = [name for name, path in zip((pair.a, pair.b), ends, strict=True) if path is None]
        if missing:
            names = " or ".join(repr(name) for name in missing)
            self._skip(Skip(pair.where, f"no entity named {names} in the file or the vault"))
            return
        a, b = (path or _WOULD_ADD for path in ends)
        if self._run.dry_run:
            linked = bool(a and b) and self._lists(a, b) and self._lists(b, a)
        else:
            text, back = pair.texts()
            try:
                change = self._vault.link(a, b, text, back_text=back, agent=self._run.agent)
            except MemvaultError as exc:
                self._skip(Skip(pair.where, exc.in_words("cli")))
                return
            linked = not change.changed
        if linked:
            self.report.links_unchanged += 1
        else:
            self.report.links_added += 1

    def _lists(self, path: str, other: str) -> bool:
        """Whether the memory at `path` lists the one at `other` under Related."""
        rows = self._vault.outgoing(self._vault.get(path))
        return any(row.related and row.target == other for row in rows)
