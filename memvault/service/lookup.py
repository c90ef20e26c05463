"""Finding a memory by the name a caller gives: exactly (id, path, file name, title, alias), or,
for reads only, by a clear fuzzy match on its names (never its text) with a confidence.

A near miss for `locate` is an error that lists suggestions, so no write or delete ever lands on
a memory the caller did not name; `recall` may answer with the memory clearly meant.
"""

from __future__ import annotations

from dataclasses import replace

from memvault.core.document import Document
from memvault.core.expiry import archive_folder
from memvault.core.memory import Memory
from memvault.core.records import Filter, Head, Recall, Snapshot, Suggestion
from memvault.errors import Invalid, NotFound
from memvault.index.database import Index
from memvault.search import similarity
from memvault.storage.files import VaultStore
from memvault.words import command

SUGGESTIONS = 5
# Every memory: a read finds archived and superseded ones too.
EVERY = Filter(archived=None, include_superseded=True)


class Lookup:
    """Resolves identifiers against the index, reading the memories found from the store."""

    def __init__(self, store: VaultStore, index: Index):
        self._store = store
        self._index = index

    def locate(self, identifier: str) -> str:
        """The path of the one memory an identifier names exactly, or NotFound with suggestions."""
        path = self.exact(identifier)
        if path is None:
            raise self.not_found(identifier, self.suggest(identifier))
        return path

    def exact(self, identifier: str) -> str | None:
        """The path an identifier names exactly, None if none does; NotFound if several do."""
        if not isinstance(identifier, str) or not identifier.strip():
            raise Invalid("identifier is empty; pass a memory's id, path, slug, title or alias")
        if "\x00" in identifier:
            raise Invalid(
                f"identifier {identifier!r} holds a NUL character, which no memory's name has;"
                " pass a memory's id, path, slug, title or alias"
            )
        paths = self._index.names.resolve(identifier)
        path = _plain_path(identifier)
        if not paths and path != identifier.strip():
            paths = self._index.names.resolve(path)
        if len(paths) > 1:
            first = self._index.names.note(paths[0])
            if first is not None and first.id == identifier.strip():
                return paths[0]
            raise NotFound(
                f"{identifier!r} names {len(paths)} memories: {', '.join(paths)}; "
                "use the path or id",
                [(p, p, 1.0) for p in paths],
            )
        if paths:
            return paths[0]
        return self._unindexed_file(path)

    def read(self, path: str) -> Memory:
        """A memory read fresh from its file, dated as the index dates it: by what the index
        saw of its content (core/ages.py), so a file whose mtime alone moved (copied with
        `cp -r`, touched) has not changed, and one edited since it was indexed has."""
        return self._store.read(path, self._index.entries.seen(path))[0]

    def read_head(self, path: str, limit: int) -> Head:
        """A memory read from at most `limit` bytes of its file (`VaultStore.read_head`, with
        the index's record of the file), dated as `read` dates it."""
        memory, size = self._store.read_head(path, limit, self._index.entries.file_state(path))
        return Head(memory, size, size > limit)

    def read_for_edit(self, path: str) -> tuple[Memory, Document, Snapshot]:
        """A memory an edit starts from (see `VaultStore.read_for_edit`), dated as `read`
        dates it."""
        return self._store.read_for_edit(path, self._index.entries.seen(path))

    def group(self, name: str, scope: str | None = None) -> Filter:
        """The memories a category's or a scope's `name` names (`ops` in edit_mem's `ops:*`),
        as a filter: the category's when a folder of that name holds memories, live or
        archived (with `scope`, a server's own, only those of that scope and global ones), else
        the scope's; NotFound when neither holds any, Invalid when both do."""
        key = name.strip()
        category = Filter(category=key, scope=scope)
        own = Filter(scope=key, only_scope=True)
        holds = {
            "category": self._holds(category, key, archive_folder(key)),
            "scope": self._holds(own),
        }
        if all(holds.values()):
            raise Invalid(f"{key!r} is both a category and a scope; name one memory at a time")
        if not any(holds.values()):
            raise NotFound(f"no category or scope {key!r} holds a memory")
        return category if holds["category"] else own

    def _holds(self, where: Filter, *categories: str) -> bool:
        """Whether any memory, live or archived, is in `where` (in one of `categories`)."""
        every = replace(where, archived=None, include_superseded=True)
        tried = [replace(every, category=c) for c in categories] or [every]
        return any(self._index.search.list_notes(t, limit=1)[1] for t in tried)

    def recall(self, identifier: str, scope: str | None = None) -> Recall:
        """The memory an identifier names, or, when none does exactly, the one whose name it
        clearly means (a typo, other word order, a missing word: at least `similarity.TYPO` and
        `similarity.CLEAR_LEAD` ahead of the next), with its confidence; else NotFound listing the
        candidates. Names only: a memory's text never makes it a match (search finds by text).
        `category:key` looks only in that category, `scope:key` only in that scope; a name that
        several memories share is the one in `scope` (a server's own) when only one is there.
        Reads only: writes use `locate`."""
        within, key = _split_prefix(identifier, self._index)
        exact = self._exact_in(identifier, scope) if within is None else None
        if exact is not None:
            return Recall(self.read(exact), 1.0, "exact")
        suggestions = self.suggest(key, where=within)
        if suggestions:
            best = suggestions[0]
            lead = best.score - (suggestions[1].score if len(suggestions) > 1 else 0.0)
            if best.score == 1.0 and lead > 0:
                return Recall(self.read(best.path), 1.0, "exact")
            if best.score >= similarity.TYPO and lead >= similarity.CLEAR_LEAD:
                return Recall(self.read(best.path), best.score, "name")
        raise self.not_found(identifier, suggestions)

    def _exact_in(self, identifier: str, scope: str | None) -> str | None:
        """`exact`, but a name several memories share is the one in `scope` when only one is."""
        try:
            return self.exact(identifier)
        except NotFound as exc:
            notes = [self._index.names.note(path) for path, _name, _score in exc.suggestions]
            ours = [n.path for n in notes if n is not None and scope and n.scope == scope]
            if len(ours) != 1:
                raise
            return ours[0]

    def suggest(
        self, identifier: str, limit: int = SUGGESTIONS, where: Filter | None = None
    ) -> list[Suggestion]:
        """Memories whose title, file name or alias is close to `identifier`, best first, from
        `similarity.SUGGEST_FLOOR` up; among those `where` picks (default: all)."""
        where = where or EVERY
        suggestions = []
        for path, score in similarity.closest(identifier, self._index.names.every(where), limit):
            note = self._index.names.note(path)
            if note is not None:
                suggestions.append(Suggestion(note.id, note.title, path, score))
        return suggestions

    def not_found(self, identifier: str, suggestions: list[Suggestion]) -> NotFound:
        """The error for a name no memory has: the candidates by name with their confidence,
        and where to look for a memory by what it says (search_mem to a tool's caller,
        `memvault search` on the command line)."""
        hint = (
            "; did you mean "
            + ", ".join(f"{s.title!r} ({s.score:.2f})" for s in suggestions)
            + "? Pass one of those exactly, or"
            if suggestions
            else ";"
        )
        return NotFound(
            (
                f"no memory {identifier!r}{hint} use ",
                command("search_mem", "search"),
                " to find memories by what they say",
            ),
            [(s.path, s.title, s.score) for s in suggestions],
        )

    def _unindexed_file(self, path: str) -> str | None:
        """A file the index has not seen yet, named by its relative path, if the vault holds it
        as a memory (not in a dot-folder, not a symlink to another note)."""
        if not path.lower().endswith(".md"):
            path += ".md"
        try:
            info = self._store.stat(path)
        except OSError:  # a name too long for the OS to look up
            return None
        if info is None:
            return None
        try:
            self._index.entries.upsert(info.path, self._store.read_text(info.path), info)
        except (Invalid, NotFound):
            return None
        return info.path


def _plain_path(identifier: str) -> str:
    """An identifier written as a path, without its `.` parts and doubled slashes: `./foo`,
    `.//foo` and `foo` name one file."""
    text = identifier.strip().replace("\\", "/")
    root = "/" if text.startswith("/") else ""
    return root + "/".join(part for part in text.split("/") if part not in ("", "."))


def _split_prefix(identifier: str, index: Index) -> tuple[Filter | None, str]:
    """`category:key` or `scope:key` -> (the filter of that category, else that scope, key)
    when it holds a memory; else (None, identifier)."""
    head, sep, tail = (part.strip() for part in identifier.partition(":"))
    if not (sep and head and tail):
        return None, identifier
    for where in (replace(EVERY, category=head), replace(EVERY, scope=head, only_scope=True)):
        if index.search.list_notes(where, limit=1)[1]:
            return where, tail
    return None, identifier
