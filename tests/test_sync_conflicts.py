"""Vaults kept on several machines (issue 37): a sync tool's conflict copy of a note is not
indexed as a memory of its own, so its text does not show twice, and reindex, sync and check
name it with what to do."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memvault.cli import main

from .conftest import write_file

NOTE = "# Deploy order\n\nMigrate the database first, then the app servers.\n"
COPIES = (
    "ops/deploy-order.sync-conflict-20261128-101500-ABCDEFG.md",  # Syncthing
    "ops/deploy-order (conflicted copy 2026-11-28).md",  # Dropbox
    "ops/deploy-order (Ana's conflicted copy 2026-11-28).md",  # Dropbox, a shared folder
)


def run(vault: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--vault", str(vault), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_a_conflict_copy_is_named_not_indexed(vault_dir: Path) -> None:
    write_file(vault_dir, "ops/deploy-order.md", NOTE)
    for copy in COPIES:
        write_file(vault_dir, copy, NOTE.replace("first", "first, always"))
    write_file(vault_dir, "notes/conflict resolution.md", "# Conflict resolution\n\nTalk first.\n")
    code, out, err = run(vault_dir, "reindex")
    assert code == 0, err
    for copy in COPIES:
        assert f"{copy}: not indexed: a sync tool's conflict copy" in out + err
    found = json.loads(run(vault_dir, "search", "migrate database", "--json")[1])
    assert [hit["path"] for hit in found["results"]] == ["ops/deploy-order.md"]
    # A note whose name only mentions conflicts is a note.
    listed = json.loads(run(vault_dir, "list", "--json")[1])
    assert {item["path"] for item in listed["items"]} == {
        "ops/deploy-order.md",
        "notes/conflict resolution.md",
    }
    code, out, _ = run(vault_dir, "check")
    assert code == 1
    assert all(copy in out for copy in COPIES) and "merge what it adds" in out
    # A copy made while the index is current is seen by a sync too.
    write_file(vault_dir, "ops/runbook.sync-conflict-20261128-111500-ABCDEFG.md", NOTE)
    code, out, err = run(vault_dir, "sync")
    assert "runbook.sync-conflict-20261128-111500-ABCDEFG.md: not indexed" in out + err
