"""Commands that put memvault in a client's session lifecycle: `hooks install/uninstall/status`
(the client's settings file), `hook EVENT` (what the client runs), and `capture FILE` (a
transcript captured by hand, as the hooks do)."""

from __future__ import annotations

import shlex
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import click

from memvault.cli import emit, json_option, main, service, settings_of
from memvault.cli.terminal import on_terminal
from memvault.config import Settings
from memvault.features.session_capture import capture_transcript
from memvault.hooks import claude_settings, run_log
from memvault.hooks.capture_queue import queue_folder, worker_running
from memvault.hooks.handling import DEFAULT_BUDGET, HookSetup, run_hook
from memvault.interrupt import end_now
from memvault.service.vault import VaultService
from memvault.transcripts.reading import FORMATS


@dataclass(frozen=True)
class CaptureOut:
    """`capture --json`: what the capture did and the session memory it wrote."""

    outcome: str
    id: str | None
    path: str | None
    skipped_lines: int
    note: str


@dataclass
class VaultHooksOut:
    """One vault in `hooks status --json`."""

    vault: str
    last_runs: dict[str, dict[str, Any]]
    waiting: int
    worker_running: bool


@dataclass
class HooksStatusOut:
    """`hooks status --json`."""

    installed: dict[str, list[str]]
    vaults: list[VaultHooksOut] = field(default_factory=list)
    run_log: str = ""


scope_option = click.option(
    "--scope", default=None, help="Scope of briefings and captures [default: the project's name]."
)
budget_option = click.option(
    "--budget",
    type=click.IntRange(min=50),
    default=DEFAULT_BUDGET,
    show_default=True,
    help="Tokens the session-start briefing may take.",
)
exclude_option = click.option(
    "--exclude", multiple=True, metavar="GLOB", help="Project folders never captured (repeat)."
)
where_option = click.option(
    "--user", is_flag=True, help="~/.claude/settings.json instead of the project's."
)
project_option = click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="The project whose .claude/settings.json to change.",
)


@main.command()
@click.argument("event")
@scope_option
@budget_option
@exclude_option
@click.pass_context
def hook(
    ctx: click.Context, event: str, scope: str | None, budget: int, exclude: tuple[str, ...]
) -> None:
    """Run a client hook: reads the hook's JSON on stdin; SessionStart prints the briefing,
    PreCompact, Stop and SessionEnd queue a capture. Always exits 0 (see `hooks status`)."""
    settings = ctx.find_object(Settings) or Settings()
    setup = HookSetup(
        settings.vault.expanduser().absolute(),
        scope,
        budget,
        exclude,
        settings.context,
        settings.index_path.expanduser().absolute() if settings.index_path else None,
        settings.embed_model,
    )
    stdin = "" if on_terminal(sys.stdin) else sys.stdin.read()

    def opened() -> VaultService:
        return VaultService.open(replace(settings, embed_model="off"), fill=False, start=False)

    output = run_hook(event, stdin, setup, opened)
    if output:
        click.echo(output)
    end_now()


@main.group()
def hooks() -> None:
    """Install, remove and check memvault's hooks in a client (claude-code)."""


@hooks.command()
@click.argument("client", type=click.Choice(["claude-code"]))
@where_option
@project_option
@scope_option
@budget_option
@exclude_option
@click.pass_context
def install(
    ctx: click.Context,
    client: str,
    user: bool,
    project: Path,
    scope: str | None,
    budget: int,
    exclude: tuple[str, ...],
) -> None:
    """Brief each session from the vault and capture it there: merges memvault's hooks into
    the client's settings, keeping every other hook and key."""
    settings = settings_of(ctx)
    vault = settings.vault.expanduser().absolute()
    if not vault.is_dir() and not ctx.meta.get("memvault.create"):
        raise click.UsageError(f"the vault {vault} does not exist; pass --vault, or --create")
    vault.mkdir(parents=True, exist_ok=True)
    path = _settings_file(user, project)
    commands = {
        event: _command(settings, vault, event, scope, budget, exclude)
        for event in claude_settings.EVENTS
    }
    changed = claude_settings.install(path, commands)
    events = ", ".join(claude_settings.EVENTS)
    if changed:
        click.echo(f"installed memvault's hooks ({events}) in {path}, for the vault {vault}")
    else:
        click.echo(f"memvault's hooks are already installed in {path}; nothing changed")


@hooks.command()
@click.argument("client", type=click.Choice(["claude-code"]))
@where_option
@project_option
def uninstall(client: str, user: bool, project: Path) -> None:
    """Remove memvault's hooks from the client's settings (the person's own stay)."""
    path = _settings_file(user, project)
    if claude_settings.uninstall(path):
        click.echo(f"removed memvault's hooks from {path}")
    else:
        click.echo(f"no memvault hook in {path}; nothing changed")


@hooks.command()
@project_option
@json_option
def status(project: Path, as_json: bool) -> None:
    """Where memvault's hooks are installed, and when each last ran and how it ended."""
    vaults: dict[str, None] = {}
    installed: dict[str, list[str]] = {}
    for path in (_settings_file(True, project), _settings_file(False, project)):
        found = claude_settings.installed(path)
        installed[str(path)] = [h.event for h in found]
        for one in found:
            vaults[_vault_of(one.command)] = None
    if as_json:
        emit(_status_out(installed, vaults))
        return
    for path_text, events in installed.items():
        click.echo(f"{path_text}: " + (", ".join(events) if events else "none"))
    for vault in vaults:
        click.echo(f"\nvault {vault}:")
        last = run_log.last_runs(Path(vault))
        for event in (*claude_settings.EVENTS, "capture"):
            run = last.get(event)
            line = f"{run.at} {run.outcome}: {run.detail}" if run else "never ran"
            click.echo(f"  {event}: {line}")
        waiting = len(list(queue_folder(Settings(vault=Path(vault)).state_dir).glob("*.json")))
        running = worker_running(Settings(vault=Path(vault)).state_dir)
        click.echo(f"  captures waiting: {waiting}; worker {'running' if running else 'idle'}")
    click.echo(f"\nrun log: {run_log.log_path()}")


@main.command()
@json_option
@click.argument("transcript", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(FORMATS)),
    default="claude-code",
    show_default=True,
    help="Who wrote the transcript.",
)
@click.option(
    "--session-id", default=None, help="The session's id [default: the transcript's own]."
)
@scope_option
@click.pass_context
def capture(
    ctx: click.Context,
    as_json: bool,
    transcript: Path,
    fmt: str,
    session_id: str | None,
    scope: str | None,
) -> None:
    """Capture a session's transcript into its session memory, as the hooks do."""
    with service(ctx, start=True) as vault:
        done = capture_transcript(vault, transcript, fmt, scope, session_id)
    if as_json:
        memory = done.memory
        emit(
            CaptureOut(
                outcome=done.outcome,
                id=memory.id if memory else None,
                path=memory.path if memory else None,
                skipped_lines=done.skipped_lines,
                note=done.note,
            )
        )
        return
    if done.memory is None:
        click.echo(f"nothing captured: {done.note}")
        return
    click.echo(f"{done.outcome} {done.memory.path}" + (f" ({done.note})" if done.note else ""))
    if done.skipped_lines:
        click.echo(f"skipped {done.skipped_lines} lines that were not JSON", err=True)


def _status_out(installed: dict[str, list[str]], vaults: dict[str, None]) -> HooksStatusOut:
    """`hooks status --json`: the events installed in each settings file, and for each vault
    the last run of each hook and of the capture, the captures waiting, the worker."""
    out = HooksStatusOut(installed=installed, vaults=[], run_log=str(run_log.log_path()))
    for vault in vaults:
        state = Settings(vault=Path(vault)).state_dir
        out.vaults.append(
            VaultHooksOut(
                vault=vault,
                last_runs={
                    event: asdict(run) for event, run in run_log.last_runs(Path(vault)).items()
                },
                waiting=len(list(queue_folder(state).glob("*.json"))),
                worker_running=worker_running(state),
            )
        )
    return out


def _settings_file(user: bool, project: Path) -> Path:
    if user:
        return Path.home() / ".claude" / "settings.json"
    return project.expanduser().absolute() / ".claude" / "settings.json"


def _command(
    settings: Settings,
    vault: Path,
    event: str,
    scope: str | None,
    budget: int,
    exclude: tuple[str, ...],
) -> str:
    """The command line of one hook: this memvault, its vault (and index) by absolute path."""
    words = [sys.executable, "-m", "memvault", "--vault", str(vault)]
    if settings.index_path is not None:
        words += ["--index-path", str(Path(settings.index_path).expanduser().absolute())]
    words += ["hook", event]
    if scope:
        words += ["--scope", scope]
    if event == "SessionStart" and budget != DEFAULT_BUDGET:
        words += ["--budget", str(budget)]
    for glob in exclude:
        words += ["--exclude", glob]
    return shlex.join(words)


def _vault_of(command: str) -> str:
    """The vault a hook's command line names."""
    words = shlex.split(command)
    return words[words.index("--vault") + 1] if "--vault" in words[:-1] else "memories"
