"""A person edits the vault the way Obsidian does while a server runs: every change reaches
search_mem, and memvault changes no byte of any file it was not asked to change."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from .conftest import write_file
from .mcp_helpers import stdio_session, structured

pytestmark = [pytest.mark.processes, pytest.mark.anyio]

# Generous: the watcher's debounce is 0.3 s; `make bench` reports the real latency.
VISIBLE_WITHIN = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def checksums(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*.md"))
        if ".memvault" not in p.parts
    }


async def search(session: ClientSession, query: str, **args: Any) -> dict[str, Any]:
    return structured(await session.call_tool("search_mem", {"query": query, **args}))


async def until(
    session: ClientSession, query: str, want: set[str] | None, total: int | None = None
) -> float:
    """Poll search_mem until the result paths are `want` and/or the total is `total`."""
    started = time.monotonic()
    while True:
        found = await search(session, query, limit=100)
        paths = {r["path"] for r in found["results"]}
        if (want is None or paths == want) and (total is None or found["total"] == total):
            return time.monotonic() - started
        if time.monotonic() - started > VISIBLE_WITHIN:
            pytest.fail(f"{query!r}: got {sorted(paths)[:5]} ({found['total']}), want {want}")
        time.sleep(0.05)


def atomic_save(path: Path, text: str) -> None:
    """Obsidian's save: write a temp file beside the note, then rename it over the note."""
    temp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


async def test_an_obsidian_session_while_the_server_runs(vault_dir: Path) -> None:
    write_file(
        vault_dir, "Inbox.md", "# Inbox\nSee [[Project Alpha]] and [[Project Alpha#Goals|goals]].\n"
    )
    write_file(
        vault_dir,
        "Projects/Project Alpha.md",
        "---\nstatus: active # mine\naliases: [PA]\n---\n# Project Alpha\n## Goals\nship\n",
    )
    write_file(vault_dir, ".obsidian/app.json", "{}")
    async with stdio_session(vault_dir) as session:
        mine = structured(
            await session.call_tool(
                "write_mem", {"title": "Assistant note", "content": "Written through MCP."}
            )
        )
        person = {k: v for k, v in checksums(vault_dir).items() if k != mine["path"]}

        atomic_save(vault_dir / "Inbox.md", "# Inbox\nNow about kangaroos. [[Project Alpha]]\n")
        await until(session, "kangaroos", {"Inbox.md"})

        # Obsidian's rename: move the file, then rewrite the links that pointed at it.
        os.replace(vault_dir / "Projects/Project Alpha.md", vault_dir / "Projects/Alpha.md")
        atomic_save(vault_dir / "Inbox.md", "# Inbox\nNow about kangaroos. [[Alpha]]\n")
        await until(session, "ship", {"Projects/Alpha.md"})
        alpha = structured(await session.call_tool("read_mem", {"identifier": "Projects/Alpha"}))
        assert [b["path"] for b in alpha["backlinks"]] == ["Inbox.md"]

        (vault_dir / "Inbox.md").unlink()
        await until(session, "kangaroos", set())

        write_file(vault_dir, "a/b/c/Deep.md", "# Deep\nnested wallaby\n")
        await until(session, "wallaby", {"a/b/c/Deep.md"})

        write_file(vault_dir, "Broken.md", "---\ntitle: [unclosed\n---\nbroken echidna\n")
        await until(session, "echidna", {"Broken.md"})
        broken = structured(
            await session.call_tool("read_mem", {"identifier": "Broken", "format": "json"})
        )
        assert "YAML" in broken["problem"]

        for i in range(200):
            write_file(vault_dir, f"sync/{i // 50}/note-{i}.md", f"# Synced {i}\nbilby {i}\n")
        await until(session, "bilby", None, total=200)

        still = {k: v for k, v in checksums(vault_dir).items() if k in person}
        changed_by_person = {"Inbox.md", "Projects/Project Alpha.md"}
        assert {k: v for k, v in person.items() if k not in changed_by_person} == {
            k: v for k, v in still.items() if k not in changed_by_person
        }
    assert (vault_dir / "Projects/Alpha.md").read_text().startswith("---\nstatus: active # mine")
    assert (vault_dir / "Broken.md").read_text() == "---\ntitle: [unclosed\n---\nbroken echidna\n"
