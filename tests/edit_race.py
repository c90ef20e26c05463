"""Race memvault against a person's editor on one note: the editor (tests/race_editor.py), two
memvault servers over stdio (real MCP client sessions) and the CLI all append numbered lines
for a while; then every acknowledged append must be in the note.

    python -m tests.edit_race --seconds 20    (from the repository root; prints JSON)

An append by a server is acknowledged when edit_mem returns without error, one by the CLI when
`memvault edit --append` exits 0; the editor's acknowledgement is its own (see race_editor.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mcp import ClientSession

from memvault.config import Settings
from memvault.core.drafts import Draft
from memvault.service.vault import VaultService

from .mcp_helpers import MEMVAULT, server_env, stdio_session, text_of

EDITOR = Path(__file__).with_name("race_editor.py")
SERVERS = 2


@dataclass
class Outcome:
    """What each writer had acknowledged, what is missing from the note at the end, and the
    appends memvault refused (each with its one-line reason)."""

    acknowledged: dict[str, int] = field(default_factory=dict)
    lost: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    editor_saved_again: int = 0
    seconds: float = 0.0


async def server_appends(
    session: ClientSession, name: str, until: float, refused: list[str]
) -> list[str]:
    """Append `name N` lines through one server's session until `until`; the labels
    acknowledged."""
    acknowledged = []
    number = 0
    while time.monotonic() < until:
        number += 1
        label = f"{name} {number}"
        result = await session.call_tool("edit_mem", {"id": "race", "append": label})
        if result.is_error:
            refused.append(f"{label}: {text_of(result)}")
        else:
            acknowledged.append(label)
    return acknowledged


def cli_appends(vault: Path, until: float, acknowledged: list[str], refused: list[str]) -> None:
    """Append `cli N` lines with `memvault edit --append` until `until`."""
    number = 0
    while time.monotonic() < until:
        number += 1
        label = f"cli {number}"
        done = subprocess.run(
            [*MEMVAULT, "--vault", str(vault), "edit", "race", "--append", label],
            capture_output=True,
            text=True,
            env=server_env(),
            check=False,
        )
        if done.returncode == 0:
            acknowledged.append(label)
        else:
            refused.append(f"{label}: {done.stderr.strip()}")


async def race(vault: Path, seconds: float) -> Outcome:
    """Start every writer, let them append for `seconds`, and compare the note with what each
    had acknowledged."""
    service = VaultService.open(Settings(vault=vault))
    note = vault / service.create(Draft("Race", "Numbered lines from every writer.\n")).path
    service.close()
    outcome = Outcome()
    async with AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(stdio_session(vault)) for _ in range(SERVERS)]
        started = time.monotonic()
        until = started + seconds
        editor = subprocess.Popen(
            [sys.executable, str(EDITOR), str(note), str(seconds)],
            stdout=subprocess.PIPE,
            text=True,
        )
        cli: list[str] = []
        thread = threading.Thread(target=cli_appends, args=(vault, until, cli, outcome.refused))
        thread.start()
        servers = await asyncio.gather(
            *(
                server_appends(session, f"server{k}", until, outcome.refused)
                for k, session in enumerate(sessions)
            )
        )
        thread.join()
    edited = json.loads(editor.communicate()[0])
    outcome.seconds = round(time.monotonic() - started, 1)
    outcome.editor_saved_again = len(edited["saved_again"])
    every = {"editor": edited["acknowledged"], "cli": cli}
    every.update((f"server{k}", labels) for k, labels in enumerate(servers))
    lines = set(note.read_text(encoding="utf-8").splitlines())
    for writer, labels in every.items():
        outcome.acknowledged[writer] = len(labels)
        outcome.lost += [label for label in labels if label not in lines]
    return outcome


def run(seconds: float) -> Outcome:
    """The race in a fresh vault in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="memvault-race-") as folder:
        vault = Path(folder) / "vault"
        vault.mkdir()
        return asyncio.run(race(vault, seconds))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    print(json.dumps(asdict(run(parser.parse_args().seconds))))
