"""Commands that move memories into the archive and back: archive and restore, of one memory,
of every memory of a category or scope (asking first on a terminal), or of the expired ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from memvault.cli import EXIT_ERROR, emit, json_option, main, service, writer
from memvault.cli.terminal import confirmed
from memvault.core.drafts import Revision, WriteOptions
from memvault.core.records import Filter
from memvault.core.reports import Maintenance
from memvault.presentation.lines import archived_line, group_name
from memvault.words import memories


def group_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """ID, --category, --scope and --yes: which memories a move covers."""
    for option in reversed(
        (
            click.argument("identifier", required=False),
            click.option("--category", default=None, help="Every memory of this category."),
            click.option("--scope", default=None, help="Every memory of this scope."),
            click.option("--yes", "-y", is_flag=True, help="Do not ask first (a terminal asks)."),
        )
    ):
        command = option(command)
    return command


@main.command()
@group_options
@click.option("--expired", is_flag=True, help="Every memory past its expires_at.")
@json_option
@click.pass_context
def archive(
    ctx: click.Context,
    identifier: str | None,
    category: str | None,
    scope: str | None,
    yes: bool,
    expired: bool,
    as_json: bool,
) -> None:
    """Move a memory, every memory of a category or scope, or the expired ones to archive/:
    out of search and lists, still readable; `memvault restore` brings them back."""
    if expired == bool(identifier or category or scope):
        raise click.UsageError("name a memory (ID), --category and/or --scope, or --expired")
    if not expired:
        move(ctx, identifier, category, scope, yes, as_json, restore=False)
        return
    with service(ctx) as vault:
        moved = vault.upkeep.archive_expired()
    if as_json:
        emit(Maintenance(archived=moved))
    else:
        archived = memories(len(moved), none="nothing (none has expired)")
        click.echo(f"archived {archived}" + "".join(f"\n  {p}" for p in moved))


@main.command()
@group_options
@json_option
@click.pass_context
def restore(ctx: click.Context, /, **given: Any) -> None:
    """Bring a memory, or every archived memory of a category or scope, back from archive/ to
    its category, links intact (an expiry already past goes)."""
    move(ctx, **given, restore=True)


def move(
    ctx: click.Context,
    identifier: str | None,
    category: str | None,
    scope: str | None,
    yes: bool,
    as_json: bool,
    restore: bool,
) -> None:
    """Archive (or restore) the memory ID, or every memory of --category and --scope."""
    if bool(identifier) == bool(category or scope):
        raise click.UsageError("name a memory (ID) or --category and/or --scope, not both")
    done = "restored" if restore else "archived"
    with service(ctx) as vault:
        if identifier:
            revision, options = Revision(archived=not restore), WriteOptions(writer(ctx))
            moved = [vault.update(identifier, revision, options)]
            label, line = None, f"{done} {moved[0].path}"
        else:
            group = group_name(category, scope)
            where = Filter(category=category, scope=scope, only_scope=bool(scope))
            paths = [row.path for row in vault.archivable(where, restore=restore)]
            asked = f"{'restore' if restore else 'archive'} {memories(len(paths))} of {group}?"
            if paths and not confirmed(asked, yes):
                click.echo(f"nothing {done}", err=True)
                ctx.exit(EXIT_ERROR)
            moved = vault.archive_all(paths, restore=restore, agent=writer(ctx))
            label = ":".join(name for name in (scope, category) if name) + ":*"
            line = archived_line(group, moved, restore)
    if not as_json:
        click.echo(line)
        return
    from memvault.presentation.output import Edited

    emit(Edited.of(moved[0]) if label is None else Edited.group(label, moved))
