"""An index memvault cannot write (issue 32, item 6): a read-only index file, a -shm SQLite
left read-only, or a read-only folder. memvault works from an index in the user's cache made
from the files, says so in one line with the fix, and never makes a -wal or -shm beside the
read-only file.

File modes do not stop root, so as root each command runs as the unprivileged user `nobody`
(setpriv, from util-linux) in a folder that user owns; as any other user it runs as itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from .conftest import patience
from .mcp_helpers import MEMVAULT, server_env, structured

pytestmark = pytest.mark.processes

NOBODY = 65534


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class User:
    """A user whose file modes hold: runs memvault on the vault in `home`, which it owns."""

    home: Path
    prefix: list[str]
    env: dict[str, str]

    @property
    def vault(self) -> Path:
        return self.home / "vault"

    @property
    def index(self) -> Path:
        return self.vault / ".memvault" / "index.sqlite3"

    def command(self, *args: str) -> list[str]:
        return [*self.prefix, *MEMVAULT, "--vault", str(self.vault), *args]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args), capture_output=True, text=True, env=self.env,
            timeout=patience(60),
        )  # fmt: skip

    def owns(self, path: Path) -> None:
        """Give `path` to this user (as root; a user's own files are theirs already)."""
        if self.prefix:
            os.chown(path, NOBODY, NOBODY)


@pytest.fixture
def user(tmp_path: Path) -> Iterator[User]:
    """This user, or `nobody` when the tests run as root, with a vault holding one note."""
    if os.geteuid() != 0:
        home, prefix = tmp_path, []
    else:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: no user whose file modes hold")
        # pytest's own folders are root's alone; nobody needs a path it may walk.
        home = Path(tempfile.mkdtemp(prefix="memvault-ro-"))
        home.chmod(0o755)
        os.chown(home, NOBODY, NOBODY)
        prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    env = {**server_env(), "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")}
    person = User(home, prefix, env)
    person.vault.mkdir()
    person.owns(person.vault)
    done = person.run("write", "--title", "Plan", "gazelle plan")
    if prefix and done.returncode != 0 and "Permission denied" in done.stderr:
        shutil.rmtree(home)
        pytest.skip(f"nobody cannot run this Python: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    yield person
    if prefix:
        shutil.rmtree(home)


def one_warning(stderr: str, blocked: Path) -> None:
    """Of stderr's lines (a command's summary is there too), one names what is read-only and
    how to fix it, and none is an error or another warning."""
    said = [line for line in stderr.splitlines() if line.startswith(("WARNING", "error"))]
    assert len(said) == 1, stderr
    assert f"{blocked} is read-only" in said[0] and said[0].endswith(f"chmod u+w {blocked}")


def test_a_read_only_index_file_searches_lists_and_writes_from_a_fresh_index(
    user: User,
) -> None:
    user.index.chmod(0o444)
    found = user.run("search", "gazelle")
    assert found.returncode == 0 and "Plan" in found.stdout, found.stderr
    one_warning(found.stderr, user.index)
    listed = user.run("list")
    assert listed.returncode == 0 and "Plan" in listed.stdout, listed.stderr
    written = user.run("write", "--title", "Antelope", "antelope herd")
    assert written.returncode == 0, written.stderr
    one_warning(written.stderr, user.index)
    # SQLite never opened the read-only file for writing: no -wal or -shm copied its mode.
    assert sorted(path.name for path in user.index.parent.iterdir()) == ["index.sqlite3", "lock"]
    user.index.chmod(0o644)
    again = user.run("search", "antelope")
    assert again.returncode == 0 and "Antelope" in again.stdout
    assert "WARNING" not in again.stderr


def test_a_read_only_shm_left_behind_is_named_with_its_fix(user: User) -> None:
    shm = Path(f"{user.index}-shm")
    shm.write_bytes(b"")
    user.owns(shm)
    shm.chmod(0o444)
    written = user.run("write", "--title", "Antelope", "antelope herd")
    assert written.returncode == 0, written.stderr
    one_warning(written.stderr, shm)
    found = user.run("search", "antelope")
    assert found.returncode == 0 and "Antelope" in found.stdout


def test_an_index_in_a_read_only_folder_is_used_from_the_cache(user: User) -> None:
    folder = user.home / "indexes"
    folder.mkdir()
    user.owns(folder)
    index = folder / "vault.sqlite3"
    assert user.run("--index-path", str(index), "reindex").returncode == 0
    folder.chmod(0o555)
    written = user.run("--index-path", str(index), "write", "--title", "Antelope", "antelope")
    assert written.returncode == 0, written.stderr
    one_warning(written.stderr, folder)
    assert sorted(path.name for path in folder.iterdir()) == ["vault.sqlite3"]


@pytest.mark.anyio
async def test_a_server_over_a_read_only_index_searches_and_writes(user: User) -> None:
    user.index.chmod(0o444)
    command = user.command("serve")
    params = StdioServerParameters(command=command[0], args=command[1:], env=user.env)
    log = user.home / "serve.log"
    with log.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            written = await session.call_tool(
                "write_mem", {"title": "Antelope", "content": "antelope herd"}
            )
            assert not written.is_error, written
            found = structured(await session.call_tool("search_mem", {"query": "antelope"}))
            assert [hit["title"] for hit in found["results"]] == ["Antelope"]
    assert sum(f"chmod u+w {user.index}" in line for line in log.read_text().splitlines()) == 1
