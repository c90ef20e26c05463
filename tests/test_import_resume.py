"""An import stopped half-way (Ctrl-C between two memories) leaves no memory half-written,
says so, and the same import again finishes it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.core.document import parse_document
from memvault.features.importers.run import Run, import_parsed
from memvault.features.importers.sources import parsed
from memvault.service.vault import VaultService
from tests.conftest import patience
from tests.import_samples import claude_message, write_json
from tests.mcp_helpers import MEMVAULT, server_env


def conversations(count: int) -> list[dict[str, object]]:
    """`count` Claude.ai conversations of two messages each."""
    return [
        {
            "uuid": f"conv-{n:05d}",
            "name": f"Conversation {n}",
            "created_at": "2024-01-01T00:00:00Z",
            "updated_at": "2024-01-02T00:00:00Z",
            "chat_messages": [
                claude_message(f"q{n}", "human", f"Question {n}?", "2024-01-01T00:00:00Z"),
                claude_message(f"a{n}", "assistant", f"Answer {n}.", "2024-01-01T00:01:00Z"),
            ],
        }
        for n in range(count)
    ]


def memory_files(vault_dir: Path) -> list[Path]:
    return sorted((vault_dir / "conversation").glob("*.md"))


def whole(path: Path) -> bool:
    """Whether a memory's file is complete: its frontmatter names its source and its body
    ends with the conversation's last message."""
    doc = parse_document(path.read_text(encoding="utf-8"))
    return doc.metadata.get("source") == "claude-ai" and doc.body.rstrip().endswith(".")


def test_an_import_stopped_between_two_memories_is_finished_by_the_next(vault_dir: Path) -> None:
    found = parsed(json.dumps(conversations(10)), "claude-ai")
    asked: list[int] = []

    def stop() -> bool:
        """Stop once four memories are done (as a Ctrl-C noted after the fourth would)."""
        asked.append(1)
        return len(asked) > 4

    vault = VaultService.open(Settings(vault=vault_dir))
    try:
        first = import_parsed(vault, found, Run(stop=stop))
        second = import_parsed(vault, found)
    finally:
        vault.close()
    assert (first.interrupted, first.added) == (True, 4)
    assert (second.interrupted, second.added, second.unchanged) == (False, 6, 4)
    assert len(memory_files(vault_dir)) == 10


@pytest.mark.processes
def test_ctrl_c_stops_an_import_and_the_same_import_finishes_it(
    vault_dir: Path, tmp_path: Path
) -> None:
    total = 400
    file = write_json(tmp_path / "conversations.json", conversations(total))
    command = [*MEMVAULT, "--vault", str(vault_dir), "--create", "import", str(file), "--json"]
    env = {**server_env(), "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    deadline = time.monotonic() + patience(60)
    while len(memory_files(vault_dir)) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=patience(60))
    assert process.returncode == 130, err
    report = json.loads(out)
    assert report["interrupted"] and 5 <= report["added"] < total
    assert "interrupted: the same import again finishes it" in err and "Traceback" not in err
    written = memory_files(vault_dir)
    assert len(written) == report["added"] and all(map(whole, written))
    assert not [name for name in os.listdir(vault_dir / "conversation") if not name.endswith(".md")]
    again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=patience(120))
    assert again.returncode == 0, again.stderr
    finished = json.loads(again.stdout)
    assert (finished["added"], finished["unchanged"]) == (total - report["added"], report["added"])
    assert len(memory_files(vault_dir)) == total
