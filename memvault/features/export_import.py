"""Export memories to JSON or JSON Lines, and import them back (idempotent by id)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from typing import Any

from memvault.core.memory import Memory, path_problem
from memvault.core.records import Filter, Recall, Usage
from memvault.core.reports import ImportReport
from memvault.core.secrets import SecretPolicy
from memvault.errors import Invalid, MemvaultError
from memvault.presentation.output import LinkEnd, MemoryOut, distinct_targets
from memvault.service.vault import VaultService

FORMAT = "memvault-export/1"
# read_mem's fields that say how a read went, not what the memory is: not exported.
_READ_ONLY = {"age", "reviewed", "confidence", "matched_by", "version"}
# read_mem's fields read from the frontmatter, which the export holds whole: not repeated.
_IN_FRONTMATTER = {"properties", "created_by", "updated_by", "supersedes", "superseded_by"}


def export_records(vault: VaultService, where: Filter | None = None) -> Iterator[dict[str, Any]]:
    """Every memory `where` picks, with its metadata, links and kept state (usage)."""
    usage = vault.usage()
    offset = 0
    while True:
        rows, _total = vault.list_memories(
            where or Filter(archived=None, include_superseded=True), "title", 500, offset
        )
        if not rows:
            return
        for row in rows:
            try:
                memory = vault.get(row.path)
            except MemvaultError:
                continue
            yield export_record(vault, memory, usage.get(memory.id, Usage()))
        offset += len(rows)


def export_record(vault: VaultService, memory: Memory, used: Usage) -> dict[str, Any]:
    """One memory as "memvault-export/1" holds it: read_mem's json fields, with each link's
    target as written (`raw`), the backlinks as sorted paths, and the usage."""
    outgoing = vault.outgoing(memory)
    full = MemoryOut.of(Recall(memory, 1.0, "exact"), outgoing, vault.backlinks(memory), "json")
    return {
        **full.model_dump(mode="json", exclude=_READ_ONLY | _IN_FRONTMATTER),
        "links": [
            {**LinkEnd.target(row).model_dump(mode="json"), "raw": row.raw}
            for row in distinct_targets(outgoing)
        ],
        "backlinks": sorted({end.path for end in full.backlinks if end.path}),
        "usage": asdict(used),
    }


def dump(records: Iterable[dict[str, Any]], fmt: str) -> Iterator[str]:
    """Chunks of the export text: one JSON document, or one JSON object per line."""
    if fmt == "jsonl":
        for record in records:
            yield json.dumps(record, ensure_ascii=False) + "\n"
        return
    yield f'{{"format": "{FORMAT}", "memories": ['
    for n, record in enumerate(records):
        yield ("," if n else "") + "\n  " + json.dumps(record, ensure_ascii=False)
    yield "\n]}\n"


def load(text: str) -> list[dict[str, Any]]:
    """Records from an export in either format; a clear error for anything else."""
    stripped = text.lstrip()
    try:
        if stripped.startswith("{") and '"memories"' in stripped[:200]:
            records: list[dict[str, Any]] = list(json.loads(text)["memories"])
        else:
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
    except (ValueError, KeyError, TypeError) as exc:
        raise Invalid(f"not a memvault export (JSON or JSON Lines): {exc}") from exc
    if not all(isinstance(r, dict) and r.get("id") and r.get("title") for r in records):
        raise Invalid("every exported memory needs at least an id and a title")
    return records


def import_records(
    vault: VaultService,
    records: list[dict[str, Any]],
    secrets: SecretPolicy = "refuse",
    dry_run: bool = False,
) -> ImportReport:
    """Create each memory whose id is new; report one whose id exists with other content as a
    conflict (nothing is overwritten); skip one that is already here as it is. A record whose
    path could never be a memory's is refused before anything is written. One holding a
    secret is a conflict too, unless `secrets="redact"`. A `dry_run` writes nothing: its
    `created` are the paths it would create (secrets unchecked)."""
    _check_paths(records)
    report = ImportReport()
    for record in records:
        memory_id = str(record["id"])
        if vault.has_id(memory_id):
            existing = vault.get(memory_id)
            same = existing.title == record["title"] and existing.body == record.get("content")
            if same:
                report.unchanged.append(memory_id)
            else:
                report.conflicts.append(
                    {
                        "id": memory_id,
                        "path": existing.path,
                        "reason": "a memory with this id differs here; left as it is",
                    }
                )
            continue
        if dry_run:
            report.created.append(str(record.get("path") or memory_id))
            continue
        try:
            created = vault.restore(record, secrets)
        except MemvaultError as exc:
            report.conflicts.append(
                {
                    "id": memory_id,
                    "path": str(record.get("path")),
                    # import is a command only: its reasons name CLI options (--secrets redact)
                    "reason": exc.in_words("cli"),
                }
            )
            continue
        usage = record.get("usage") or {}
        if usage.get("access_count"):
            vault.restore_usage(
                memory_id, Usage(int(usage["access_count"]), usage.get("last_access"))
            )
        report.created.append(created.path)
    return report


def _check_paths(records: list[dict[str, Any]]) -> None:
    """Invalid, naming the record, if any path leaves the vault, holds a NUL or lies in a
    dot-folder (.trash, .obsidian): such an export is not one memvault wrote."""
    for number, record in enumerate(records, start=1):
        path = record.get("path")
        problem = path_problem(str(path)) if path else None
        if problem is not None:
            raise Invalid(
                f"record {number} (id {record['id']}): path {path!r} {problem}; nothing imported"
            )
