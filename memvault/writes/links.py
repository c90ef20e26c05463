"""LinkService: keeps links between memories bidirectional and never leaves one broken.

`link`/`unlink` edit both memories' `## Related` lists, naming each other as Obsidian resolves
(the file name, or the path when the name is not unique); a rename rewrites every inbound link
(keeping the words it showed, its heading and block parts); a delete removes every inbound link,
leaving its words in prose. It only
rewrites links: files are written by the write layer (writer.py). Callers hold the vault lock.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from functools import partial
from pathlib import PurePosixPath
from typing import Any

from memvault.core.markdown import (
    Link,
    add_related,
    related_links,
    remove_related,
    rewrite_links,
    unlink_inline,
    wikilink,
)
from memvault.core.memory import Memory
from memvault.core.records import LinkChange
from memvault.errors import Invalid
from memvault.index import sync
from memvault.index.database import Index
from memvault.index.rows import link_key, link_keys
from memvault.storage.files import VaultStore
from memvault.storage.journal import Journal
from memvault.writes.renamed_links import Renamed, moved, retitled, shows_old_title
from memvault.writes.writer import Rewrite, Writer


class LinkService:
    """Writes and removes links in memory files, through the write layer."""

    def __init__(self, store: VaultStore, index: Index, writer: Writer, journal: Journal):
        self._store = store
        self._index = index
        self._writer = writer
        self._journal = journal

    def link(
        self,
        source_path: str,
        target_path: str,
        text: str | None = None,
        back_text: str | None = None,
    ) -> LinkChange:
        """Add each memory to the other's `## Related` list, showing `text` and `back_text`
        (default: the other's title); a link already there is kept."""
        if source_path == target_path:
            raise Invalid("a memory cannot link to itself; pick two different memories")
        source, _doc = self._store.read(source_path)
        target, _doc = self._store.read(target_path)
        written = wikilink(self._name(target_path), text or target.title)
        back = wikilink(self._name(source_path), back_text or source.title)
        source, source_changed = self._writer.edit_body(
            source_path, lambda m: self._add(m, target_path, written)
        )
        target, target_changed = self._writer.edit_body(
            target_path, lambda m: self._add(m, source_path, back)
        )
        changed = source_changed or target_changed
        return self._change(source, target, written if changed else None, changed)

    def _add(self, memory: Memory, other: str, written: str) -> str:
        """The memory's body with `written` added under Related, unless it lists `other`."""
        if self._lists(memory.path, memory.body, other):
            return memory.body
        return add_related(memory.body, written)

    def unlink(self, source_path: str, target_path: str) -> LinkChange:
        """Remove each memory from the other's `## Related` list (links in prose stay)."""
        source, source_changed = self._drop_related(source_path, target_path)
        target, target_changed = self._drop_related(target_path, source_path)
        return self._change(source, target, None, source_changed or target_changed)

    def _drop_related(self, path: str, other: str) -> tuple[Memory, bool]:
        """Take `other` out of the Related list of the memory at `path`."""
        return self._writer.edit_body(
            path, lambda memory: remove_related(memory.body, self._points_to(path, other))
        )

    def move(self, change: Rewrite, new_path: str) -> Memory:
        """Move a memory to `new_path` (or retitle it in place) with its new body and fields
        (by the write layer), then point every inbound link at it. A journal entry written
        first lets `recover` finish the job after a crash."""
        memory = change.memory
        inbound = self._index.names.backlinks(memory.path)
        sources = sorted({new_path if row.source == memory.path else row.source for row in inbound})
        pointing: dict[str, list[str]] = {source: [] for source in sources}
        for row in inbound:
            pointing[new_path if row.source == memory.path else row.source].append(row.raw)
        entry = {
            "old": memory.path,
            "new": new_path,
            "keys": _keys_of(memory),
            "sources": sources,
            "pointing": pointing,
            "title": memory.title,
            "new_title": str(change.fields.get("title", memory.title)),
        }
        name = self._journal.add(entry)
        if new_path == memory.path:
            done = self._writer.save(new_path, change.doc, change.body, change.fields, change.base)
        else:
            done = self._writer.move(change, new_path)
        self._retarget(entry)
        self._journal.done(name)
        return done

    def recover(self) -> list[str]:
        """Finish renames a crash interrupted: point their inbound links at the new file."""
        done = []
        for name, entry in self._journal.entries():
            if self._store.stat(entry["new"]) is not None:
                sync.refresh(self._index, self._store, entry["new"])
                sync.refresh(self._index, self._store, entry["old"])
                self._retarget(entry)
                done.append(f"finished renaming {entry['old']} to {entry['new']}")
            self._journal.done(name)
        return done

    def _retarget(self, entry: dict[str, Any]) -> None:
        """Rewrite links in the entry's sources that named the old file and now resolve nowhere,
        or to another note than the moved one (`archive/ops/outage.md` was there before
        `ops/outage.md` was archived as `outage-2.md`): those the entry says pointed at it.
        Related items that showed the old title show the new one."""
        keys = set(entry["keys"])
        title = str(entry.get("title", ""))
        renamed = Renamed(entry["old"], title, str(entry.get("new_title", title)))
        name = self._name(entry["new"])
        for source in entry["sources"]:
            if self._store.stat(source) is None:
                continue
            pointed = set(entry.get("pointing", {}).get(source, ()))

            def retarget(memory: Memory, source: str = source, pointed: set[str] = pointed) -> str:
                """The source's body with its links to the renamed note rewritten."""
                items = {link.start for link in related_links(memory.body)}

                def fix(link: Link) -> str | None:
                    if not _names(source, link, keys):
                        return None
                    now = self._index.names.resolve_link(source, link)
                    item = link.start in items
                    if now == entry["new"] or (now is not None and link.target not in pointed):
                        if item and now == entry["new"] and shows_old_title(link, renamed):
                            return retitled(link, link.target, renamed.new_title)
                        return None
                    target = _new_target(link, source, entry["new"], name)
                    return moved(memory.body, link, target, renamed, item)

                return rewrite_links(memory.body, fix)

            self._writer.edit_body(source, retarget)

    def fold(self, gone: Memory, into: str) -> None:
        """Delete the memory `gone` and point every link to it at the memory at `into` instead
        (a merge); `into`'s own links to it go."""
        inbound = self._index.names.backlinks(gone.path)
        sources = sorted({row.source for row in inbound} - {gone.path, into})
        if any(row.source == into for row in inbound):
            self._writer.edit_body(into, partial(_unlinked, self._points_to(into, gone.path)))
        pointing = {s: [row.raw for row in inbound if row.source == s] for s in sources}
        self._writer.remove(gone.path)
        entry = {"old": gone.path, "new": into, "keys": _keys_of(gone), "sources": sources}
        self._retarget({**entry, "pointing": pointing})

    def remove_inbound(self, path: str) -> list[str]:
        """Take every link to `path` out of other memories: list items go, prose keeps the text."""
        changed = []
        for source in self._sources(path):
            points = self._points_to(source, path)
            _memory, edited = self._writer.edit_body(source, partial(_unlinked, points))
            if edited:
                changed.append(source)
        return changed

    def one_sided(self) -> list[tuple[str, str]]:
        """(source, target) pairs where the source lists the target under Related but not back."""
        pairs: set[tuple[str, str]] = set(self._index.reports.related_pairs())
        return sorted((a, b) for a, b in pairs if (b, a) not in pairs and a != b)

    def repair(self) -> list[tuple[str, str]]:
        """Add the missing side of every one-sided Related link; returns the pairs fixed."""
        fixed = []
        for source, target in self.one_sided():
            if self._store.read(target)[1].writable:
                back, _doc = self._store.read(source)
                written = wikilink(self._name(source), back.title)
                self._writer.edit_body(target, partial(self._add, other=source, written=written))
                fixed.append((source, target))
        return fixed

    def _name(self, path: str) -> str:
        """How a wikilink names the note at `path` so that Obsidian resolves it too: its file
        name, or its path without `.md` when another note has that file name."""
        if self._index.names.stem_paths(PurePosixPath(path).stem) in ([], [path]):
            return PurePosixPath(path).stem
        return path[:-3]

    def _sources(self, path: str) -> list[str]:
        return sorted({row.source for row in self._index.names.backlinks(path)} - {path})

    def _points_to(self, source: str, target: str) -> Callable[[Link], bool]:
        return lambda link: self._index.names.resolve_link(source, link) == target

    def _lists(self, source: str, body: str, target: str) -> bool:
        points = self._points_to(source, target)
        return any(points(link) for link in related_links(body))

    def _change(
        self, source: Memory, target: Memory, markdown: str | None, changed: bool
    ) -> LinkChange:
        return LinkChange(
            source=source,
            target=target,
            source_links=self._index.names.outgoing(source.path),
            target_links=self._index.names.outgoing(target.path),
            markdown=markdown,
            changed=changed,
        )


def _unlinked(points: Callable[[Link], bool], memory: Memory) -> str:
    """The memory's body without the links `points` picks: list items go, prose keeps the text."""
    return unlink_inline(remove_related(memory.body, points), points)


def _keys_of(memory: Memory) -> list[str]:
    """Every lower-case name a link may use for this memory: path, file name, title, aliases."""
    return sorted(
        {link_key(memory.path), memory.stem.lower(), memory.title.lower()}
        | {alias.lower() for alias in memory.aliases}
    )


def _names(source: str, link: Link, keys: set[str]) -> bool:
    """Whether `link`, written in `source`, names a note known by `keys`."""
    key, name, alt, has_path = link_keys(source, link)
    if key in keys or (alt is not None and alt in keys):
        return True
    return has_path and any(k.endswith("/" + key) for k in keys if "/" in k) and name in keys


def _new_target(link: Link, source: str, new_path: str, name: str) -> str:
    """How `link`, written in `source`, should name the file now at `new_path` (`name`: how a
    wikilink names it, see `LinkService._name`)."""
    if link.kind == "markdown":
        return posixpath.relpath(new_path, PurePosixPath(source).parent.as_posix())
    keep_md = link.target.lower().endswith(".md")
    written = new_path[:-3] if "/" in link.target else name
    return written + new_path[-3:] if keep_md else written
