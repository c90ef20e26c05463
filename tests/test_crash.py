"""Crash safety: processes killed with SIGKILL at random moments leave no partial file, and
`check --fix` leaves the vault clean."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.core.document import parse_document
from memvault.service.vault import VaultService

from .conftest import patience
from .mcp_helpers import server_env

pytestmark = pytest.mark.processes

KILLS = 20
REPO = Path(__file__).resolve().parent.parent


def assert_every_file_whole(vault_dir: Path) -> None:
    for path in vault_dir.rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        doc = parse_document(text)
        assert doc.error is None, (path, doc.error)
        assert doc.metadata.get("id") and doc.metadata.get("title"), path
        assert "\nEND\n" in "\n" + doc.body, f"{path} lost the end of its body"
        assert text.endswith("\n"), path


def test_sigkill_at_random_moments_leaves_whole_files_and_a_repairable_vault(
    vault_dir: Path,
) -> None:
    rng = random.Random(7)
    for kill in range(KILLS):
        worker = subprocess.Popen(
            [sys.executable, "-m", "tests.crash_worker", str(vault_dir), str(kill)],
            cwd=REPO,
            env=server_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert worker.stdout is not None
        assert worker.stdout.readline() == "ready\n", worker.stderr.read() if worker.stderr else ""
        time.sleep(rng.uniform(0.05, 0.6))
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=patience(10))
        worker.stdout.close()
        if worker.stderr:
            assert "Traceback" not in worker.stderr.read()
            worker.stderr.close()
        assert_every_file_whole(vault_dir)

    vault = VaultService.open(Settings(vault=vault_dir))
    assert vault.stats().memories >= 3
    vault.upkeep.check(fix=True)
    report = vault.upkeep.check()
    assert report.clean, report
    assert vault.upkeep.sync().added == 0
    vault.close()
    assert not list(vault_dir.rglob("*.memvault-tmp")) or all(
        time.time() - p.stat().st_mtime < 60 for p in vault_dir.rglob("*.memvault-tmp")
    )
