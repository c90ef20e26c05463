"""Vaults kept on several machines (issue 37): a sync tool's conflict copy of a note is not
indexed as a memory of its own, so its text does not show twice, and reindex, sync and check
name it with what to do."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from memvault.cli import main
from memvault.core.document import merge_conflict_line

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


MERGED = (
    "---\ntitle: Deploy order\n---\n# Deploy order\n\n"
    "<<<<<<< HEAD\nMigrate the database first.\n=======\nDrain the app servers first.\n"
    ">>>>>>> laptop\n"
)


def test_a_note_mid_merge_is_indexed_named_by_check_and_never_rewritten(vault_dir: Path) -> None:
    """git leaves both sides of a conflict in the file: both stay searchable, `check` names the
    file and its line, and memvault refuses to edit it until the merge is resolved."""
    write_file(vault_dir, "ops/deploy-order.md", MERGED)
    write_file(
        vault_dir,
        "notes/git-howto.md",
        "# Resolving conflicts\n\nGit marks them so:\n\n```\n<<<<<<< HEAD\nmine\n=======\n"
        "theirs\n>>>>>>> branch\n```\n",
    )
    assert run(vault_dir, "reindex")[0] == 0
    found = json.loads(run(vault_dir, "search", "drain app servers", "--json")[1])
    assert [hit["path"] for hit in found["results"]] == ["ops/deploy-order.md"]
    code, out, _ = run(vault_dir, "check")
    assert code == 1
    assert "ops/deploy-order.md" in out and "git merge conflict markers from line 6" in out
    assert "git-howto" not in out  # markers in a code block are an example, not a conflict
    code, _, err = run(vault_dir, "edit", "ops/deploy-order.md", "--append", "More.")
    assert code != 0 and "holds git merge conflict markers (from line 6)" in err
    assert "resolve the merge" in err
    assert (vault_dir / "ops/deploy-order.md").read_text() == MERGED
    write_file(vault_dir, "ops/deploy-order.md", MERGED.split("<<<<<<<")[0] + "Both, in turn.\n")
    assert run(vault_dir, "check")[0] == 0
    assert run(vault_dir, "edit", "ops/deploy-order.md", "--append", "More.")[0] == 0


@given(
    st.lists(
        st.text(alphabet="ab<=>` \n", max_size=12).map(lambda t: t.replace("\n", " ")), max_size=8
    ),
    st.integers(0, 8),
)
def test_conflict_markers_are_found_where_git_puts_them(lines: list[str], at: int) -> None:
    at = min(at, len(lines))
    plain = [line for line in lines if not line.lstrip().startswith(("<<<<<<<", "```"))]
    assert merge_conflict_line("\n".join(plain)) is None
    merged = [
        *plain[:at],
        "<<<<<<< HEAD",
        "mine",
        "=======",
        "theirs",
        ">>>>>>> other",
        *plain[at:],
    ]
    found = merge_conflict_line("\n".join(merged))
    assert found is not None and found <= at + 1
