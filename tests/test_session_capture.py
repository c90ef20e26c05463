"""Capturing a session's transcript into one memory per session id (features/session_capture):
what it holds, that it is kept current and idempotent, that a person's edits and links
survive, that secrets are redacted, and that every client's format reads the same way."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.config import Settings
from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision
from memvault.features.session_capture import END, START, capture_transcript, session_memory
from memvault.service.vault import VaultService
from memvault.transcripts.reading import read_events
from memvault.transcripts.rendering import MAX_BYTES
from tests.transcript_fixtures import SESSION, ClaudeTranscript, flaky_login_session

AWS_KEY = "AKIAIOSFODNN7EXAMPLQ"


def project(tmp_path: Path) -> str:
    """A git repository on branch fix-login, as the session's folder."""
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/fix-login\n")
    return str(root)


def test_a_session_becomes_one_memory_with_its_facts(vault: VaultService, tmp_path: Path) -> None:
    cwd = project(tmp_path)
    path = flaky_login_session(tmp_path / "t.jsonl", cwd).write()
    done = capture_transcript(vault, path, "claude-code")
    assert done.outcome == "created" and done.memory is not None
    memory = vault.get(done.memory.id)
    assert memory.category == "session" and memory.scope == "shop"
    meta = memory.metadata
    assert meta["session_id"] == SESSION and meta["repository"] == "shop" and meta["cwd"] == cwd
    assert meta["branch"] == "main"  # the transcript's own branch wins over .git's HEAD
    assert meta["files_modified"] == ["tests/helpers/wait.py", "tests/test_login.py"]
    assert set(meta["tools_used"]) == {"Bash", "Read", "Edit", "Write"}
    assert meta["started"] < meta["ended"]
    body = memory.body
    assert "The login test fails about one run in five on CI, can you find out why?" in body
    assert "Files created: `tests/helpers/wait.py`" in body
    assert "Files edited: `tests/test_login.py`" in body
    failed = next(line for line in body.splitlines() if line.startswith("- Failed:"))
    assert "pytest tests/test_login.py -x" in failed and "TimeoutError" in failed
    assert "Then: The test races the cookie write" in failed
    assert "`pytest tests/test_login.py --count 50`" in body
    assert "wait_for_cookie()" in body


def test_the_same_transcript_twice_changes_nothing(vault: VaultService, tmp_path: Path) -> None:
    path = flaky_login_session(tmp_path / "t.jsonl", project(tmp_path)).write()
    first = capture_transcript(vault, path, "claude-code")
    assert first.memory is not None
    file = vault.root / first.memory.path
    before = file.read_bytes()
    again = capture_transcript(vault, path, "claude-code")
    assert again.outcome == "unchanged"
    assert file.read_bytes() == before
    assert len(vault.list_memories()[0]) == 1


def test_a_longer_transcript_updates_and_keeps_a_persons_edits_and_links(
    vault: VaultService, tmp_path: Path
) -> None:
    session = flaky_login_session(tmp_path / "t.jsonl", project(tmp_path))
    first = capture_transcript(vault, session.write(), "claude-code").memory
    assert first is not None
    other = vault.create(Draft("Login test notes", "Flaky since the cookie change."))
    vault.link(first.id, other.id)
    note = "\n## My notes\nAsk Dana whether CI runs tests in parallel.\n"
    vault.update(first.id, Revision(edit=BodyEdit(append=note)))
    session.user("Now also make the logout test wait the same way.").say("Done, both wait.")
    done = capture_transcript(vault, session.write(), "claude-code")
    assert done.outcome == "updated" and done.memory is not None and done.memory.id == first.id
    body = vault.get(first.id).body
    assert "make the logout test wait" in body and "Done, both wait." in body
    assert "Ask Dana whether CI runs tests in parallel." in body
    assert "[[login-test-notes|Login test notes]]" in body
    assert body.count(START) == 1 and body.count(END) == 1
    assert len(vault.list_memories()[0]) == 2


def test_a_memory_whose_marks_a_person_removed_is_left_alone(
    vault: VaultService, tmp_path: Path
) -> None:
    session = flaky_login_session(tmp_path / "t.jsonl", project(tmp_path))
    first = capture_transcript(vault, session.write(), "claude-code").memory
    assert first is not None
    vault.update(first.id, Revision(edit=BodyEdit(content="My own summary of the session.\n")))
    session.user("One more thing.")
    done = capture_transcript(vault, session.write(), "claude-code")
    assert done.outcome == "left alone" and "removed the capture marks" in done.note
    assert vault.get(first.id).body.strip() == "My own summary of the session."


def test_memories_the_session_used_through_memvault_are_linked(
    vault: VaultService, tmp_path: Path
) -> None:
    used = vault.create(Draft("Deploy checklist", "Run migrations first."))
    session = flaky_login_session(tmp_path / "t.jsonl", project(tmp_path))
    session.tool("mcp__memvault__read_mem", {"identifier": "Deploy checklist"}, "Run migrations")
    session.tool("mcp__memvault__read_mem", {"identifier": "no such memory"}, "not found", True)
    done = capture_transcript(vault, session.write(), "claude-code")
    assert done.memory is not None
    assert [row.source_id for row in vault.backlinks(vault.get(used.id))] == [done.memory.id]


def test_secrets_in_tool_results_and_requests_are_redacted(
    vault: VaultService, tmp_path: Path
) -> None:
    session = ClaudeTranscript(tmp_path / "t.jsonl", project(tmp_path))
    session.user(f"Use the key {AWS_KEY} to read the bucket")
    session.tool("Bash", {"command": "cat ~/.aws/credentials"}, f"aws_access_key_id = {AWS_KEY}")
    session.tool("Bash", {"command": f"deploy --key {AWS_KEY}"}, "denied", error=True)
    done = capture_transcript(vault, session.write(), "claude-code")
    assert done.memory is not None
    text = (vault.root / done.memory.path).read_text()
    assert AWS_KEY[:12] not in text
    assert "[redacted" in text


def test_malformed_lines_are_skipped_and_counted(vault: VaultService, tmp_path: Path) -> None:
    path = flaky_login_session(tmp_path / "t.jsonl", project(tmp_path)).write()
    with path.open("a") as handle:
        handle.write('{"type": "user", "message": {"role": "user", "content": "half\n')
        handle.write("not json at all\n[1, 2]\n")
    done = capture_transcript(vault, path, "claude-code")
    assert done.outcome == "created" and done.skipped_lines == 3


def test_a_transcript_without_dialogue_makes_no_memory(vault: VaultService, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"type": "summary", "summary": "x"}) + "\n")
    done = capture_transcript(vault, path, "claude-code")
    assert done.memory is None and done.outcome == "empty"
    assert vault.list_memories()[0] == []


def test_a_huge_session_is_capped_and_says_what_it_left_out(
    vault: VaultService, tmp_path: Path
) -> None:
    session = ClaudeTranscript(tmp_path / "t.jsonl", project(tmp_path))
    session.user("First request: migrate the billing tables to the new schema")
    for n in range(3000):
        session.say(f"Step {n}: " + "looked at the billing code and moved a table. " * 20)
        session.tool("Bash", {"command": f"psql -c 'select {n}'"}, "ok")
    session.user("Last request: write the release note")
    done = capture_transcript(vault, session.write(), "claude-code")
    assert done.memory is not None
    body = vault.get(done.memory.id).body
    assert len(body.encode()) <= MAX_BYTES + 1024
    assert "First request: migrate the billing tables" in body
    assert "Last request: write the release note" in body
    assert "left out to keep this memory under 64 KB" in body
    assert "Step 0:" in body and "Step 2999:" in body


def test_codex_session_files_read_the_same_way(vault: VaultService, tmp_path: Path) -> None:
    cwd = project(tmp_path)
    lines = [
        {
            "timestamp": "2026-11-20T09:00:00Z",
            "type": "session_meta",
            "payload": {"id": "codex-1", "cwd": cwd, "git": {"branch": "invoice-export"}},
        },
        {
            "timestamp": "2026-11-20T09:00:01Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "<environment_context>cwd</environment_context>"}
                ],
            },
        },
        {
            "timestamp": "2026-11-20T09:00:02Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "Add a CSV column for the VAT rate to the invoice export",
                    }
                ],
            },
        },
        {
            "timestamp": "2026-11-20T09:00:03Z",
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["bash", "-lc", "make test"]}),
                "call_id": "c1",
            },
        },
        {
            "timestamp": "2026-11-20T09:00:04Z",
            "type": "response_item",
            "payload": {
                "type": "function_call_output",
                "call_id": "c1",
                "output": json.dumps(
                    {"output": "error: vat column missing", "metadata": {"exit_code": 2}}
                ),
            },
        },
        {
            "timestamp": "2026-11-20T09:00:05Z",
            "type": "response_item",
            "payload": {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "call_id": "c2",
                "input": "*** Begin Patch\n*** Update File: src/export.py\n"
                "*** Add File: src/vat.py\n*** End Patch",
            },
        },
        {
            "timestamp": "2026-11-20T09:00:06Z",
            "type": "response_item",
            "payload": {"type": "custom_tool_call_output", "call_id": "c2", "output": "Success"},
        },
        {
            "timestamp": "2026-11-20T09:00:07Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": "The export now has a vat_rate column."}
                ],
            },
        },
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = capture_transcript(vault, path, "codex")
    assert done.memory is not None
    memory = vault.get(done.memory.id)
    assert memory.metadata["session_id"] == "codex-1"
    assert memory.metadata["branch"] == "invoice-export"
    assert memory.metadata["files_modified"] == ["src/vat.py", "src/export.py"]
    assert "environment_context" not in memory.body
    assert "`Bash: make test`: error: vat column missing" in memory.body


def test_a_plain_jsonl_transcript_reads_too(vault: VaultService, tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    rows = [
        {
            "role": "user",
            "content": "Which port does the staging proxy use?",
            "timestamp": 1795000000,
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Port 8443."}],
            "timestamp": 1795000060,
        },
        {"role": "system", "content": "ignored"},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = capture_transcript(vault, path, "jsonl", scope="ops", session_id="chat-7")
    assert done.memory is not None
    memory = vault.get(done.memory.id)
    assert memory.scope == "ops" and memory.metadata["session_id"] == "chat-7"
    assert "Port 8443." in memory.body and "ignored" not in memory.body
    assert session_memory(vault, "chat-7") is not None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=80), st.text(max_size=80)), max_size=20))
def test_any_bytes_read_as_events_or_skipped_lines(
    tmp_path_factory: object, lines: list[object]
) -> None:
    folder = Path(str(tmp_path_factory.mktemp("t")))  # type: ignore[attr-defined]
    path = folder / "t.jsonl"
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines))
    for fmt in ("claude-code", "codex", "jsonl"):
        events, read = read_events(path, fmt)
        list(events)
        assert read.skipped >= 0


def transcripts_folder(tmp_path: Path) -> Path:
    """A folder as Claude Code keeps it: two sessions of a project, a subagent's transcript
    and a file that holds no dialogue."""
    folder = tmp_path / "projects" / "-work-shop"
    cwd = project(tmp_path)
    flaky_login_session(folder / f"{SESSION}.jsonl", cwd).write()
    other = ClaudeTranscript(folder / "second.jsonl", cwd, session_id="second-session")
    other.user("Bump the API client to version 3").say("Bumped; the tests pass.").write()
    sub = ClaudeTranscript(folder / SESSION / "subagents" / "agent-1.jsonl", cwd)
    sub.user("search the code for cookie handling").write()
    (folder / "junk.jsonl").write_text("not a transcript\n")
    return tmp_path / "projects"


def test_a_folder_of_transcripts_imports_as_sessions_once(vault_dir: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from memvault.cli import main

    folder = transcripts_folder(tmp_path)
    (vault_dir / "hello.md").write_text("# Hello\n")
    runner = CliRunner()
    args = ["--vault", str(vault_dir), "import", str(folder)]
    dry = runner.invoke(main, [*args, "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    counts = json.loads(dry.output)
    assert (counts["added"], counts["dry_run"], len(counts["skipped"])) == (2, True, 1)
    first = runner.invoke(main, [*args, "--json"])
    report = json.loads(first.output)
    assert (report["added"], report["unchanged"]) == (2, 0)
    assert report["skipped"][0]["entry"].endswith("junk.jsonl")
    again = json.loads(runner.invoke(main, [*args, "--format", "claude-code", "--json"]).output)
    assert (again["added"], again["updated"], again["unchanged"]) == (0, 0, 2)
    vault = VaultService.open(Settings(vault=vault_dir))
    memory = session_memory(vault, SESSION)
    assert memory is not None and memory.created_at == "2026-11-20T10:00:01Z"
    assert memory.updated_at == memory.metadata["ended"][:19] + "Z"
    vault.close()
