"""Errors and texts in the caller's words: CLI options on the command line, tool parameters
over MCP, counts with their plurals, through the CLI and a real MCP session."""

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
from functools import partial
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from memvault.cli import main

from .conftest import write_file
from .mcp_helpers import (
    MEMVAULT,
    free_port,
    server_env,
    stdio_session,
    structured,
    text_of,
    tool_error,
)
from .test_cli import run

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_cli_errors_name_cli_options_and_commands(vault_dir: Path) -> None:
    assert run(vault_dir, "write", "--title", "Deploy order", "Migrations first, twice.")[0] == 0
    code, _, err = run(vault_dir, "write", "--title", "Deploy order", "Other text.")
    assert code == 1
    assert "edit it with `memvault edit`, or pass --allow-duplicate to keep both" in err
    assert "allow_duplicate" not in err and "edit_mem" not in err
    code, _, err = run(vault_dir, "edit", "Deploy order", "--find", "first", "--replace", "x")
    assert code == 0
    code, _, err = run(vault_dir, "edit", "Deploy order", "--find", "i", "--replace", "y")
    assert code == 1 and "pass --expected-count 3 to replace all, or make --find longer" in err
    code, _, err = run(vault_dir, "edit", "Deploy order", "--find", "x")
    assert code == 1 and "--find needs --replace" in err
    code, _, err = run(vault_dir, "write", "--title", "T", "--ttl-days", "1e7", "x")
    assert code == 1 and err.startswith("error: --ttl-days must be more than 0")
    code, _, err = run(vault_dir, "write", "--title", "T", "--expires-at", "soon", "x")
    assert code == 1 and err.startswith("error: --expires-at 'soon' is not an ISO date")


async def test_tool_errors_name_tool_parameters(vault_dir: Path) -> None:
    async with stdio_session(vault_dir) as session:
        error = partial(tool_error, session)
        await session.call_tool("write_mem", {"title": "Deploy order", "content": "a b a"})
        duplicate = await error("write_mem", {"title": "Deploy order", "content": "Other."})
        assert "edit it with edit_mem, or pass allow_duplicate=true to keep both" in duplicate
        assert "--allow-duplicate" not in duplicate
        twice = await error("edit_mem", {"id": "Deploy order", "find": "a", "replace": "c"})
        assert "pass expected_count=2 to replace all, or make find longer" in twice
        expiry = await error("write_mem", {"title": "T", "content": "x", "expires_at": "soon"})
        assert "expires_at 'soon' is not an ISO date" in expiry


async def test_invalid_arguments_are_one_readable_line_per_field(vault_dir: Path) -> None:
    async with stdio_session(vault_dir) as session:
        result = await session.call_tool("write_mem", {"title": 5, "tags": "a"})
        assert result.is_error
        lines = text_of(result).splitlines()
        assert lines == [
            "Error executing tool write_mem: invalid arguments (see the tool's input schema):",
            "- title: Input should be a valid string",
            "- content: Field required",
            "- tags: Input should be a valid list",
        ]
        one = await tool_error(session, "search_mem", {"query": "x", "limit": 0})
        assert "\n" not in one and "https://" not in one
        assert one.endswith(
            "invalid arguments: limit: Input should be greater than or equal to 1"
            " (see the tool's input schema)"
        )


def test_cli_counts_and_times_read_as_a_person_says_them(vault_dir: Path) -> None:
    assert run(vault_dir, "list")[2] == "No memories.\n"
    assert run(vault_dir, "search", "retries")[2] == "No memories match 'retries'.\n"
    write_file(vault_dir, "retries.md", "# Payment retries\n\nRetries back off.\n")
    _, out, err = run(vault_dir, "list")
    assert err == "1 memory.\n"
    assert "updated just now, never reviewed, never used)" in out
    assert "reviewed unknown" not in out and "0x" not in out
    assert run(vault_dir, "search", "retries")[2] == "1 memory matches 'retries'.\n"
    run(vault_dir, "write", "--title", "Retry budget", "Retries cost money.")
    assert run(vault_dir, "search", "retries", "--limit", "1")[2] == (
        "2 memories match 'retries'; showing number 1.\n"
    )
    assert run(vault_dir, "list", "--offset", "1")[2] == "2 memories; showing number 2.\n"
    assert run(vault_dir, "list", "--offset", "5")[2] == "2 memories; none past 5.\n"
    assert run(vault_dir, "stats")[1].startswith("2 memories, ")
    assert run(vault_dir, "reindex")[1].startswith("indexed 2 notes in ")
    assert run(vault_dir, "link", "Retry budget", "Payment retries")[0] == 0
    assert run(vault_dir, "rm", "--yes", "Payment retries")[1] == (
        "deleted retries.md; links to it removed from 1 memory\n"
    )
    assert run(vault_dir, "rm", "--yes", "Retry budget")[1] == (
        "deleted retry-budget.md; no other memory linked to it\n"
    )
    assert run(vault_dir, "sync")[1].endswith("s: no changes\n")


async def test_tool_texts_count_as_a_person_says_them(vault_dir: Path) -> None:
    write_file(vault_dir, "retries.md", "# Payment retries\n\nRetries back off.\n")
    async with stdio_session(vault_dir) as session:
        assert text_of(await session.call_tool("search_mem", {"query": "nothing"})) == (
            "No memories match 'nothing'."
        )
        listed = text_of(await session.call_tool("list_mem", {}))
        assert listed.startswith("1 memory.\n- Payment retries (") and "never used" in listed
        read = structured(await session.call_tool("read_mem", {"identifier": "retries"}))
        assert read["reviewed"] == "never reviewed"
        await session.call_tool("write_mem", {"title": "Retry budget", "content": "Money."})
        await session.call_tool(
            "link_mem", {"source_id": "Retry budget", "target_id": "Payment retries"}
        )
        deleted = text_of(await session.call_tool("delete_mem", {"id": "Payment retries"}))
        assert deleted.endswith("; links to it removed from 1 memory.")
        notes = text_of(await session.call_tool("save_session_notes", {"summary": "Did x."}))
        assert notes.endswith("linked with no other memory.")


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
    return process.wait(timeout=60), printed.decode("utf-8").replace("\r\n", "\n")


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


def test_version_module_entry_and_json_on_every_data_command(vault_dir: Path) -> None:
    version = subprocess.run(
        [sys.executable, "-m", "memvault", "--version"], capture_output=True, text=True
    )
    assert version.returncode == 0 and re.fullmatch(r"memvault \d+\.\d+\.\d+\n", version.stdout)
    for name in main.commands:
        if name != "serve":
            shown = CliRunner().invoke(main, [name, "--help"]).stdout
            assert "--json" in shown, name
    run(vault_dir, "write", "--title", "Deploy order", "Migrations first.")
    assert json.loads(run(vault_dir, "read", "deploy-order", "--json")[1]) == json.loads(
        run(vault_dir, "read", "deploy-order", "--format", "json")[1]
    )
    exported = json.loads(run(vault_dir, "export", "--format", "jsonl", "--json")[1])
    assert [memory["title"] for memory in exported["memories"]] == ["Deploy order"]


def test_a_vault_that_does_not_exist_is_an_error_not_created(tmp_path: Path) -> None:
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
    runner = CliRunner()
    with runner.isolated_filesystem(tmp_path):
        assert runner.invoke(main, ["list"], env={"MEMVAULT_VAULT": None}).exit_code == 0
        assert Path("memories").is_dir()


def test_make_run_takes_vault_and_port() -> None:
    dry = subprocess.run(
        ["make", "-n", "run", "VAULT=/tmp/other vault", "PORT=3999"],
        cwd=Path(__file__).parent.parent,
        capture_output=True,
        text=True,
    )
    assert '--vault "/tmp/other vault" serve' in dry.stdout and "--port 3999" in dry.stdout


def serve_then_interrupt(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Start `memvault serve`, wait for its start-up line, then press Ctrl-C (SIGINT)."""
    process = subprocess.Popen(
        [*MEMVAULT, "--vault", str(vault), "serve", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=server_env(),
    )
    assert process.stderr is not None
    if args:
        assert "serving" in process.stderr.readline()
    else:
        time.sleep(3)  # over stdio nothing is printed; give the server time to start
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_ctrl_c_stops_serve_with_exit_0(vault_dir: Path) -> None:
    port = str(free_port())
    for args in (("--transport", "http", "--port", port), ()):
        stopped = serve_then_interrupt(vault_dir, *args)
        assert stopped.returncode == 0, stopped.stderr
        assert "Aborted" not in stopped.stderr and "Traceback" not in stopped.stderr


def test_a_busy_port_is_reported_before_serving(vault_dir: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        started = subprocess.run(
            [*MEMVAULT, "--vault", str(vault_dir), "serve", "--transport", "http", "--port", port],
            capture_output=True,
            text=True,
            timeout=60,
            env=server_env(),
        )
    assert started.returncode == 1
    assert started.stderr == (
        f"error: port {port} on 127.0.0.1 is already in use; stop the other server or pass --port\n"
    )


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


async def test_the_memory_resource_takes_a_path_and_says_not_found(vault_dir: Path) -> None:
    write_file(vault_dir, "decision/payment-retries.md", "# Payment retries\n\nThree.\n")
    async with stdio_session(vault_dir) as session:
        for uri in (
            "memvault://memory/decision/payment-retries.md",
            "memvault://memory/decision%2Fpayment-retries.md",
            "memvault://memory/payment-retries",
        ):
            [content] = (await session.read_resource(uri)).contents
            assert content.text == "# Payment retries\n\nThree.\n", uri  # type: ignore[union-attr]
        with pytest.raises(MCPError) as missing:
            await session.read_resource("memvault://memory/decision/nothing.md")
        assert missing.value.error.code == INVALID_PARAMS
        assert missing.value.error.message.startswith("no memory 'decision/nothing.md'")
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["memvault://memory/{+id}"]
