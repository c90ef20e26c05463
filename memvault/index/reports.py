"""Reports on the whole index: stats, link counts, what `check` finds (dangling and ambiguous
links, duplicate ids, files indexed read-only, one-sided Related links), the links between
categories, a change fingerprint, and the memories upkeep archives (expired, unused)."""

from __future__ import annotations

from memvault.core.records import Stats
from memvault.index.connections import ConnectionPool
from memvault.index.search_sql import ARCHIVED
from memvault.index.usage_counts import Tally

# How stats name a note's category and scope: '(none)' and '(global)' when it has none.
_CATEGORY_KEY = "CASE folder WHEN '' THEN '(none)' ELSE folder END"
_SCOPE_KEY = "coalesce(scope, '(global)')"


class Reports:
    """Figures and findings over every note, for stats, `check`, the review page and upkeep."""

    def __init__(self, pool: ConnectionPool, uses: Tally):
        """Reports on the index `pool` connects to; `uses` holds the uses not saved yet."""
        self._pool = pool
        self._uses = uses

    def link_counts(self) -> tuple[int, int, int]:
        """(links between notes, of which unresolved, links to attachments)."""
        row = self._pool.query(
            "SELECT count(*) FILTER (WHERE NOT attachment),"
            " count(*) FILTER (WHERE NOT attachment AND target IS NULL),"
            " count(*) FILTER (WHERE attachment) FROM links"
        )[0]
        return int(row[0]), int(row[1]), int(row[2])

    def expired(self, now: str) -> list[str]:
        """Paths of memories past their `expires_at` that are not archived yet."""
        rows = self._pool.query(
            "SELECT path FROM notes WHERE expires_at IS NOT NULL AND expires_at <= ?"
            f" AND NOT {ARCHIVED} ORDER BY path",
            (now,),
        )
        return [r[0] for r in rows]

    def unused(self, before: str) -> list[tuple[str, str | None]]:
        """(path, category) of the live memories last used, changed and made before `before`
        (none used since in this process either)."""
        unsaved = self._uses.snapshot()
        rows = self._pool.query(
            "SELECT n.path, n.folder, n.id FROM notes n LEFT JOIN usage u ON u.id = n.id"
            f" WHERE NOT {ARCHIVED} AND max(coalesce(n.updated_at, ''),"
            " coalesce(n.created_at, ''), coalesce(u.last_access, '')) < ? ORDER BY n.path",
            (before,),
        )
        return [(r[0], r[1] or None) for r in rows if r[2] not in unsaved]

    def count(self) -> int:
        """How many notes the index holds (archived ones too: they have vectors as well)."""
        return int(self._pool.query("SELECT count(*) FROM notes")[0][0])

    def stats(self) -> Stats:
        """Counts by category, scope and tag; never-used memories; files and bytes."""

        def counts(sql: str) -> dict[str, int]:
            """The (key, count) rows of `sql` as a dict, in their order."""
            return {str(r[0]): int(r[1]) for r in self._pool.query(sql)}

        def sizes(key: str) -> dict[str, int]:
            """Bytes of the notes by `key`, in the order of the counts (most notes first)."""
            return counts(
                f"SELECT {key}, coalesce(sum(size), 0) FROM notes GROUP BY 1"
                " ORDER BY count(*) DESC, 1"
            )

        unsaved = self._uses.snapshot()
        never = self._pool.query(
            "SELECT n.path, n.id FROM notes n LEFT JOIN usage u ON u.id = n.id"
            " WHERE coalesce(u.access_count, 0) = 0 ORDER BY n.path"
        )
        totals = self._pool.query("SELECT count(*), coalesce(sum(size), 0) FROM notes")[0]
        return Stats(
            memories=int(totals[0]),
            bytes=int(totals[1]),
            by_category=counts(
                f"SELECT {_CATEGORY_KEY}, count(*) FROM notes GROUP BY 1 ORDER BY 2 DESC, 1"
            ),
            by_scope=counts(
                f"SELECT {_SCOPE_KEY}, count(*) FROM notes GROUP BY 1 ORDER BY 2 DESC, 1"
            ),
            by_tag=counts(
                "SELECT lower(tag), count(DISTINCT note) FROM tags GROUP BY 1 ORDER BY 2 DESC, 1"
            ),
            never_used=[r[0] for r in never if r[1] not in unsaved],
            bytes_by_category=sizes(_CATEGORY_KEY),
            bytes_by_scope=sizes(_SCOPE_KEY),
        )

    def dangling(self) -> list[tuple[str, str]]:
        """(source path, target as written) of every link that resolves to no note."""
        rows = self._pool.query(
            "SELECT s.path, l.raw FROM links l JOIN notes s ON s.rowid = l.source"
            " WHERE l.target IS NULL AND NOT l.attachment ORDER BY s.path, l.rowid"
        )
        return [(r[0], r[1]) for r in rows]

    def duplicate_ids(self) -> list[tuple[str, list[str]]]:
        """(id, paths) of every id that more than one file has."""
        rows = self._pool.query(
            "SELECT id, group_concat(path, char(10)) FROM (SELECT id, path FROM notes ORDER BY"
            " path) GROUP BY id HAVING count(*) > 1"
        )
        return [(r[0], r[1].split("\n")) for r in rows]

    def problems(self) -> list[tuple[str, str]]:
        """(path, problem) of every file indexed read-only for a problem its frontmatter has."""
        rows = self._pool.query(
            "SELECT path, problem FROM notes WHERE problem IS NOT NULL ORDER BY path"
        )
        return [(r[0], r[1]) for r in rows]

    def ambiguous(self) -> list[tuple[str, str, list[str]]]:
        """(source, target as written, candidates) where a bare name fits several files."""
        rows = self._pool.query(
            "SELECT s.path, l.raw, (SELECT group_concat(path, char(10)) FROM notes n"
            " WHERE n.stem_key = l.key) FROM links l JOIN notes s ON s.rowid = l.source"
            " WHERE NOT l.has_path AND NOT l.attachment AND l.target IS NOT NULL"
            " AND (SELECT count(*) FROM notes n WHERE n.stem_key = l.key) > 1"
        )
        return [(r[0], r[1], sorted(r[2].split("\n"))) for r in rows]

    def category_links(self) -> list[tuple[str, str, int]]:
        """(source folder, target folder, how many links) over every resolved link."""
        rows = self._pool.query(
            "SELECT s.folder, t.folder, count(*) FROM links l JOIN notes s ON s.rowid = l.source"
            " JOIN notes t ON t.rowid = l.target WHERE NOT l.attachment GROUP BY 1, 2"
        )
        return [(r[0], r[1], int(r[2])) for r in rows]

    def fingerprint(self) -> str:
        """A short text that changes whenever a note is added, removed, moved or edited (what
        the web page polls to show changes made elsewhere without a reload)."""
        row = self._pool.query(
            "SELECT count(*), coalesce(max(rowid), 0), coalesce(sum(mtime_ns % 1000000007), 0),"
            " coalesce(sum(length(path)), 0) FROM notes"
        )[0]
        return "-".join(str(value) for value in row)

    def related_pairs(self) -> list[tuple[str, str]]:
        """(source, target) for every resolved link in a `## Related` list."""
        rows = self._pool.query(
            "SELECT DISTINCT s.path, t.path FROM links l JOIN notes s ON s.rowid = l.source"
            " JOIN notes t ON t.rowid = l.target WHERE l.related ORDER BY s.path, t.path"
        )
        return [(r[0], r[1]) for r in rows]
