"""`memvault import` of other tools' data: a Claude.ai and a ChatGPT data export, the MCP
memory server's memory.json. Each keeps the source's dates, redacts secrets, skips and
names malformed entries, adds nothing the second time, and counts in a dry run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memvault.cli import main
from memvault.config import Settings
from memvault.core.records import Filter
from memvault.service.vault import VaultService
from tests.import_samples import (
    AWS_KEY,
    chatgpt_conversations,
    claude_conversations,
    claude_message,
    mcp_lines,
    write_json,
    write_lines,
)


def run(vault_dir: Path, *args: str) -> tuple[int, str]:
    """A memvault command on the vault: its exit code and output (stderr included)."""
    result = CliRunner().invoke(main, ["--vault", str(vault_dir), *args])
    return result.exit_code, result.output


def imported(vault_dir: Path, file: Path, *args: str) -> dict[str, Any]:
    """`memvault import FILE --json`'s report (`--create` among `args` goes first)."""
    first = ["--create"] if "--create" in args else []
    rest = [arg for arg in args if arg != "--create"]
    code, out = run(vault_dir, *first, "import", str(file), "--json", *rest)
    assert code == 0, out
    report: dict[str, Any] = json.loads(out)
    return report


def files(vault_dir: Path) -> dict[str, str]:
    """Every memory file of the vault, by path, with its text."""
    return {
        str(path.relative_to(vault_dir)): path.read_text(encoding="utf-8")
        for path in sorted(vault_dir.rglob("*.md"))
        if ".memvault" not in path.parts
    }


def frontmatter(text: str) -> dict[str, str]:
    """A file's frontmatter lines as key -> value text."""
    head = text.split("---\n")[1]
    return dict(line.split(": ", 1) for line in head.splitlines() if ": " in line)


def samples(tmp_path: Path) -> dict[str, Path]:
    return {
        "claude-ai": write_json(tmp_path / "claude.json", claude_conversations()),
        "chatgpt": write_json(tmp_path / "chatgpt.json", chatgpt_conversations()),
        "mcp-memory": write_lines(tmp_path / "memory.json", mcp_lines()),
    }


def test_a_claude_ai_export_becomes_dated_redacted_conversations(
    vault_dir: Path, tmp_path: Path
) -> None:
    report = imported(vault_dir, samples(tmp_path)["claude-ai"])
    assert (report["format"], report["added"], report["updated"]) == ("claude-ai", 2, 0)
    assert report["skipped"] == [
        {
            "entry": "conversation 3 (0b6c1e2a-1111-4c4c-9a9a-000000000003)",
            "reason": "it has no message with text",
        },
        {"entry": "conversation 4", "reason": "a str, not a conversation object"},
        {"entry": "conversation 5", "reason": "it has no uuid"},
    ]
    texts = files(vault_dir)
    login = texts["conversation/flaky-login-test.md"]
    fields = frontmatter(login)
    assert fields["created_at"] == "2024-05-01T12:00:00Z"
    assert fields["updated_at"] == "2024-05-02T08:30:00Z"
    assert fields["source"] == "claude-ai"
    assert fields["source_id"] == "0b6c1e2a-1111-4c4c-9a9a-000000000001"
    assert "from 2024-05-01 12:00 to 2024-05-02 08:30 UTC" in login
    assert "### User · 2024-05-01 12:00\n\nWhy does the login test fail?" in login
    assert "### Claude · 2024-05-01 12:00\n\nIt races the session cookie." in login
    assert AWS_KEY not in login and "[redacted: AWS access key]" in login
    assert "hidden reasoning" not in login
    # No name: the first request's first line is the title; attachments are named.
    plan = texts["conversation/plan-the-invoice-export.md"]
    assert frontmatter(plan)["title"] == "Plan the invoice export"
    assert "_Attached: invoices.csv_" in plan


def test_a_chatgpt_export_keeps_the_branch_shown_and_only_the_dialogue(
    vault_dir: Path, tmp_path: Path
) -> None:
    report = imported(vault_dir, samples(tmp_path)["chatgpt"])
    assert report["added"] == 1
    assert [skip["reason"] for skip in report["skipped"]] == [
        "it has no mapping object",
        "its current_node is not in its mapping",
    ]
    text = files(vault_dir)["conversation/invoice-export-files.md"]
    fields = frontmatter(text)
    assert (fields["created_at"], fields["updated_at"]) == (
        "2023-11-14T22:13:20Z",
        "2023-11-14T23:13:20Z",
    )
    assert "### User · 2023-11-14 22:13\n\nWhich files for the invoice export?" in text
    assert "### ChatGPT · 2023-11-14 22:14\n\ninvoice.py and export.py" in text
    for left_out in ("You are ChatGPT", "OLD BRANCH", "HIDDEN CONTEXT", "search(", "TOOL OUTPUT"):
        assert left_out not in text
    assert "2 messages" in text


def test_mcp_memory_entities_become_memories_and_relations_links_both_ways(
    vault_dir: Path, tmp_path: Path
) -> None:
    report = imported(vault_dir, samples(tmp_path)["mcp-memory"])
    assert (report["added"], report["links_added"]) == (2, 1)
    assert report["skipped"] == [
        {"entry": "line 4", "reason": report["skipped"][0]["reason"]},
        {"entry": "line 7 (Nameless)", "reason": "its observations are not a list"},
        {"entry": "line 6", "reason": "no entity named 'Bob' in the file or the vault"},
    ]
    assert report["skipped"][0]["reason"].startswith("it is not JSON")
    texts = files(vault_dir)
    alice, acme = texts["entity/alice.md"], texts["entity/acme-corp.md"]
    assert frontmatter(alice)["entity_type"] == "person"
    assert (
        "## Observations\n- Speaks Spanish\n- Her deploy key is [redacted: AWS access key]" in alice
    )
    assert "- [[acme-corp|works_at Acme Corp; Acme Corp employs]]" in alice
    assert "- [[alice|Alice works_at; employs Alice]]" in acme
    assert run(vault_dir, "check")[0] == 0


@pytest.mark.parametrize("source", ["claude-ai", "chatgpt", "mcp-memory"])
def test_a_second_import_adds_nothing_and_changes_nothing(
    vault_dir: Path, tmp_path: Path, source: str
) -> None:
    file = samples(tmp_path)[source]
    first = imported(vault_dir, file)
    before = files(vault_dir)
    again = imported(vault_dir, file, "--format", source)
    assert (again["added"], again["updated"], again["links_added"]) == (0, 0, 0)
    assert again["unchanged"] == first["added"]
    assert again["links_unchanged"] == first["links_added"]
    assert files(vault_dir) == before


def test_a_conversation_that_went_on_is_updated_in_place(vault_dir: Path, tmp_path: Path) -> None:
    conversations = claude_conversations()
    file = write_json(tmp_path / "claude.json", conversations)
    imported(vault_dir, file)
    run(vault_dir, "edit", "Flaky login test", "--tag", "tests")
    conversations[0]["chat_messages"].append(
        claude_message("m9", "human", "And on CI?", "2024-07-01T10:00:00Z")
    )
    conversations[0]["updated_at"] = "2024-07-01T10:00:00Z"
    write_json(file, conversations)
    dry = imported(vault_dir, file, "--dry-run")
    assert (dry["dry_run"], dry["added"], dry["updated"], dry["unchanged"]) == (True, 0, 1, 1)
    report = imported(vault_dir, file)
    assert (report["added"], report["updated"]) == (0, 1)
    text = files(vault_dir)["conversation/flaky-login-test.md"]
    fields = frontmatter(text)
    assert "And on CI?" in text and fields["tags"] == "[tests]"
    assert (fields["created_at"], fields["updated_at"]) == (
        "2024-05-01T12:00:00Z",
        "2024-07-01T10:00:00Z",
    )


def test_a_dry_run_counts_and_writes_nothing(vault_dir: Path, tmp_path: Path) -> None:
    paths = samples(tmp_path)
    code, out = run(vault_dir, "import", str(paths["claude-ai"]), "--dry-run")
    assert code == 1 and "is not a vault" in out and "--create" in out
    assert run(vault_dir, "--create", "import", str(paths["claude-ai"]), "--dry-run")[0] == 0
    assert run(vault_dir, "write", "--title", "Mine", "a memory of my own")[0] == 0
    before = files(vault_dir)
    code, out = run(vault_dir, "import", str(paths["claude-ai"]), "--dry-run")
    assert code == 0
    assert out.startswith(
        "claude-ai (dry run): would add 2 memories, would update 0, 0 unchanged, 3 skipped\n"
    )
    assert "  skipped conversation 5: it has no uuid\n" in out
    report = imported(vault_dir, paths["mcp-memory"], "--dry-run")
    assert (report["added"], report["links_added"], len(report["skipped"])) == (2, 1, 3)
    assert files(vault_dir) == before


def test_auto_tells_each_source_by_its_content(vault_dir: Path, tmp_path: Path) -> None:
    for source, file in samples(tmp_path).items():
        assert imported(vault_dir, file, "--dry-run", "--create")["format"] == source
    other = write_json(tmp_path / "other.json", [{"hello": "world"}])
    code, out = run(vault_dir, "import", str(other))
    assert code == 1 and "neither Claude.ai's conversations" in out and "--format" in out
    code, out = run(vault_dir, "import", str(other), "--format", "chatgpt")
    assert code == 0 and "conversation 1: it has no conversation_id or id" in out


def test_a_title_over_the_limit_is_cut(vault_dir: Path, tmp_path: Path) -> None:
    conversation = {**claude_conversations()[0], "name": "Very long " * 40}
    assert imported(vault_dir, write_json(tmp_path / "long.json", [conversation]))["added"] == 1
    (text,) = files(vault_dir).values()
    title = frontmatter(text)["title"]
    assert len(title) == 200 and title.startswith("Very long Very long") and title.endswith("…")


def test_a_repeated_id_in_one_file_is_skipped(vault_dir: Path, tmp_path: Path) -> None:
    conversations = claude_conversations()[:1] * 2
    report = imported(vault_dir, write_json(tmp_path / "twice.json", conversations))
    uuid = conversations[0]["uuid"]
    assert report["added"] == 1
    assert report["skipped"] == [
        {"entry": f"conversation 2 ({uuid})", "reason": f"conversation 1 ({uuid}) has the same id"}
    ]


def test_a_long_conversation_keeps_its_head_and_tail_within_64_kb(
    vault_dir: Path, tmp_path: Path
) -> None:
    messages = [
        claude_message(f"m{n}", "human" if n % 2 else "assistant", f"message {n} " + "x" * 1000, "")
        for n in range(300)
    ]
    messages[150]["content"][0]["text"] = "huge " + "y" * 200_000
    messages[0]["content"][0]["text"] = "first " + "z\n" * 100_000
    conversation = {"uuid": "long-1", "name": "Long", "chat_messages": messages}
    imported(vault_dir, write_json(tmp_path / "long.json", [conversation]))
    text = files(vault_dir)["conversation/long.md"]
    body = text.split("---\n", 2)[2]
    assert len(body.encode("utf-8")) <= 64 * 1024
    assert "first z" in text and "KB of this message cut here" in text
    assert "message 299 " in text and "message 150" not in text
    assert (
        "messages (" in text and "left out here: this memory keeps the first 1 and the last" in text
    )


def test_the_memvault_format_has_a_dry_run_too(vault_dir: Path, tmp_path: Path) -> None:
    assert run(vault_dir, "write", "--title", "Kept", "body")[0] == 0
    code, dump = run(vault_dir, "export", "--format", "jsonl")
    copy = tmp_path / "copy"
    copy.mkdir()
    (tmp_path / "dump.jsonl").write_text(dump, encoding="utf-8")
    code, out = run(copy, "--create", "import", str(tmp_path / "dump.jsonl"), "--dry-run")
    assert (code, out) == (0, "would create 1 memory, 0 unchanged, no conflicts\n")
    assert files(copy) == {}


def test_imported_memories_are_dated_as_their_source_in_lists_and_syncs(
    vault_dir: Path, tmp_path: Path
) -> None:
    """The files are dated as the source: a list of what changed this week leaves them out,
    a sync after the import sees nothing to do, and so does a fresh index."""
    imported(vault_dir, samples(tmp_path)["chatgpt"])
    assert run(vault_dir, "list", "--since", "7d")[1] == "No memories.\n"
    assert json.loads(run(vault_dir, "sync", "--json")[1])["updated"] == 0
    assert run(vault_dir, "reindex")[0] == 0
    service = VaultService.open(Settings(vault=vault_dir))
    try:
        rows, total = service.list_memories(Filter(where=(("source", "chatgpt"),)))
    finally:
        service.close()
    assert total == 1
    assert (rows[0].created_at, rows[0].updated_at) == (
        "2023-11-14T22:13:20Z",
        "2023-11-14T23:13:20Z",
    )
