"""Captured sessions are found again by a question about them in other words (issue 34): a
vault of captured sessions and notes, embedded with the default model, and questions a
person asks weeks later ("how did we fix the flaky login test"): the session is in the top 5
of a hybrid search."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.core.drafts import Draft
from memvault.features.session_capture import capture_transcript
from memvault.service.vault import VaultService
from tests.transcript_fixtures import SESSION, ClaudeTranscript, flaky_login_session

QUESTIONS = {
    "how did we fix the flaky login test": "login",
    "which files did we touch for the invoice export": "invoice",
    "what did we do to speed up the docker image build": "docker",
    "why did the database migration break in production": "migration",
    "what made the nightly backup job crash": "backup",
}


def session(folder: Path, name: str, cwd: str) -> ClaudeTranscript:
    """One of several sessions of a project, each about its own piece of work."""
    path = folder / f"{name}.jsonl"
    t = ClaudeTranscript(path, cwd, session_id=f"session-{name}")
    if name == "invoice":
        t.user("Add a column with the VAT rate to the CSV that finance downloads each month")
        t.tool("Read", {"file_path": f"{cwd}/src/billing/csv_export.py"}, "def rows(): ...")
        t.tool(
            "Edit",
            {"file_path": f"{cwd}/src/billing/csv_export.py", "old_string": "a", "new_string": "b"},
            "ok",
        )
        t.tool(
            "Edit",
            {"file_path": f"{cwd}/tests/test_csv_export.py", "old_string": "a", "new_string": "b"},
            "ok",
        )
        t.say("The monthly finance CSV now has a vat_rate column after the net amount.")
    elif name == "docker":
        t.user("The CI image takes nine minutes to build, can you make it faster?")
        t.tool(
            "Read",
            {"file_path": f"{cwd}/Dockerfile"},
            "FROM python:3.12\nCOPY . .\nRUN pip install",
        )
        t.tool(
            "Edit", {"file_path": f"{cwd}/Dockerfile", "old_string": "a", "new_string": "b"}, "ok"
        )
        t.say("Copying requirements before the source lets the pip layer be cached: 90 s now.")
    elif name == "migration":
        t.user(
            "alembic upgrade head fails on the copy of prod: "
            "duplicate key value violates unique constraint"
        )
        t.tool(
            "Bash",
            {"command": "alembic upgrade head"},
            "IntegrityError: duplicate key value",
            error=True,
        )
        t.say(
            "Two customers share an email in prod; the new unique index needs a cleanup step first."
        )
    elif name == "backup":
        t.user("The cron task that dumps postgres every night died with an out of memory error")
        t.tool("Bash", {"command": "journalctl -u pg-dump"}, "Killed: out of memory", error=True)
        t.say("pg_dump ran with --jobs 8 on a 2 GB box; one job at a time fits.")
    elif name == "readme":
        t.user("Rewrite the README's install section for Windows users")
        t.say("The install section now covers winget and the PATH step.")
    elif name == "logout":
        t.user("Add a logout button to the account menu")
        t.tool(
            "Edit", {"file_path": f"{cwd}/web/menu.tsx", "old_string": "a", "new_string": "b"}, "ok"
        )
        t.say("The menu has a Log out entry that clears the session.")
    return t


@pytest.fixture
def sessions(vault_dir: Path, tmp_path: Path) -> Iterator[VaultService]:
    cwd = str(tmp_path / "shop")
    vault = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    paths = [flaky_login_session(tmp_path / "login.jsonl", cwd).write()]
    for name in ("invoice", "docker", "migration", "backup", "readme", "logout"):
        paths.append(session(tmp_path, name, cwd).write())
    for path in paths:
        capture_transcript(vault, path, "claude-code")
    vault.create(Draft("Login page copy", "The login page says 'Welcome back'."))
    vault.create(Draft("Invoice numbering", "Invoices are numbered per year: 2026-0001."))
    vault.create(Draft("Docker registry", "Images go to registry.example.com/shop."))
    vault.embed()
    yield vault
    vault.close()


@pytest.mark.parametrize("question", sorted(QUESTIONS))
def test_a_captured_session_is_found_by_a_question_in_other_words(
    sessions: VaultService, question: str
) -> None:
    hits = sessions.search(question, 5, mode="hybrid").results
    wanted = f"session-{QUESTIONS[question]}" if QUESTIONS[question] != "login" else None
    found = [sessions.get(hit.id).metadata.get("session_id") for hit in hits]
    assert (wanted or SESSION) in found, [h.title for h in hits]
