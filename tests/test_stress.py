"""Many processes on one vault: two servers and the CLI write, edit, link, rename and delete at
once; no write is lost, no slug is taken twice, no file is partial, no link is one-sided."""

from __future__ import annotations

import json
import subprocess
import threading
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import httpx2
import pytest

from memvault.config import Settings
from memvault.core.document import parse_document
from memvault.core.drafts import Draft
from memvault.service.vault import VaultService

from .conftest import patience
from .mcp_helpers import MEMVAULT, http_server, server_env

pytestmark = pytest.mark.processes

ROUNDS = 8
CLI_ROUNDS = 3


@dataclass
class Ledger:
    """What one worker did, to compare with the vault at the end."""

    alive: dict[str, list[str]] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    shared: set[str] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)


def call_http(url: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    response = httpx2.post(
        url,
        json=body,
        timeout=patience(60),
        headers={"Accept": "application/json, text/event-stream"},
    )
    result = response.json()["result"]
    if result["isError"]:
        raise RuntimeError(f"{name}: {result['content'][0]['text']}")
    return dict(result["structuredContent"])


def call_cli(vault: Path, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    args = {
        "write_mem": [
            "write",
            "--title",
            arguments.get("title", ""),
            "--json",
            arguments.get("content", ""),
        ],
        "edit_mem": ["edit", arguments.get("id", ""), "--json"]
        + (["--append", arguments["append"]] if "append" in arguments else [])
        + (["--title", arguments["title"]] if "title" in arguments else []),
        "delete_mem": ["rm", arguments.get("id", ""), "--json"],
        "link_mem": [
            "link",
            arguments.get("source_id", ""),
            arguments.get("target_id", ""),
            "--json",
        ],
    }[name]
    done = subprocess.run(
        [*MEMVAULT, "--vault", str(vault), *args],
        capture_output=True,
        text=True,
        env=server_env(),
        timeout=patience(120),
    )
    if done.returncode != 0:
        raise RuntimeError(f"{name}: {done.stderr}")
    return dict(json.loads(done.stdout))


def work(call: Any, me: str, rounds: int, anchors: list[str], ledger: Ledger) -> None:
    """Each round: two writes (one title every worker uses), an append, a rename, a link to
    another worker's anchor, and now and then a delete."""
    try:
        for r in range(rounds):
            # Titles differ only in punctuation: one slug, so the workers race for it.
            punctuation = "!" * (r + 1) + "?" * (1 + ["server-one", "server-two", "cli"].index(me))
            shared = call(
                "write_mem", {"title": f"Shared title{punctuation}", "content": f"{me} {r}\nEND"}
            )
            own = call("write_mem", {"title": f"{me} item {r}", "content": f"{me} item {r}\nEND"})
            ledger.alive[shared["id"]] = []
            ledger.shared.add(shared["id"])
            ledger.alive[own["id"]] = []
            line = f"{me}-append-{r}"
            call("edit_mem", {"id": own["id"], "append": line})
            ledger.alive[own["id"]].append(line)
            call("edit_mem", {"id": own["id"], "title": f"{me} item {r} renamed"})
            call("link_mem", {"source_id": own["id"], "target_id": anchors[r % len(anchors)]})
            if r % 3 == 2:
                call("delete_mem", {"id": shared["id"]})
                ledger.deleted.add(shared["id"])
                del ledger.alive[shared["id"]]
    except Exception as exc:  # the assertion below reports it
        ledger.errors.append(f"{me}: {exc!r}")


def test_two_servers_and_the_cli_at_once(vault_dir: Path) -> None:
    setup = VaultService.open(Settings(vault=vault_dir))
    anchors = [setup.create(Draft(f"Anchor {i}", f"anchor {i}\nEND")).id for i in range(3)]
    setup.close()
    with http_server(vault_dir) as (one, _a), http_server(vault_dir) as (two, _b):
        ledgers = {name: Ledger() for name in ("server-one", "server-two", "cli")}
        callers = {
            "server-one": (partial(call_http, one), ROUNDS),
            "server-two": (partial(call_http, two), ROUNDS),
            "cli": (partial(call_cli, vault_dir), CLI_ROUNDS),
        }
        workers = [
            threading.Thread(target=work, args=(call, name, rounds, anchors, ledgers[name]))
            for name, (call, rounds) in callers.items()
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=patience(300))
    assert [e for ledger in ledgers.values() for e in ledger.errors] == []

    files = sorted(vault_dir.rglob("*.md"))
    stems = Counter(path.stem.lower() for path in files)
    assert [stem for stem, n in stems.items() if n > 1] == []
    by_id: dict[str, str] = {}
    for path in files:
        doc = parse_document(path.read_text(encoding="utf-8"))
        assert doc.error is None and "END" in doc.body, path
        by_id[str(doc.metadata["id"])] = doc.body
    for ledger in ledgers.values():
        for memory_id, appended in ledger.alive.items():
            assert memory_id in by_id, f"lost {memory_id}"
            assert all(line in by_id[memory_id] for line in appended)
        assert not ledger.deleted & set(by_id)
    expected = 3 + sum(len(ledger.alive) for ledger in ledgers.values())
    assert len(files) == expected

    vault = VaultService.open(Settings(vault=vault_dir))
    report = vault.upkeep.check()
    assert report.clean, report
    shared = {hit.id for hit in vault.search('"Shared title"', 100).results}
    assert shared == {i for ledger in ledgers.values() for i in ledger.shared - ledger.deleted}
    vault.close()
