"""serve --processes: copies of an HTTP server share its port (a real server, real MCP client
sessions), answer from one index, and stop when the first one goes."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import patience
from .mcp_helpers import MEMVAULT, free_port, http_server, http_session, server_env, structured

pytestmark = pytest.mark.processes

WAIT = patience(20)  # seconds the copies have to stop: generous, not a timing assertion


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def copies(pid: int) -> list[int]:
    """A server process and the children that run its command line (Linux's /proc)."""
    line = Path(f"/proc/{pid}/cmdline").read_bytes()
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [pid] + [int(c) for c in children if Path(f"/proc/{c}/cmdline").read_bytes() == line]


def running(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.anyio
@pytest.mark.skipif(
    not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists(),
    reason="finds the copies in Linux's /proc",
)
async def test_copies_share_the_port_and_stop_when_the_first_goes(vault_dir: Path) -> None:
    with http_server(vault_dir, "--processes", "2") as (url, process):
        pids = copies(process.pid)
        assert len(pids) == 2
        async with http_session(url) as session:
            written = structured(
                await session.call_tool(
                    "write_mem", {"title": "Shared port", "content": "Copies share the index."}
                )
            )
        for _ in range(6):  # a new connection each: whichever copy takes it knows the memory
            async with http_session(url) as session:
                found = structured(await session.call_tool("search_mem", {"query": "copies"}))
                assert [hit["id"] for hit in found["results"]] == [written["id"]]
        os.kill(process.pid, signal.SIGKILL)
        deadline = time.monotonic() + WAIT
        while running(pids[1]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running(pids[1])


@pytest.mark.anyio
@pytest.mark.skipif(
    not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists(),
    reason="finds the copies in Linux's /proc",
)
async def test_a_copy_that_dies_is_collected_and_reported(vault_dir: Path) -> None:
    """The first process collects a copy that died (no zombie left) and says so on stderr;
    it goes on serving the port."""
    with http_server(vault_dir, "--processes", "2") as (url, process):
        _first, copy = copies(process.pid)
        os.kill(copy, signal.SIGKILL)
        deadline = time.monotonic() + WAIT
        while Path(f"/proc/{copy}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not Path(f"/proc/{copy}").exists()
        async with http_session(url) as session:
            assert "date" in structured(await session.call_tool("get_current_date", {}))
        process.terminate()
        _out, err = process.communicate(timeout=WAIT)
    assert f"server copy {copy} ended (killed by signal 9, Killed); the other copies go on" in err


def refused(vault_dir: Path, *options: str) -> tuple[int, str]:
    """The exit code of `serve` with these options, and the one line it printed."""
    done = subprocess.run(
        [*MEMVAULT, "--vault", str(vault_dir), "serve", *options],
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=patience(60),
    )
    [line] = done.stderr.strip().splitlines()
    return done.returncode, line


def test_more_than_one_process_needs_http(vault_dir: Path) -> None:
    code, line = refused(vault_dir, "--processes", "2")
    assert code == 2
    assert line.startswith(
        "error: Invalid value for --processes: more than 1 needs --transport http (see `"
    )


def test_a_vault_that_cannot_start_is_said_once_not_once_per_copy(vault_dir: Path) -> None:
    (vault_dir / ".memvault" / "index.sqlite3").mkdir(parents=True)
    port = str(free_port())
    code, line = refused(vault_dir, "--transport", "http", "--port", port, "--processes", "3")
    assert code == 1
    assert line.startswith("error: the index path ") and "is a folder" in line
