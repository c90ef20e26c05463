"""memvault in Claude Code's session lifecycle, through real processes: the settings merge
(the person's own hooks and keys kept, a second install a no-op, uninstall removing only
memvault's), each hook event run as the client runs it (its JSON on stdin), the detached
capture worker (one per vault, killed mid-capture without a torn memory), and the run log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.service.vault import VaultService
from tests.conftest import patience
from tests.transcript_fixtures import SESSION, ClaudeTranscript, flaky_login_session, hook_input

pytestmark = pytest.mark.processes

PERSONS_SETTINGS = """{
  "model": "opus",
  "permissions": {
    "allow": ["Bash(npm test:*)"]
  },
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      }
    ]
  }
}
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The hook's environment: its own HOME and run log, words-only search."""
    home = tmp_path / "home"
    home.mkdir()
    return {
        **os.environ,
        "HOME": str(home),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "MEMVAULT_EMBED_MODEL": "off",
    }


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """The project the sessions work in: a git repository named shop."""
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


def memvault(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memvault", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=patience(60),
    )


def installed_command(settings: Path, event: str) -> str:
    data = json.loads(settings.read_text())
    commands = [h["command"] for g in data["hooks"][event] for h in g["hooks"]]
    return next(c for c in commands if "memvault" in c)


def run_hook(env: dict[str, str], command: str, stdin: str) -> subprocess.CompletedProcess[str]:
    """Run a hook's command as Claude Code does: through the shell, its JSON on stdin."""
    return subprocess.run(
        command,
        shell=True,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=patience(30),
    )


def last_run(env: dict[str, str], event: str) -> dict[str, object]:
    """The run log's last line for `event`, or {} before there is one (a worker writes its
    memory, then its line: a wait may look in between)."""
    log = Path(env["XDG_STATE_HOME"]) / "memvault" / "hooks.jsonl"
    runs = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return ([{}] + [run for run in runs if run["event"] == event])[-1]


def wait_for(check: object, seconds: float = 30) -> None:
    deadline = time.monotonic() + patience(seconds)
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.1)


def sessions(vault: Path) -> list[Path]:
    return sorted((vault / "session").glob("*.md")) if (vault / "session").exists() else []


def install(
    env: dict[str, str], vault: Path, project: Path, *more: str
) -> subprocess.CompletedProcess[str]:
    return memvault(
        env,
        "--vault",
        str(vault),
        "hooks",
        "install",
        "claude-code",
        "--project",
        str(project),
        *more,
    )


def test_install_keeps_the_persons_settings_and_a_second_install_changes_nothing(
    env: dict[str, str], vault_dir: Path, shop: Path
) -> None:
    settings = shop / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(PERSONS_SETTINGS)
    first = install(env, vault_dir, shop)
    assert first.returncode == 0, first.stderr
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and data["permissions"] == {"allow": ["Bash(npm test:*)"]}
    stop = [h["command"] for g in data["hooks"]["Stop"] for h in g["hooks"]]
    assert stop[0] == "notify-send done" and "hook Stop" in stop[1]
    assert set(data["hooks"]) == {"SessionStart", "PreCompact", "Stop", "SessionEnd"}
    after_first = settings.read_bytes()
    second = install(env, vault_dir, shop)
    assert "nothing changed" in second.stdout
    assert settings.read_bytes() == after_first
    removed = memvault(env, "hooks", "uninstall", "claude-code", "--project", str(shop))
    assert removed.returncode == 0 and "removed" in removed.stdout
    assert settings.read_text() == PERSONS_SETTINGS


def test_install_refuses_a_settings_file_that_is_not_json(
    env: dict[str, str], vault_dir: Path, shop: Path
) -> None:
    settings = shop / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"model": "opus",')
    result = install(env, vault_dir, shop)
    assert result.returncode != 0 and "not valid JSON" in result.stderr
    assert settings.read_text() == '{"model": "opus",'


def test_user_install_goes_to_the_home_settings(
    env: dict[str, str], vault_dir: Path, shop: Path
) -> None:
    assert install(env, vault_dir, shop, "--user").returncode == 0
    home_settings = Path(env["HOME"]) / ".claude" / "settings.json"
    assert "hook SessionStart" in installed_command(home_settings, "SessionStart")
    assert not (shop / ".claude").exists()


def test_session_start_prints_the_projects_briefing(
    env: dict[str, str], vault_dir: Path, shop: Path
) -> None:
    vault = VaultService.open(Settings(vault=vault_dir))
    from memvault.core.drafts import Draft

    vault.create(Draft("Checkout needs the VAT flag", "Set VAT_MODE before tests.", scope="shop"))
    vault.create(Draft("Other project fact", "Only for billing.", scope="billing"))
    vault.close()
    install(env, vault_dir, shop)
    command = installed_command(shop / ".claude" / "settings.json", "SessionStart")
    result = run_hook(env, command, hook_input("SessionStart", str(shop)))
    assert result.returncode == 0, result.stderr
    context = json.loads(result.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    assert "Checkout needs the VAT flag" in context["additionalContext"]
    assert "Other project fact" not in context["additionalContext"]
    assert last_run(env, "SessionStart")["outcome"] == "ok"


def test_stop_queues_a_capture_that_the_worker_writes(
    env: dict[str, str], vault_dir: Path, shop: Path
) -> None:
    install(env, vault_dir, shop)
    settings = shop / ".claude" / "settings.json"
    transcript = flaky_login_session(shop / "t.jsonl", str(shop))
    transcript.write()
    for event in ("Stop", "PreCompact", "SessionEnd"):
        result = run_hook(
            env, installed_command(settings, event), hook_input(event, str(shop), shop / "t.jsonl")
        )
        assert result.returncode == 0 and result.stdout == "", result.stderr
    wait_for(lambda: sessions(vault_dir) and last_run(env, "capture").get("outcome") == "ok")
    assert len(sessions(vault_dir)) == 1
    assert "fails about one run in five" in sessions(vault_dir)[0].read_text()
    transcript.user("Also fix the logout test.").write()
    run_hook(
        env, installed_command(settings, "Stop"), hook_input("Stop", str(shop), shop / "t.jsonl")
    )
    wait_for(lambda: "Also fix the logout test." in sessions(vault_dir)[0].read_text())
    assert "Also fix the logout test." in sessions(vault_dir)[0].read_text()
    assert len(sessions(vault_dir)) == 1
    wait_for(
        lambda: "worker idle" in memvault(env, "hooks", "status", "--project", str(shop)).stdout
    )
    status = memvault(env, "hooks", "status", "--project", str(shop)).stdout
    assert "Stop: " in status and "queued" in status and "SessionStart: never ran" in status
    assert "capture: " in status and " ok: " in status and "captures waiting: 0" in status


def test_a_failing_hook_exits_0_prints_nothing_and_logs_one_line(
    env: dict[str, str], tmp_path: Path, shop: Path
) -> None:
    missing = tmp_path / "no-vault"
    for event, stdin in (
        ("SessionStart", hook_input("SessionStart", str(shop))),
        ("Stop", hook_input("Stop", str(shop), shop / "t.jsonl")),
        ("Stop", "this is not json"),
    ):
        result = memvault(env, "--vault", str(missing), "hook", event, stdin=stdin)
        assert result.returncode == 0 and result.stdout == "", (event, result.stderr)
        assert last_run(env, event)["outcome"] == "error"
    assert "not JSON" in str(last_run(env, "Stop")["detail"])


def test_a_hook_with_its_output_closed_still_exits_0(
    env: dict[str, str], vault_dir: Path, shop: Path
) -> None:
    """A client that closed the hook's stdout (or never gave one) gets exit 0, not an error
    (the hook's quick exit flushed a stream that was not there)."""
    (vault_dir / "first.md").write_text("---\ntitle: First note\nscope: shop\n---\nHello.\n")
    command = f"{sys.executable} -m memvault --vault {vault_dir} hook SessionStart >&-"
    for _ in range(2):  # the first builds the index, the second briefs
        done = run_hook(env, command, hook_input("SessionStart", str(shop)))
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""


def test_an_excluded_project_is_never_captured(
    env: dict[str, str], vault_dir: Path, shop: Path
) -> None:
    install(env, vault_dir, shop, "--exclude", str(shop.parent / "sh*"))
    flaky_login_session(shop / "t.jsonl", str(shop)).write()
    command = installed_command(shop / ".claude" / "settings.json", "SessionEnd")
    run_hook(env, command, hook_input("SessionEnd", str(shop / "src"), shop / "t.jsonl"))
    assert last_run(env, "SessionEnd")["outcome"] == "skipped"
    assert not (vault_dir / ".memvault" / "captures").exists() or not list(
        (vault_dir / ".memvault" / "captures").glob("*.json")
    )


def queue_job(vault: Path, transcript: Path) -> None:
    from memvault.hooks.capture_queue import Job, enqueue

    enqueue(
        Settings(vault=vault).state_dir, Job(str(transcript), "claude-code", SESSION, None, "Stop")
    )


def worker(vault: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "memvault.hooks.worker", str(vault)], env=env)


def test_a_worker_killed_mid_capture_leaves_no_torn_memory(
    env: dict[str, str], vault_dir: Path, shop: Path
) -> None:
    session = ClaudeTranscript(shop / "t.jsonl", str(shop))
    session.user("Port the importer to the new API")
    for n in range(4000):
        session.say(f"step {n} " + "moved code around. " * 30)
    session.write()
    queue_job(vault_dir, shop / "t.jsonl")
    for delay in (0.3, 0.6, 0.9, 1.2, 1.5):
        process = worker(vault_dir, env)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        for path in sessions(vault_dir):
            assert path.read_text().rstrip().endswith("-->") or "## Related" in path.read_text()
    finished = worker(vault_dir, env)
    assert finished.wait(timeout=patience(120)) == 0
    assert len(sessions(vault_dir)) == 1
    assert not list((vault_dir / ".memvault" / "captures").glob("*.json"))
    vault = VaultService.open(Settings(vault=vault_dir))
    memory = vault.get(sessions(vault_dir)[0].stem)
    assert memory.metadata["session_id"] == SESSION and "step 3999" in memory.body
    vault.close()


def test_workers_never_pile_up(env: dict[str, str], vault_dir: Path, shop: Path) -> None:
    flaky_login_session(shop / "t.jsonl", str(shop)).write()
    queue_job(vault_dir, shop / "t.jsonl")
    processes = [worker(vault_dir, env) for _ in range(4)]
    for process in processes:
        assert process.wait(timeout=patience(60)) == 0
    assert len(sessions(vault_dir)) == 1


def test_capture_command_reads_a_transcript_by_hand(
    env: dict[str, str], vault_dir: Path, shop: Path
) -> None:
    path = flaky_login_session(shop / "t.jsonl", str(shop)).write()
    first = memvault(env, "--vault", str(vault_dir), "capture", str(path))
    assert first.returncode == 0 and first.stdout.startswith("created session/"), first.stderr
    again = memvault(
        env, "--vault", str(vault_dir), "capture", str(path), "--format", "claude-code"
    )
    assert again.stdout.startswith("unchanged session/")
    bad = memvault(env, "--vault", str(vault_dir), "capture", str(shop / "missing.jsonl"))
    assert bad.returncode != 0 and "no transcript at" in bad.stderr


def test_session_start_works_beside_a_running_server(
    env: dict[str, str], vault_dir: Path, shop: Path
) -> None:
    """A server watches the vault (its own process, holding its index open): a note a person
    adds is in the next SessionStart's briefing, and the hook neither waits nor fails."""
    from tests.mcp_helpers import http_server

    install(env, vault_dir, shop)
    command = installed_command(shop / ".claude" / "settings.json", "SessionStart")
    with http_server(vault_dir):
        (vault_dir / "deploy-freeze.md").write_text(
            "---\ntitle: Deploy freeze on Fridays\nscope: shop\n---\nNo deploys after noon.\n"
        )

        def briefed() -> bool:
            result = run_hook(env, command, hook_input("SessionStart", str(shop)))
            assert result.returncode == 0, result.stderr
            return "Deploy freeze on Fridays" in result.stdout

        wait_for(briefed)
    assert last_run(env, "SessionStart")["outcome"] == "ok"


def test_without_a_server_a_persons_edit_shows_from_the_next_session(
    env: dict[str, str], vault_dir: Path, shop: Path
) -> None:
    """With no memvault running, SessionStart briefs from the index as it is and its worker
    syncs the index afterwards: the next session sees the note a person added."""
    (vault_dir / "first.md").write_text("---\ntitle: First note\nscope: shop\n---\nHello.\n")
    install(env, vault_dir, shop)
    command = installed_command(shop / ".claude" / "settings.json", "SessionStart")
    first = run_hook(env, command, hook_input("SessionStart", str(shop)))
    assert first.returncode == 0 and first.stdout == ""
    assert "index is new" in str(last_run(env, "SessionStart")["detail"])
    state = Settings(vault=vault_dir).state_dir
    from memvault.hooks.capture_queue import worker_running

    wait_for(lambda: not worker_running(state) and last_run(env, "SessionStart"))
    wait_for(
        lambda: "First note" in run_hook(env, command, hook_input("SessionStart", str(shop))).stdout
    )
    (vault_dir / "second.md").write_text("---\ntitle: Second note\nscope: shop\n---\nAdded.\n")
    wait_for(
        lambda: (
            "Second note" in run_hook(env, command, hook_input("SessionStart", str(shop))).stdout
        )
    )


def test_the_worker_syncs_the_index_the_hook_was_given(
    env: dict[str, str], vault_dir: Path, shop: Path, tmp_path: Path
) -> None:
    """A hook run with --index-path starts a worker that builds that index, not the vault's
    default one (it once built the default, and the given index stayed new for good)."""
    (vault_dir / "first.md").write_text("---\ntitle: First note\nscope: shop\n---\nHello.\n")
    index = tmp_path / "elsewhere" / "index.sqlite3"
    args = ("--vault", str(vault_dir), "--index-path", str(index), "hook", "SessionStart")
    first = memvault(env, *args, stdin=hook_input("SessionStart", str(shop)))
    assert first.returncode == 0 and first.stdout == ""
    assert "index is new" in str(last_run(env, "SessionStart")["detail"])
    wait_for(
        lambda: (
            "First note" in memvault(env, *args, stdin=hook_input("SessionStart", str(shop))).stdout
        )
    )
    assert not (Settings(vault=vault_dir).state_dir / "index.sqlite3").exists()


def test_a_resumed_session_is_told_where_it_was_captured(
    env: dict[str, str], vault_dir: Path, shop: Path
) -> None:
    install(env, vault_dir, shop)
    settings = shop / ".claude" / "settings.json"
    flaky_login_session(shop / "t.jsonl", str(shop)).write()
    run_hook(
        env,
        installed_command(settings, "SessionEnd"),
        hook_input("SessionEnd", str(shop), shop / "t.jsonl"),
    )
    wait_for(lambda: sessions(vault_dir) and last_run(env, "capture").get("outcome") == "ok")
    command = installed_command(settings, "SessionStart")
    resumed = run_hook(env, command, hook_input("SessionStart", str(shop), source="resume"))
    context = json.loads(resumed.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "This session so far is captured as 'Session 2026-11-20 shop:" in context
    fresh = run_hook(env, command, hook_input("SessionStart", str(shop), session_id="new-one"))
    assert "This session so far" not in fresh.stdout


def test_a_100_mb_transcript_is_captured_within_the_cap(
    env: dict[str, str], vault_dir: Path, shop: Path
) -> None:
    """The hook hands a 100 MB transcript to the worker; the memory stays within 64 KB and
    keeps the first and last requests (how fast the hook returns is in `make bench`)."""
    path = shop / "huge.jsonl"
    turn = {
        "type": "assistant",
        "sessionId": SESSION,
        "cwd": str(shop),
        "timestamp": "2026-11-20T10:00:00Z",
    }
    with path.open("w") as handle:
        handle.write(
            json.dumps(
                {
                    **turn,
                    "type": "user",
                    "message": {"role": "user", "content": "First: rename the orders table"},
                }
            )
            + "\n"
        )
        text = (
            json.dumps(
                {
                    **turn,
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "text", "text": "x " * 5000}],
                    },
                }
            )
            + "\n"
        )
        for _ in range(100 * 1024 * 1024 // len(text)):
            handle.write(text)
        handle.write(
            json.dumps(
                {
                    **turn,
                    "type": "user",
                    "message": {"role": "user", "content": "Last: write the changelog"},
                }
            )
            + "\n"
        )
    install(env, vault_dir, shop)
    command = installed_command(shop / ".claude" / "settings.json", "Stop")
    assert run_hook(env, command, hook_input("Stop", str(shop), path)).returncode == 0
    wait_for(lambda: sessions(vault_dir) and last_run(env, "capture").get("outcome") == "ok", 120)
    text_of_memory = sessions(vault_dir)[0].read_text()
    assert len(text_of_memory.encode()) <= 70 * 1024
    assert "First: rename the orders table" in text_of_memory
    assert "Last: write the changelog" in text_of_memory


def test_status_and_capture_print_json(env: dict[str, str], vault_dir: Path, shop: Path) -> None:
    install(env, vault_dir, shop)
    path = flaky_login_session(shop / "t.jsonl", str(shop)).write()
    captured = json.loads(
        memvault(env, "--vault", str(vault_dir), "capture", str(path), "--json").stdout
    )
    assert captured["outcome"] == "created" and captured["path"].startswith("session/")
    status = json.loads(memvault(env, "hooks", "status", "--project", str(shop), "--json").stdout)
    settings = str(shop / ".claude" / "settings.json")
    assert status["installed"][settings] == ["SessionStart", "PreCompact", "Stop", "SessionEnd"]
    assert status["vaults"][0]["vault"] == str(vault_dir) and status["vaults"][0]["waiting"] == 0
