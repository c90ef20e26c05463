"""Plain-data views of memories and results, shared by the CLI and the MCP server."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from .markdown import to_plain
from .model import Memory
from .records import CheckReport, LinkRow, NoteRow, RebuildSummary, SearchPage, SyncSummary


def outgoing_view(rows: list[LinkRow]) -> list[dict[str, Any]]:
    """Where a memory's links lead, each target once; a dangling link (id and path None) is
    shown by the target as written."""
    seen: dict[str, dict[str, Any]] = {}
    for row in rows:
        key = row.target or f"?{row.raw}"
        if key not in seen:
            title = row.target_title if row.target else row.raw
            seen[key] = {"id": row.target_id, "title": title, "path": row.target, "raw": row.raw}
    return list(seen.values())


def memory_view(
    memory: Memory, outgoing: list[LinkRow], backlinks: list[LinkRow]
) -> dict[str, Any]:
    """Every field of a memory, as `read --format json` and `read_mem` return it."""
    back_paths = sorted({row.source for row in backlinks if row.source != memory.path})
    return {
        "id": memory.id,
        "title": memory.title,
        "path": memory.path,
        "category": memory.category,
        "scope": memory.scope,
        "tags": memory.tags,
        "aliases": memory.aliases,
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
        "last_reviewed": memory.last_reviewed,
        "expires_at": memory.expires_at,
        "content": memory.body,
        "links": outgoing_view(outgoing),
        "backlinks": back_paths,
        "frontmatter": {k: v for k, v in memory.metadata.items()},
        "problem": memory.problem,
    }


def plain_text(memory: Memory) -> str:
    return f"{memory.title}\n\n{to_plain(memory.body).strip()}\n"


def note_view(row: NoteRow) -> dict[str, Any]:
    return asdict(row)


def search_view(page: SearchPage) -> dict[str, Any]:
    return {"results": [asdict(hit) for hit in page.results], "total": page.total}


def summary_view(summary: RebuildSummary | SyncSummary) -> dict[str, Any]:
    """A reindex or sync summary as JSON: its counts, skipped files, seconds to the ms."""
    return {**asdict(summary), "seconds": round(summary.seconds, 3)}


def check_view(report: CheckReport) -> dict[str, Any]:
    return {
        "clean": report.clean,
        "broken_links": [{"source": s, "target": t} for s, t in report.broken_links],
        "one_sided_links": [{"source": s, "target": t} for s, t in report.one_sided],
        "duplicate_ids": [{"id": i, "paths": p} for i, p in report.duplicate_ids],
        "malformed": [{"path": p, "problem": m} for p, m in report.malformed],
        "ambiguous_links": [
            {"source": s, "target": t, "candidates": c} for s, t, c in report.ambiguous
        ],
        "fixed": report.fixed,
    }
