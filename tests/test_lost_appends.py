"""An append memvault acknowledged, which an editor later saved over with the copy it read
before (issue 32, item 10: 8 to 109 acknowledged appends lost in 20 s), is reported by `check`,
in its --json, and on the web page's review. memvault cannot stop an editor that takes no lock;
it remembers each acknowledged append for a while and looks for it in the note."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memvault.cli import main
from memvault.config import Settings
from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision
from memvault.service.vault import VaultService

from .browser import Browser
from .mcp_helpers import http_server

ACKNOWLEDGED = "Deploy freeze starts Friday at noon."


def memvault(vault_dir: Path, *args: str) -> Result:
    """One `memvault` command on the vault, as a person types it."""
    return CliRunner().invoke(main, ["--vault", str(vault_dir), *args])


def editor_saves(note: Path, text: str) -> None:
    """An editor saving its copy of a note: a temp file renamed over it, taking no lock."""
    temp = note.with_name(f".{note.name}.swp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, note)


@pytest.fixture
def stale_copy(vault_dir: Path) -> Iterator[tuple[Path, str]]:
    """A note, and the copy of it an editor read before memvault appended to it."""
    made = memvault(vault_dir, "write", "--title", "Release plan", "Ship on Monday.")
    assert made.exit_code == 0, made.output
    note = vault_dir / "release-plan.md"
    yield note, note.read_text(encoding="utf-8")


def test_an_append_an_editor_saved_over_is_reported_by_check(
    vault_dir: Path, stale_copy: tuple[Path, str]
) -> None:
    note, copy = stale_copy
    appended = memvault(vault_dir, "edit", "Release plan", "--append", ACKNOWLEDGED)
    assert appended.exit_code == 0, appended.output
    editor_saves(note, copy + "Editor's own line.\n")
    found = memvault(vault_dir, "check")
    assert found.exit_code == 1
    [line] = [line for line in found.output.splitlines() if line.startswith("lost append")]
    assert line.startswith("lost append: release-plan.md: appended at 20")
    assert line.endswith("Z, no longer in the note (an editor saved over it?)")
    as_json = json.loads(memvault(vault_dir, "check", "--json").output)
    [lost] = as_json["lost_appends"]
    assert lost["path"] == "release-plan.md" and lost["text"] == ACKNOWLEDGED
    assert as_json["clean"] is False


def test_an_append_still_in_the_note_is_not_reported(
    vault_dir: Path, stale_copy: tuple[Path, str]
) -> None:
    note, _copy = stale_copy
    assert memvault(vault_dir, "edit", "Release plan", "--append", ACKNOWLEDGED).exit_code == 0
    editor_saves(note, note.read_text(encoding="utf-8") + "Editor's own line.\n")
    found = memvault(vault_dir, "check")
    assert found.exit_code == 0 and "lost append" not in found.output, found.output


def test_a_note_memvault_deleted_on_purpose_is_not_reported(
    vault_dir: Path, stale_copy: tuple[Path, str]
) -> None:
    assert memvault(vault_dir, "edit", "Release plan", "--append", ACKNOWLEDGED).exit_code == 0
    assert memvault(vault_dir, "rm", "Release plan", "--yes").exit_code == 0
    found = memvault(vault_dir, "check")
    assert found.exit_code == 0 and "lost append" not in found.output, found.output


def test_memvaults_own_later_changes_are_not_losses_but_an_editors_stays_one(
    vault: VaultService, vault_dir: Path
) -> None:
    """A new content, a find/replace and a link following a rename take an appended text out
    on purpose; a later append to a note an editor already saved over keeps the loss found."""
    target = vault.create(Draft("Staging host", "The staging host."))
    note = vault.create(Draft("Runbook", "Steps."))
    vault.update(note.id, Revision(edit=BodyEdit(append="Replaced later.")))
    vault.update(note.id, Revision(edit=BodyEdit(content="A new text.")))
    vault.update(note.id, Revision(edit=BodyEdit(append="Fixed later: typo.")))
    vault.update(note.id, Revision(edit=BodyEdit(find="typo", replace="spelling")))
    vault.update(note.id, Revision(edit=BodyEdit(append="Check [[staging-host]] first.")))
    vault.update(target.id, Revision(title="Staging server"))
    assert vault.upkeep.check().lost_appends == []
    copy = (vault_dir / note.path).read_text(encoding="utf-8")
    vault.update(note.id, Revision(edit=BodyEdit(append=ACKNOWLEDGED)))
    editor_saves(vault_dir / note.path, copy)
    vault.update(note.id, Revision(edit=BodyEdit(append="And one more after it.")))
    assert [lost.text for lost in vault.upkeep.check().lost_appends] == [ACKNOWLEDGED]


@pytest.mark.processes
def test_the_review_page_lists_a_lost_append(vault_dir: Path) -> None:
    vault = VaultService.open(Settings(vault=vault_dir))
    note = vault.create(Draft("Release plan", "Ship on Monday."))
    copy = (vault_dir / note.path).read_text(encoding="utf-8")
    vault.update(note.id, Revision(edit=BodyEdit(append=ACKNOWLEDGED)))
    vault.close()
    editor_saves(vault_dir / note.path, copy)
    browser = Browser()
    try:
        with http_server(vault_dir, "--token", "page-token") as (url, _process):
            base = url.removesuffix("/mcp")
            browser.open(f"{base}/?token=page-token")
            browser.wait_for("document.querySelector('#q')")
            browser.open(f"{base}/#/review")
            browser.wait_for("document.querySelector('#page-review').innerText.includes('Links')")
            assert "lost append: release-plan.md: appended at" in browser.text("#page-review")
            assert browser.errors == []
    finally:
        browser.close()
