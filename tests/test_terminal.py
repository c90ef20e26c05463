"""The CLI for a person at a terminal (a pseudo-terminal here) and at a shell: questions,
light markdown, progress, --version, --json everywhere, a vault that must exist, and `serve`
stopped by Ctrl-C or refused a busy port."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from memvault.cli import main

from .conftest import patience, write_file
from .mcp_helpers import MEMVAULT, free_port, server_env
from .test_cli import run


def on_terminal(
    args: list[str], answer: bytes = b"", wait_for: bytes = b"", env: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run memvault with stdin, stdout and stderr on a pseudo-terminal, as a person at a
    terminal would; `answer` is typed once `wait_for` has been printed. The exit code and all
    it printed (newlines as \\n)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [*MEMVAULT, *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**server_env(), "TERM": "xterm", **(env or {})},
        close_fds=True,
    )
    os.close(follower)
    printed = b""
    answered = not answer
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            process.kill()
            raise AssertionError(f"no output within 60 s: {printed!r}")
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: the process has ended
            break
        if not chunk:
            break
        printed += chunk
        if not answered and wait_for in printed:
            os.write(leader, answer)
            answered = True
    os.close(leader)
    return process.wait(timeout=patience(60)), printed.decode("utf-8").replace("\r\n", "\n")


@pytest.mark.processes
def test_rm_asks_first_on_a_terminal(vault_dir: Path) -> None:
    write_file(vault_dir, "deploy.md", "# Deploy order\n\nMigrations first.\n")
    vault = ["--vault", str(vault_dir)]
    question = b"delete 'Deploy order' (deploy.md) and every link to it? [y/N]"
    code, printed = on_terminal([*vault, "rm", "deploy"], b"n\n", question)
    assert code == 1 and "nothing deleted" in printed
    assert (vault_dir / "deploy.md").exists()
    code, printed = on_terminal([*vault, "rm", "deploy"], b"y\n", question)
    assert code == 0 and "deleted deploy.md" in printed
    assert not (vault_dir / "deploy.md").exists()
    write_file(vault_dir, "deploy.md", "# Deploy order\n\nMigrations first.\n")
    code, printed = on_terminal([*vault, "rm", "--yes", "deploy"])
    assert code == 0 and "[y/N]" not in printed and not (vault_dir / "deploy.md").exists()


@pytest.mark.processes
def test_write_on_a_terminal_says_what_it_waits_for_and_refuses_nothing(vault_dir: Path) -> None:
    waiting = b"type the memory's content, then press Ctrl-D on a new line"
    code, printed = on_terminal(
        ["--vault", str(vault_dir), "write", "--title", "Empty"], b"\x04", waiting
    )
    assert code == 1 and "error: the content is empty" in printed
    assert list(vault_dir.glob("*.md")) == []
    code, printed = on_terminal(
        ["--vault", str(vault_dir), "write", "--title", "Typed"], b"Typed text.\n\x04", waiting
    )
    assert code == 0 and (vault_dir / "typed.md").read_text().endswith("\nTyped text.\n")
    code, _, err = run(vault_dir, "write", "--title", "Piped", input=" \n")
    assert code == 1 and err.startswith("error: the content is empty")
    assert run(vault_dir, "write", "--title", "Piped", input="Piped text.\n")[0] == 0


@pytest.mark.processes
def test_markdown_is_rendered_lightly_on_a_terminal_only(vault_dir: Path) -> None:
    text = "---\ntitle: Deploy\n---\n# Deploy\n\nRun **migrations** first, see [[release]].\n"
    write_file(vault_dir, "deploy.md", text)
    vault = ["--vault", str(vault_dir)]
    code, printed = on_terminal([*vault, "read", "deploy"])
    assert code == 0 and "**" not in printed and "[[" not in printed
    assert "\x1b[1mmigrations\x1b[0m" in printed
    code, printed = on_terminal([*vault, "read", "deploy"], env={"NO_COLOR": "1"})
    assert printed.endswith("---\nDeploy\n\nRun migrations first, see release.\n")
    assert "\x1b[" not in printed
    code, printed = on_terminal([*vault, "search", "migrations"], env={"NO_COLOR": "1"})
    assert "Run migrations first" in printed and "**" not in printed
    assert run(vault_dir, "read", "deploy")[1] == text
    assert "**migrations**" in run(vault_dir, "search", "migrations")[1]


@pytest.mark.processes
def test_version_module_entry_and_json_on_every_data_command(vault_dir: Path) -> None:
    version = subprocess.run(
        [sys.executable, "-m", "memvault", "--version"], capture_output=True, text=True
    )
    assert version.returncode == 0 and re.fullmatch(r"memvault \d+\.\d+\.\d+\n", version.stdout)
    for name in main.commands:
        # serve and ui serve; hook prints only the client's own JSON; hooks is a group, whose
        # data command (status) is checked below
        if name not in ("serve", "ui", "hook", "hooks"):
            shown = CliRunner().invoke(main, [name, "--help"]).stdout
            assert "--json" in shown, name
    assert "--json" in CliRunner().invoke(main, ["hooks", "status", "--help"]).stdout
    run(vault_dir, "write", "--title", "Deploy order", "Migrations first.")
    assert json.loads(run(vault_dir, "read", "deploy-order", "--json")[1]) == json.loads(
        run(vault_dir, "read", "deploy-order", "--format", "json")[1]
    )
    exported = json.loads(run(vault_dir, "export", "--format", "jsonl", "--json")[1])
    assert [memory["title"] for memory in exported["memories"]] == ["Deploy order"]


def test_a_vault_that_does_not_exist_is_an_error_not_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "typo"
    code, out, err = run(missing, "list")
    assert (code, out) == (1, "")
    assert err == (
        f"error: the vault {missing} does not exist; check the path, or pass --create (before"
        " the command) to make a new vault there\n"
    )
    assert not missing.exists()
    result = CliRunner().invoke(main, ["list"], env={"MEMVAULT_VAULT": str(missing)})
    assert result.exit_code == 1 and not missing.exists()
    assert run(missing, "--create", "write", "--title", "First", "x")[0] == 0
    assert (missing / "first.md").exists()
    monkeypatch.chdir(tmp_path)
    default = CliRunner().invoke(main, ["list"], env={"MEMVAULT_VAULT": None})
    assert default.exit_code == 1 and "memories is not a vault: it does not exist" in default.stderr
    assert not (tmp_path / "memories").exists()
    write = ["write", "--title", "First", "x"]
    assert CliRunner().invoke(main, write, env={"MEMVAULT_VAULT": None}).exit_code == 0
    assert (tmp_path / "memories" / "first.md").exists()


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under `root`."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes() if path.is_file() else None
        for path in root.rglob("*")
    }


def test_a_folder_that_is_not_a_vault_is_not_made_one_by_a_read(tmp_path: Path) -> None:
    folder = tmp_path / "etc"
    write_file(folder, "passwd", "root:x:0:0:root:/root:/bin/bash\n")
    write_file(folder, ".obsidian/notes.md", "# Hidden, so no memory\n")
    before = tree(folder)
    reads = [
        ["read", "passwd"],
        ["search", "root"],
        ["list"],
        ["similar", "passwd"],
        ["context"],
        ["stats"],
        ["export"],
        ["check"],
        ["edit", "passwd", "--title", "x"],
        ["rm", "--yes", "passwd"],
        ["sync"],
    ]
    for args in reads:
        assert run(folder, *args) == (
            1,
            "",
            f"error: {folder} is not a vault: it holds no markdown notes and no index; check the"
            " path, or start a vault there with `memvault write` (or --create, before the"
            " command)\n",
        ), args
    assert tree(folder) == before
    assert run(folder, "--create", "list")[0] == 0 and (folder / ".memvault").is_dir()


def test_a_write_starts_a_vault_in_an_empty_folder(vault_dir: Path) -> None:
    assert run(vault_dir, "list")[0] == 1
    assert run(vault_dir, "write", "--title", "First", "x")[0] == 0
    assert run(vault_dir, "list")[1].startswith("First (first, ")


@pytest.mark.processes
def test_make_run_takes_vault_and_port() -> None:
    dry = subprocess.run(
        ["make", "-n", "run", "VAULT=/tmp/other vault", "PORT=3999"],
        cwd=Path(__file__).parent.parent,
        capture_output=True,
        text=True,
    )
    assert '--vault "/tmp/other vault" serve' in dry.stdout and "--port 3999" in dry.stdout


@pytest.mark.processes
def test_make_ui_takes_vault() -> None:
    dry = subprocess.run(
        ["make", "-n", "ui", "VAULT=/tmp/other vault"],
        cwd=Path(__file__).parent.parent,
        capture_output=True,
        text=True,
    )
    assert '--vault "/tmp/other vault" ui' in dry.stdout


def serve_then_interrupt(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Start `memvault serve`, wait for its start-up line, then press Ctrl-C (SIGINT). The
    start-up line is read from the pipe's descriptor, unbuffered, so that the stderr returned
    holds every byte the server wrote."""
    process = subprocess.Popen(
        [*MEMVAULT, "--vault", str(vault), "serve", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(),
    )
    assert process.stderr is not None
    said = b""
    if args:
        while b"serving" not in said and process.poll() is None:
            said += os.read(process.stderr.fileno(), 4096)
        assert b"serving" in said, said
    else:
        time.sleep(3)  # over stdio nothing is printed; give the server time to start
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=patience(60))
    return subprocess.CompletedProcess(
        process.args, process.returncode, out.decode(), (said + err).decode()
    )


@pytest.mark.processes
def test_ctrl_c_stops_serve_with_exit_0(vault_dir: Path) -> None:
    port = str(free_port())
    for args in (("--transport", "http", "--port", port), ()):
        stopped = serve_then_interrupt(vault_dir, *args)
        assert stopped.returncode == 0, stopped.stderr
        assert "Aborted" not in stopped.stderr and "Traceback" not in stopped.stderr


@pytest.mark.processes
def test_ctrl_c_at_once_after_start_stops_serve_with_exit_0(vault_dir: Path) -> None:
    """Ctrl-C while memvault is still importing (about 0.3 s) stops it as quietly as later:
    serve with exit 0, another command as click's Abort. It is pressed once the interpreter
    itself is up: twice the time a bare one takes to import the memvault package here, well
    before the command's own imports are done."""
    began = time.monotonic()
    subprocess.run([sys.executable, "-c", "import memvault"], check=True, env=server_env())
    interpreter = time.monotonic() - began
    for command, code, said in (("serve", 0, ""), ("list", 1, "\nAborted!\n")):
        process = subprocess.Popen(
            [sys.executable, "-m", "memvault", "--vault", str(vault_dir), command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=server_env(),
        )
        time.sleep(2 * interpreter)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=patience(60))
        assert (process.returncode, out, err) == (code, "", said), command


@pytest.mark.processes
def test_a_busy_port_is_reported_before_serving(vault_dir: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        started = subprocess.run(
            [*MEMVAULT, "--vault", str(vault_dir), "serve", "--transport", "http", "--port", port],
            capture_output=True,
            text=True,
            timeout=patience(60),
            env=server_env(),
        )
    assert started.returncode == 1
    assert started.stderr == (
        f"error: port {port} on 127.0.0.1 is already in use; stop the other server or pass --port\n"
    )


@pytest.mark.processes
def test_the_first_command_on_a_big_vault_shows_progress_on_a_terminal(vault_dir: Path) -> None:
    for n in range(1200):
        write_file(vault_dir, f"notes/n{n}.md", f"# Note {n}\n\nBody {n}.\n")
    vault = ["--vault", str(vault_dir)]
    code, printed = on_terminal([*vault, "list", "--limit", "1"], env={"NO_COLOR": "1"})
    assert code == 0 and "indexing the vault" in printed and "1,200 memories; showing" in printed
    code, printed = on_terminal([*vault, "list", "--limit", "1"])
    assert code == 0 and "indexing" not in printed
    code, out, err = run(vault_dir, "reindex")
    assert code == 0 and "indexing" not in out + err
