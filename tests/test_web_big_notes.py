"""A big hand-made note on the page, through a real `memvault serve --transport http` process:
a search's snippet of it is checked for secrets without reading the file (the page's search
reads about what search_mem's does), the memory comes with its body cut at the page's limit
(and says so), and a save of that cut body is refused. The work is measured as the bytes the
server process reads (/proc/PID/io: the file, the index, the sockets), never as time."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from .mcp_helpers import http_server
from .test_web_api import TOKEN, mcp_call, signed_in, writes_from

MIB = 1024 * 1024
BIG = 50 * MIB
SHOWN = MIB
# What a request of the page may read beyond search_mem's: far less than the note.
READ_BOUND = 5 * MIB
AWS_KEY = "wJa1rXUtnFEMI/K7MDENG/bPxRfiCYzq8Xk3Lm9Q"

pytestmark = [
    pytest.mark.processes,
    pytest.mark.skipif(
        not sys.platform.startswith("linux"), reason="reads a process's I/O counts in /proc"
    ),
]


def big_note(vault_dir: Path) -> Path:
    """A 50 MB ledger written by hand, whose last line holds a secret a snippet cuts."""
    line = "Ledger entry: the nightly batch settled the payments of the day.\n"
    birds = " ".join(f"bird{n}" for n in range(12))
    tail = f"The archive key: aws_secret_access_key = {AWS_KEY} {birds} zebrafinch.\n"
    path = vault_dir / "ledger" / "big-ledger.md"
    path.parent.mkdir()
    path.write_text(
        "---\nid: big-ledger\ntitle: Big ledger\n---\n" + line * (BIG // len(line)) + tail
    )
    return path


def bytes_read(pid: int) -> int:
    """How many bytes process `pid` has read so far (files, sockets, the index)."""
    counts = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    return int(counts["rchar"])


def fingerprint(path: Path) -> str:
    """The file's content, hashed: unchanged or not."""
    return hashlib.blake2b(path.read_bytes()).hexdigest()


def test_a_big_note_is_searched_and_opened_without_reading_it_whole_and_its_cut_body_is_not_saved(
    vault_dir: Path,
) -> None:
    note = big_note(vault_dir)
    before = fingerprint(note)
    with http_server(vault_dir, "--token", TOKEN) as (url, process):
        base = url.removesuffix("/mcp")
        with signed_in(base) as client:
            assert client.get("/api/changes").status_code == 200

            def measured(path: str, beside: int = 0, **params: str) -> dict:
                """A GET of the API, answered 200, that read less than READ_BOUND more than
                `beside` bytes."""
                start = bytes_read(process.pid)
                answer = client.get(path, params=params)
                assert answer.status_code == 200, answer.text[:300]
                assert bytes_read(process.pid) - start < beside + READ_BOUND, path
                return answer.json()

            start = bytes_read(process.pid)
            search = {"name": "search_mem", "arguments": {"query": "zebrafinch"}}
            assert "big-ledger" in mcp_call(base, TOKEN, "tools/call", search).text
            by_search_mem = bytes_read(process.pid) - start
            [hit] = measured("/api/search", by_search_mem, q="zebrafinch")["results"]
            assert hit["path"] == "ledger/big-ledger.md"
            assert hit["snippet"].startswith("…[redacted: AWS secret key] bird0")
            assert hit["snippet"].endswith("**zebrafinch**.")

            opened = measured("/api/memory", id="big-ledger")["memory"]
            assert opened["content"].startswith("Ledger entry: the nightly batch")
            assert len(opened["content"].encode()) <= SHOWN
            assert "first 1 MiB" in opened["cut"]

            [node] = measured("/api/graph", id="big-ledger", depth="2")["nodes"]
            assert node["label"] == "Big ledger"

            save = {"id": "big-ledger", "version": opened["version"], "content": opened["content"]}
            refused = client.post("/api/save", json=save, headers=writes_from(base))
            assert refused.status_code == 400
            error = refused.json()["error"]
            assert error.startswith("not saved: ledger/big-ledger.md is bigger than the page")
            assert "\n" not in error
    assert fingerprint(note) == before
