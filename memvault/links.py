"""LinkService: keeps links between memories bidirectional and never leaves one broken.

`link`/`unlink` edit both memories' `## Related` lists; a rename rewrites every inbound link
(keeping its text, heading and block parts); a delete removes every inbound link. Callers hold
the vault lock; each file is written atomically.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from . import clock
from .document import Document
from .errors import Invalid
from .index import Index
from .markdown import (
    Link,
    add_related,
    format_link,
    related_links,
    remove_related,
    rewrite_links,
    unlink_inline,
    wikilink,
)
from .model import Memory
from .records import LinkChange
from .rows import link_key, link_keys
from .store import VaultStore


class LinkService:
    """Writes and removes links in memory files, and keeps the index in step."""

    def __init__(self, store: VaultStore, index: Index):
        self.store = store
        self.index = index

    def save(self, path: str, doc: Document, body: str, updates: dict[str, object]) -> Memory:
        """Write a memory file and index it; the one way every service changes a file."""
        text, info = self.store.save(path, doc, body, updates)
        return self.index.upsert(path, text, info)

    def touch(self, path: str, doc: Document, body: str) -> Memory:
        """Save a body change, stamping `updated_at` where the file has frontmatter we may edit."""
        stamp = doc.writable and doc.frontmatter is not None
        return self.save(path, doc, body, {"updated_at": clock.now_iso()} if stamp else {})

    def link(self, source_path: str, target_path: str, text: str | None = None) -> LinkChange:
        """Add each memory to the other's `## Related` list; a link already there is kept."""
        if source_path == target_path:
            raise Invalid("a memory cannot link to itself; pick two different memories")
        with self.store.lock():
            source, source_doc = self.store.read(source_path)
            target, target_doc = self.store.read(target_path)
            written = wikilink(target.stem, text or target.title)
            changed = False
            if not self._lists(source.path, source.body, target.path):
                source = self.touch(source.path, source_doc, add_related(source.body, written))
                changed = True
            if not self._lists(target.path, target.body, source.path):
                back = wikilink(source.stem, source.title)
                target = self.touch(target.path, target_doc, add_related(target.body, back))
                changed = True
            return self._change(source, target, written if changed else None, changed)

    def unlink(self, source_path: str, target_path: str) -> LinkChange:
        """Remove each memory from the other's `## Related` list (links in prose stay)."""
        with self.store.lock():
            source, source_changed = self._drop_related(source_path, target_path)
            target, target_changed = self._drop_related(target_path, source_path)
            return self._change(source, target, None, source_changed or target_changed)

    def _drop_related(self, path: str, other: str) -> tuple[Memory, bool]:
        memory, doc = self.store.read(path)
        body = remove_related(memory.body, self._points_to(path, other))
        if body == memory.body:
            return memory, False
        return self.touch(path, doc, body), True

    def rename(
        self, memory: Memory, doc: Document, body: str, fields: dict[str, object], new_path: str
    ) -> Memory:
        """Move a memory to `new_path` with its new body and fields, then point every inbound
        link at it. A journal entry written first lets `recover` finish the job after a crash."""
        sources = [new_path if s == memory.path else s for s in self._sources(memory.path, True)]
        entry = {"old": memory.path, "new": new_path, "keys": _keys_of(memory), "sources": sources}
        name = self.store.journal_add(entry)
        self.store.save(memory.path, doc, body, fields)
        self.store.move(memory.path, new_path)
        self.index.remove(memory.path)
        moved = self.index.upsert(
            new_path, self.store.read_text(new_path), self.store.info(new_path)
        )
        self._retarget(entry)
        self.store.journal_done(name)
        return moved

    def recover(self) -> list[str]:
        """Finish renames a crash interrupted: point their inbound links at the new file."""
        done = []
        with self.store.lock():
            for name, entry in self.store.journal():
                if self.store.stat(entry["new"]) is not None:
                    self.index.refresh(self.store, entry["new"])
                    self.index.refresh(self.store, entry["old"])
                    self._retarget(entry)
                    done.append(f"finished renaming {entry['old']} to {entry['new']}")
                self.store.journal_done(name)
        return done

    def _retarget(self, entry: dict[str, Any]) -> None:
        """Rewrite links in the entry's sources that named the old file and now resolve nowhere."""
        keys = set(entry["keys"])
        for source in entry["sources"]:
            if self.store.stat(source) is None:
                continue
            memory, doc = self.store.read(source)

            def retarget(link: Link, source: str = source) -> str | None:
                if not _names(source, link, keys):
                    return None
                if self.index.resolve_link(source, link) is not None:
                    return None
                return format_link(link, _new_target(link, source, entry["new"]))

            body = rewrite_links(memory.body, retarget)
            if body != memory.body:
                self.touch(source, doc, body)

    def remove_inbound(self, path: str) -> list[str]:
        """Take every link to `path` out of other memories: list items go, prose keeps the text."""
        changed = []
        for source in self._sources(path):
            memory, doc = self.store.read(source)
            points = self._points_to(source, path)
            body = unlink_inline(remove_related(memory.body, points), points)
            if body != memory.body:
                self.touch(source, doc, body)
                changed.append(source)
        return changed

    def one_sided(self) -> list[tuple[str, str]]:
        """(source, target) pairs where the source lists the target under Related but not back."""
        pairs: set[tuple[str, str]] = set(self.index.related_pairs())
        return sorted((a, b) for a, b in pairs if (b, a) not in pairs and a != b)

    def repair(self) -> list[tuple[str, str]]:
        """Add the missing side of every one-sided Related link; returns the pairs fixed."""
        fixed = []
        with self.store.lock():
            for source, target in self.one_sided():
                memory, doc = self.store.read(target)
                if not doc.writable and not self._lists(target, memory.body, source):
                    continue
                back, _ = self.store.read(source)
                self.touch(target, doc, add_related(memory.body, wikilink(back.stem, back.title)))
                fixed.append((source, target))
        return fixed

    def _sources(self, path: str, include_self: bool = False) -> list[str]:
        sources = {row.source for row in self.index.backlinks(path)}
        return sorted(sources if include_self else sources - {path})

    def _points_to(self, source: str, target: str) -> Callable[[Link], bool]:
        return lambda link: self.index.resolve_link(source, link) == target

    def _lists(self, source: str, body: str, target: str) -> bool:
        points = self._points_to(source, target)
        return any(points(link) for link in related_links(body))

    def _change(
        self, source: Memory, target: Memory, markdown: str | None, changed: bool
    ) -> LinkChange:
        return LinkChange(
            source=source,
            target=target,
            source_links=self.index.outgoing(source.path),
            target_links=self.index.outgoing(target.path),
            markdown=markdown,
            changed=changed,
        )


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


def _new_target(link: Link, source: str, new_path: str) -> str:
    """How `link`, written in `source`, should name the file now at `new_path`."""
    new = PurePosixPath(new_path)
    if link.kind == "markdown":
        return posixpath.relpath(new_path, PurePosixPath(source).parent.as_posix())
    keep_md = link.target.lower().endswith(".md")
    name = new.as_posix() if "/" in link.target else new.name
    return name if keep_md else name[:-3]
