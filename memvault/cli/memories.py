"""Commands on memories: write, read, edit, rm, verify, link, unlink, session-notes."""

from __future__ import annotations

import json
from typing import Any

import click

from memvault.cli import (
    EXIT_ERROR,
    emit,
    json_option,
    key_values,
    main,
    read_content,
    secrets_option,
    service,
    split_tags,
    tag_option,
    writer,
)
from memvault.cli.terminal import confirmed, show
from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, OnExists, Revision, WriteOptions
from memvault.core.secrets import SecretPolicy
from memvault.errors import Invalid
from memvault.features.session_notes import SessionFields, save_session_notes
from memvault.presentation.lines import ReadFormat, links_removed, plain_text
from memvault.words import memories

set_option = click.option(
    "--set",
    "properties",
    multiple=True,
    metavar="KEY=VALUE",
    help="A property (frontmatter field); VALUE as JSON when it is JSON (3, true, "
    '["a","b"], {"team":"infra"}, null: remove it), else text. Repeat for several.',
)
expires_option = click.option(
    "--expires-at", default=None, help="ISO date after which it is archived; never: none."
)
ttl_option = click.option(
    "--ttl-days",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Days from now after which it is archived.",
)
supersedes_option = click.option(
    "--supersedes", default=None, help="A memory this one replaces (marked superseded)."
)


def parsed_properties(pairs: tuple[str, ...]) -> dict[str, Any] | None:
    """`--set KEY=VALUE` options as properties."""
    if not pairs:
        return None
    return {key: _value(text) for key, text in key_values(pairs).items()}


def parsed_items(pairs: tuple[str, ...]) -> dict[str, list[Any]] | None:
    """`--add-to` or `--remove-from KEY=VALUE` options as the items of each key, VALUE read
    as --set reads it and a JSON list as its items; a key repeated gathers its items."""
    items: dict[str, list[Any]] = {}
    for pair in pairs:
        [(key, text)] = key_values((pair,)).items()
        value = _value(text)
        items.setdefault(key, []).extend(value if isinstance(value, list) else [value])
    return items or None


def _value(text: str) -> Any:
    """An option's VALUE: as JSON when it reads as JSON (a number, true/false, a list, an
    object, null), else as text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


@main.command()
@click.option("--title", required=True)
@click.option("--category", default=None)
@tag_option
@click.option("--scope", default=None, help="Project, account or fleet (omit: global).")
@expires_option
@ttl_option
@click.option("--allow-duplicate", is_flag=True, help="Keep it even if it repeats another.")
@secrets_option
@click.option(
    "--on-exists",
    type=click.Choice(["refuse", "replace"]),
    default="refuse",
    show_default=True,
    help="replace: give the memory of this title and scope this content (key-value use).",
)
@click.option(
    "--expected-version", default=None, help="With --on-exists replace: refuse if it changed."
)
@set_option
@supersedes_option
@click.argument("content", required=False, default="-")
@json_option
@click.pass_context
def write(
    ctx: click.Context,
    title: str,
    category: str | None,
    tags: tuple[str, ...],
    scope: str | None,
    expires_at: str | None,
    ttl_days: float | None,
    allow_duplicate: bool,
    secrets: SecretPolicy,
    on_exists: OnExists,
    expected_version: str | None,
    properties: tuple[str, ...],
    supersedes: str | None,
    content: str,
    as_json: bool,
) -> None:
    """Write a new memory; CONTENT or `-` (the default) for standard input."""
    body = read_content(content) or ""
    if not body.strip():
        raise Invalid(
            "the content is empty; give the memory's text as CONTENT or on standard input"
        )
    with service(ctx, start=True) as vault:
        draft = Draft(
            title,
            body,
            tags,
            category,
            scope=scope,
            expires_at=expires_at,
            ttl_days=ttl_days,
            properties=parsed_properties(properties),
            supersedes=supersedes,
        )
        options = WriteOptions(
            writer(ctx), allow_duplicate, secrets, expected_version, on_exists=on_exists
        )
        saved = vault.write(draft, options)
        vault.embed_written()
    memory = saved.memory
    if as_json:
        from memvault.presentation.output import Written

        emit(Written.of(memory, saved.replaced))
    else:
        click.echo(f"{memory.id}  {memory.path}" + ("  (replaced)" if saved.replaced else ""))


@main.command()
@click.argument("identifier")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "plain", "json"]),
    default="markdown",
    show_default=True,
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the same as --format json).")
@click.pass_context
def read(ctx: click.Context, identifier: str, fmt: ReadFormat, as_json: bool) -> None:
    """Print a memory named by id, path, slug, title or alias (or, when none matches exactly,
    the one it clearly means: a note on stderr gives the confidence). On a terminal the
    markdown is rendered lightly; piped, the file is printed as it is."""
    fmt = "json" if as_json else fmt
    with service(ctx) as vault:
        found = vault.recall(identifier)
        memory = found.memory
        if found.confidence < 1.0:
            click.echo(
                f"note: no memory is named {identifier!r}; showing the closest, {memory.title!r} "
                f"({found.matched_by} match, confidence {found.confidence:.2f})",
                err=True,
            )
        for raw, new in vault.succession(memory).superseded_by:
            named = f"{new.title!r} (id {new.id})" if new else f"{raw} (not found)"
            click.echo(f"note: superseded by {named}", err=True)
        if fmt == "json":
            from memvault.presentation.output import MemoryOut

            emit(
                MemoryOut.of(
                    found,
                    vault.outgoing(memory),
                    vault.backlinks(memory),
                    fmt,
                    vault.succession(memory),
                )
            )
        elif fmt == "plain":
            click.echo(plain_text(memory), nl=False)
        else:
            show(vault.file_text(memory.path), nl=False)


@main.command()
@click.argument("identifier")
@click.option("--title", default=None)
@click.option("--content", default=None, help="New body, or - for standard input.")
@click.option("--append", default=None, help="Text to add at the end (before ## Related).")
@click.option("--prepend", default=None, help="Text to add at the top.")
@click.option("--find", default=None, help="Exact text to replace (with --replace).")
@click.option("--replace", default=None, help="Replacement for --find.")
@click.option("--expected-count", type=int, default=None, help="How often --find must occur.")
@click.option(
    "--tag",
    "tags",
    multiple=True,
    callback=split_tags,
    help="Replace the tags (repeat, or separate tags with commas or spaces).",
)
@click.option("--category", default=None)
@expires_option
@ttl_option
@click.option("--expected-updated-at", default=None, help="Refuse if the file changed since.")
@click.option(
    "--expected-version", default=None, help="Refuse unless the memory is still this version."
)
@click.option("--allow-duplicate", is_flag=True, help="Keep a title another memory has.")
@secrets_option
@set_option
@click.option(
    "--add-to",
    multiple=True,
    metavar="KEY=VALUE",
    help="Add an item (VALUE as --set reads it) to the list property KEY, or to tags; the "
    "others stay. Repeat for several.",
)
@click.option(
    "--remove-from",
    multiple=True,
    metavar="KEY=VALUE",
    help="Take the items equal to VALUE out of the list property KEY, or out of tags (an "
    "object: the items with its fields). Repeat for several.",
)
@supersedes_option
@json_option
@click.pass_context
def edit(
    ctx: click.Context,
    identifier: str,
    title: str | None,
    content: str | None,
    append: str | None,
    prepend: str | None,
    find: str | None,
    replace: str | None,
    expected_count: int | None,
    tags: tuple[str, ...],
    category: str | None,
    expires_at: str | None,
    ttl_days: float | None,
    expected_updated_at: str | None,
    expected_version: str | None,
    allow_duplicate: bool,
    secrets: SecretPolicy,
    properties: tuple[str, ...],
    add_to: tuple[str, ...],
    remove_from: tuple[str, ...],
    supersedes: str | None,
    as_json: bool,
) -> None:
    """Change a memory's title (renames), text, tags, category (moves), properties or
    expiry, or add items to and take items out of a list property."""
    change = BodyEdit(
        content=read_content(content),
        find=find,
        replace=replace,
        expected_count=expected_count,
        prepend=prepend,
        append=append,
    )
    with service(ctx) as vault:
        revision = Revision(
            title=title,
            edit=None if change.empty else change,
            tags=tags or None,
            category=category,
            properties=parsed_properties(properties),
            supersedes=supersedes,
            add_to=parsed_items(add_to),
            remove_from=parsed_items(remove_from),
            expires_at=expires_at,
            ttl_days=ttl_days,
        )
        guards = (expected_version, expected_updated_at)
        options = WriteOptions(writer(ctx), allow_duplicate, secrets, *guards)
        memory = vault.update(identifier, revision, options)
        vault.embed_written()
    if as_json:
        from memvault.presentation.output import Edited

        emit(Edited.of(memory))
    else:
        click.echo(f"{memory.id}  {memory.path}")


@main.command()
@click.argument("identifier")
@click.option("--yes", "-y", is_flag=True, help="Do not ask first (on a terminal rm asks).")
@json_option
@click.pass_context
def rm(ctx: click.Context, identifier: str, yes: bool, as_json: bool) -> None:
    """Delete a memory and every link to it (asking first on a terminal)."""
    with service(ctx) as vault:
        memory = vault.get(identifier)
        if not confirmed(f"delete {memory.title!r} ({memory.path}) and every link to it?", yes):
            click.echo("nothing deleted", err=True)
            ctx.exit(EXIT_ERROR)
        deleted = vault.delete(memory.path, agent=writer(ctx))
    if as_json:
        from memvault.presentation.output import Removed

        emit(Removed.of(deleted))
    else:
        click.echo(f"deleted {deleted.memory.path}; {links_removed(deleted.changed)}")


@main.command()
@click.argument("identifier")
@json_option
@click.pass_context
def verify(ctx: click.Context, identifier: str, as_json: bool) -> None:
    """Mark a memory as reviewed now (it is still true)."""
    with service(ctx) as vault:
        memory = vault.verify(identifier, agent=writer(ctx))
    if as_json:
        from memvault.presentation.output import Verified

        emit(Verified.of(memory))
    else:
        click.echo(f"verified {memory.path} at {memory.last_reviewed}")


@main.command()
@click.argument("source")
@click.argument("target")
@click.option("--text", default=None, help="Link text shown in SOURCE.")
@json_option
@click.pass_context
def link(ctx: click.Context, source: str, target: str, text: str | None, as_json: bool) -> None:
    """Link two memories both ways (each lists the other under ## Related)."""
    with service(ctx) as vault:
        change = vault.link(source, target, text, agent=writer(ctx))
    if as_json:
        from memvault.presentation.output import LinkOut

        emit(LinkOut.of(change))
    else:
        state = f"wrote {change.markdown}" if change.changed else "already linked"
        click.echo(f"{change.source.path} <-> {change.target.path}: {state}")


@main.command()
@click.argument("source")
@click.argument("target")
@json_option
@click.pass_context
def unlink(ctx: click.Context, source: str, target: str, as_json: bool) -> None:
    """Remove the Related links between two memories, both ways."""
    with service(ctx) as vault:
        change = vault.unlink(source, target, agent=writer(ctx))
    if as_json:
        from memvault.presentation.output import LinkOut

        emit(LinkOut.of(change))
    else:
        state = "unlinked" if change.changed else "were not linked"
        click.echo(f"{change.source.path} / {change.target.path}: {state}")


@main.command(name="session-notes")
@click.option("--summary", required=True)
@click.option("--highlight", "highlights", multiple=True)
@click.option("--decision", "decisions", multiple=True)
@click.option("--next-step", "next_steps", multiple=True)
@click.option("--open-question", "open_questions", multiple=True)
@click.option(
    "--property",
    "properties",
    multiple=True,
    metavar="KEY=VALUE",
    help="A free field kept in the frontmatter, such as flow=focused (repeat for several).",
)
@click.option("--scope", default=None)
@secrets_option
@json_option
@click.pass_context
def session_notes(
    ctx: click.Context,
    summary: str,
    highlights: tuple[str, ...],
    decisions: tuple[str, ...],
    next_steps: tuple[str, ...],
    open_questions: tuple[str, ...],
    properties: tuple[str, ...],
    scope: str | None,
    secrets: SecretPolicy,
    as_json: bool,
) -> None:
    """Save dated session notes, linked with the memories they name."""
    fields = SessionFields(
        summary,
        list(highlights),
        list(decisions),
        list(next_steps),
        list(open_questions),
        dict(key_value(item) for item in properties),
    )
    with service(ctx, start=True) as vault:
        notes = save_session_notes(vault, fields, scope, secrets, writer(ctx))
    if as_json:
        from memvault.presentation.output import SessionOut

        emit(SessionOut.of(notes))
    else:
        linked = memories(len(notes.linked), none="no other memory")
        click.echo(f"{notes.memory.id}  {notes.memory.path} (linked with {linked})")


def key_value(item: str) -> tuple[str, str]:
    """`KEY=VALUE` as a pair; a usage error for anything else."""
    key, sign, value = item.partition("=")
    if not sign or not key.strip():
        raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--property")
    return key.strip(), value
