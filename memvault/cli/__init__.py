"""The `memvault` command: a thin click face over VaultService (parse, call, format).

This module holds the `main` group, its global options and what the commands share; the
commands live in `memories`, `archive`, `browse`, `upkeep` and `serve`. Their `--json` prints
the model the matching MCP tool returns (memvault.presentation.output), so both faces give one
shape.
"""

from __future__ import annotations

import getpass
import json
import logging
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass, replace
from pathlib import Path
from typing import IO, Any

import click
from click.core import ParameterSource

from memvault.cli.terminal import stdin_text, with_progress
from memvault.config import DEFAULT_VAULT, QUERY_TIMEOUT, ContextSettings, Settings
from memvault.core.properties import clean_agent, where_pairs
from memvault.core.records import Filter
from memvault.core.secrets import POLICIES
from memvault.errors import MemvaultError, NotFound
from memvault.interrupt import settle
from memvault.policies import load_policies
from memvault.service.vault import VaultService

EXIT_ERROR = 1
# Stopped by Ctrl-C (128 + SIGINT), as a shell reports it.
EXIT_INTERRUPTED = 130


class UsageLine(click.UsageError):
    """Bad options or arguments, on one line with where the help is (click prints the usage,
    a hint and the error on four)."""

    def show(self, file: IO[Any] | None = None) -> None:
        command = self.ctx.command_path if self.ctx else "memvault"
        reason = self.format_message().rstrip(".")
        click.echo(f"error: {reason} (see `{command} --help`)", err=True)


class Face(click.Group):
    """Turns every failure into one line on stderr and a non-zero exit, without a traceback
    (`--debug` shows it): a memvault error says what to do next; bad options say what is
    wrong with them; anything else is an internal error, given with its reason."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Bare `memvault` prints its help on stdout and exits 0, as `git` does: asking what
        the command does is no error (click 8.2 on makes it a usage error, exit 2)."""
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            click.echo(ctx.get_help())
            ctx.exit(0)
        return super().parse_args(ctx, args)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            raise UsageLine(exc.format_message(), exc.ctx) from exc

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise UsageLine(exc.format_message(), exc.ctx) from exc
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            if ctx.meta.get("memvault.debug"):
                raise
            click.echo(f"error: {failure_line(exc)}", err=True)
            ctx.exit(EXIT_ERROR)


def failure_line(error: Exception) -> str:
    """What went wrong, on one line: a memvault error's own text, or an internal error's type
    and text with the next step."""
    if isinstance(error, MemvaultError):
        return " ".join(error.in_words("cli").split())
    reason = " ".join(f"{type(error).__name__}: {error}".split())
    return f"internal error ({reason}); run again with --debug for the traceback, and report it"


@click.group(name="memvault", cls=Face, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--vault",
    "--notestore_path",
    "vault",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="MEMVAULT_VAULT",
    default=DEFAULT_VAULT,
    show_default=True,
    help="Folder of markdown memories (env MEMVAULT_VAULT).",
)
@click.option(
    "--index-path",
    "--index_path",
    "index_path",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="MEMVAULT_INDEX_PATH",
    default=None,
    help="SQLite index file [default: VAULT/.memvault/index.sqlite3].",
)
@click.option(
    "--always",
    envvar="MEMVAULT_ALWAYS",
    default="gotcha",
    show_default=True,
    help="Categories the session briefing always surfaces, comma-separated.",
)
@click.option(
    "--stale-days",
    envvar="MEMVAULT_STALE_DAYS",
    type=click.FloatRange(min=0, min_open=True),
    default=90,
    show_default=True,
    help="Flag memories not reviewed for this many days.",
)
@click.option(
    "--query-timeout",
    envvar="MEMVAULT_QUERY_TIMEOUT",
    type=click.FloatRange(min=0, min_open=True),
    default=QUERY_TIMEOUT,
    show_default=True,
    help="Stop a search or other query after this many seconds, with an error.",
)
@click.option(
    "--embed-model",
    envvar="MEMVAULT_EMBED_MODEL",
    default=None,
    help="Semantic search model: a folder with model.onnx and tokenizer.json, or 'off' "
    "[default: all-MiniLM-L6-v2 from memvault[semantic]].",
)
@click.option(
    "--rerank-model",
    envvar="MEMVAULT_RERANK_MODEL",
    default=None,
    help="A cross-encoder's folder (model.onnx, tokenizer.json) that reorders the best hits of "
    "a search by words and meaning [default: none].",
)
@click.option(
    "--agent",
    envvar="MEMVAULT_AGENT",
    default=None,
    help="Who writes, recorded as created_by/updated_by [default: the user name; serve: "
    "each MCP client's name].",
)
@click.option(
    "--create",
    is_flag=True,
    help="Make a new vault: create its folder (./memories needs no --create for a write), or "
    "let any command start one in a folder that is not a vault yet.",
)
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
@click.version_option(package_name="memvault", message="memvault %(version)s")
@click.pass_context
def main(
    ctx: click.Context,
    vault: Path,
    index_path: Path | None,
    always: str,
    stale_days: float,
    query_timeout: float,
    embed_model: str | None,
    rerank_model: str | None,
    agent: str | None,
    create: bool,
    debug: bool,
) -> None:
    """memvault: an assistant's long-term memory as a folder of markdown files.

    Every command that prints data takes --json for the same data as JSON."""
    settle(ctx.invoked_subcommand)
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    ctx.meta["memvault.debug"] = debug

    def given(name: str) -> bool:
        """Whether an option was set by a flag or the environment, not left at its default."""
        return ctx.get_parameter_source(name) is not ParameterSource.DEFAULT

    ctx.meta["memvault.vault_must_exist"] = given("vault") and not create
    ctx.meta["memvault.create"] = create
    settings = Settings(
        vault=vault,
        index_path=index_path,
        query_timeout=query_timeout,
        embed_model=embed_model,
        rerank_model=rerank_model or None,
    )
    policies = load_policies(settings.state_dir)
    always_categories = tuple(c.strip() for c in always.split(",") if c.strip())
    ctx.obj = replace(
        settings,
        policies=policies,
        agent=agent,
        context=ContextSettings(
            always=always_categories
            if given("always") or policies.always is None
            else policies.always,
            stale_days=stale_days if given("stale_days") else policies.stale_days or stale_days,
            recent_days=policies.recent_days or ContextSettings.recent_days,
        ),
    )


def settings_of(ctx: click.Context) -> Settings:
    """The settings `main` made from the global options. A vault named by --vault (or
    MEMVAULT_VAULT) must exist unless --create: a typo never makes a new, empty vault."""
    settings = ctx.find_object(Settings) or Settings()
    if ctx.meta.get("memvault.vault_must_exist") and not settings.vault.expanduser().exists():
        raise NotFound(
            f"the vault {settings.vault} does not exist; check the path, or pass --create "
            "(before the command) to make a new vault there"
        )
    return settings


def writer(ctx: click.Context) -> str | None:
    """Who a command's writes record as created_by / updated_by: --agent, else the user's
    login name (`cli` when the system gives none)."""
    try:
        user = getpass.getuser()
    except (OSError, KeyError):  # no login name, no passwd entry (a bare container)
        user = "cli"
    return clean_agent(settings_of(ctx).agent or user)


@contextmanager
def service(ctx: click.Context, fill: bool = True, start: bool = False) -> Iterator[VaultService]:
    """The vault the global options name, open for one command; its index brought up to date
    (with a progress bar on a terminal when the first command on a big vault builds it)
    unless not `fill`. Only a command that adds memories (`start`) or --create makes a vault
    of a folder that is not one: a read of /etc is an error, and leaves /etc as it was."""
    start = start or bool(ctx.meta.get("memvault.create"))
    vault = VaultService.open(settings_of(ctx), fill=False, start=start)
    try:
        if fill:
            with_progress(
                "indexing the vault", False, lambda progress: vault.upkeep.fill(None, progress)
            )
        yield vault
    finally:
        vault.close()


def emit(result: Any, *more: Any) -> None:
    """Print a result as --json gives it: the matching MCP tool's output model
    (presentation/output.py, imported by the commands only for --json: pydantic costs about
    0.1 s), or for a command no tool has, the fields of its records (of each in turn, as one
    object)."""
    if is_dataclass(result):
        data = {k: v for record in (result, *more) for k, v in asdict(record).items()}
    else:
        data = result.model_dump(mode="json")
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def read_content(content: str | None) -> str | None:
    """CONTENT as given, or standard input for `-` (saying so on a terminal)."""
    return stdin_text("the memory's content") if content == "-" else content


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


def split_tags(
    _ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...]:
    """`--tag a,b` and `--tag "a b"` give two tags, as `--tag a --tag b` does."""
    return tuple(tag for value in values for tag in re.split(r"[,\s]+", value) if tag)


tag_option = click.option(
    "--tag",
    "tags",
    multiple=True,
    callback=split_tags,
    help="A tag (repeat, or separate tags with commas or spaces).",
)
secrets_option = click.option(
    "--secrets",
    type=click.Choice(POLICIES),
    default="refuse",
    show_default=True,
    help="Text holding a secret: refuse it, or store it as [redacted: KIND].",
)
where_option = click.option(
    "--where",
    multiple=True,
    metavar="KEY=VALUE",
    help="Only memories whose property KEY is VALUE (a list: has it; KEY a.b: field b of "
    "object a, or of any object in list a); repeat for several.",
)


def filter_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--category, --tag, --scope, --only-scope, --archived, --since, --until, --time-field,
    --where, --include-superseded: which memories a command covers."""
    for option in reversed(
        (
            click.option(
                "--category",
                multiple=True,
                help="Only this category (and below it); repeat for any of several.",
            ),
            tag_option,
            click.option(
                "--scope",
                multiple=True,
                help="This scope's memories plus global ones; repeat for several.",
            ),
            click.option("--only-scope", is_flag=True, help="With --scope: leave out global ones."),
            click.option("--archived", is_flag=True, help="The archive instead of live memories."),
            click.option(
                "--since",
                default=None,
                help="Changed since: an ISO date or datetime, or 7d, 2w, 3 months, yesterday, "
                "last week, this month...",
            ),
            click.option("--until", default=None, help="Changed before (same forms as --since)."),
            click.option(
                "--time-field",
                type=click.Choice(["updated", "created"]),
                default="updated",
                show_default=True,
                help="The time --since and --until read.",
            ),
            where_option,
            click.option("--include-superseded", is_flag=True, help="Superseded memories too."),
        )
    ):
        command = option(command)
    return command


def make_filter(where: tuple[str, ...] = (), **given: Any) -> Filter:
    """The Filter that `filter_options` describe (`--where KEY=VALUE` pairs)."""
    return Filter.of(where=where_pairs(key_values(where)), **given)


def key_values(pairs: tuple[str, ...]) -> dict[str, str]:
    """`KEY=VALUE` options as a dict; a clear error for one without `=`."""
    found: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--where/--set")
        found[key.strip()] = value
    return found


# The commands register themselves on `main` when their modules are imported.
from memvault.cli import archive, browse, hooks, memories, serve, ui, upkeep  # noqa: E402

__all__ = ["archive", "browse", "hooks", "main", "memories", "serve", "ui", "upkeep"]
