"""Shared fixtures: a real vault in a temporary folder, opened through the service API."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault.config import QUERY_TIMEOUT, Settings
from memvault.service.vault import VaultService

# Servers and CLI commands the tests start search by words only unless a test asks for the
# model (tests/test_semantic.py): embedding every test vault would cost minutes, not coverage.
os.environ.setdefault("MEMVAULT_EMBED_MODEL", "off")

# Every time limit a test waits under is multiplied by this: set MEMVAULT_TEST_PATIENCE=3 on a
# slow or loaded machine rather than editing limits.
PATIENCE = float(os.environ.get("MEMVAULT_TEST_PATIENCE", "1"))


def patience(seconds: float) -> float:
    """A test's time limit, widened by MEMVAULT_TEST_PATIENCE."""
    return seconds * PATIENCE


# The servers and commands the tests start stop a query after this many seconds, widened too:
# a slow search on a loaded machine is not the time limit a test means to meet.
os.environ.setdefault("MEMVAULT_QUERY_TIMEOUT", str(patience(QUERY_TIMEOUT)))


# `make test-fast` sets MEMVAULT_TEST_TIER=fast and leaves out the tests marked `processes`;
# any other test that starts a process then fails, naming the marker it lacks.
FAST_TIER = os.environ.get("MEMVAULT_TEST_TIER") == "fast"


@pytest.fixture(autouse=FAST_TIER)
def in_process_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the fast tier, starting a process is an error that says how to mark the test."""

    def refused(*args: object, **kwargs: object) -> None:
        raise RuntimeError("this test starts a process: mark it @pytest.mark.processes")

    monkeypatch.setattr(subprocess.Popen, "__init__", refused)


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    folder.mkdir()
    return folder


@pytest.fixture
def vault(vault_dir: Path) -> Iterator[VaultService]:
    service = VaultService.open(Settings(vault=vault_dir))
    yield service
    service.close()


def write_file(root: Path, relative: str, text: str) -> Path:
    """Put a hand-made note into a vault, as a person would in Obsidian."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path
