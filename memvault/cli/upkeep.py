"""Commands that keep the vault and its index in order: reindex, sync, check, export,
import."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memvault.cli import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    emit,
    filter_options,
    json_option,
    main,
    make_filter,
    secrets_option,
    service,
    writer,
)
from memvault.cli.terminal import stdin_text, with_progress
from memvault.core.records import Skipped
from memvault.core.reports import BrokenLink, CheckReport, SourceImport
from memvault.core.secrets import SecretPolicy
from memvault.features.importers import FORMATS, MEMVAULT, TRANSCRIPT_FORMATS
from memvault.interrupt import between_steps
from memvault.presentation.lines import semantic_line, source_import_line
from memvault.words import count, memories

if TYPE_CHECKING:
    from memvault.features.importers.records import Parsed
    from memvault.features.importers.run import Run
    from memvault.service.vault import VaultService


def echo_skipped(skipped: list[Skipped]) -> None:
    for item in skipped:
        click.echo(f"  {item.path}: {item.reason}")


@main.command()
@json_option
@click.pass_context
def reindex(ctx: click.Context, as_json: bool) -> None:
    """Rebuild the index from the files (kept state such as usage counts survives)."""
    with service(ctx, fill=False) as vault:
        summary = with_progress("indexing", as_json, vault.upkeep.rebuild)
    if as_json:
        emit(summary)
        return
    links = [
        count(summary.links, "link"),
        *([f"{summary.unresolved_links:,} unresolved"] if summary.unresolved_links else []),
        *([f"{summary.attachments:,} to attachments"] if summary.attachments else []),
    ]
    click.echo(
        f"indexed {count(summary.notes, 'note')} in {summary.seconds:.2f}s: {', '.join(links)}"
    )
    if summary.dropped_vectors:
        click.echo(f"dropped {count(summary.dropped_vectors, 'vector')} no note uses any more")
    echo_skipped(summary.skipped)


@main.command()
@json_option
@click.pass_context
def embed(ctx: click.Context, as_json: bool) -> None:
    """Embed every note that has no current vectors, for semantic search (a server does this
    in the background). Safe to stop: what is done is kept, and the next run goes on."""
    with service(ctx) as vault:
        done = with_progress("embedding", as_json, vault.embed)
        status = vault.semantic_status()
    if as_json:
        emit(status)
        return
    click.echo(f"embedded {count(done, 'note', none='nothing new')}; {semantic_line(status)}")


@main.command()
@json_option
@click.pass_context
def sync(ctx: click.Context, as_json: bool) -> None:
    """Index only what changed on disk since the last pass (the full rebuild is `reindex`)."""
    with service(ctx, fill=False) as vault:
        summary = vault.upkeep.sync()
        done = vault.upkeep.maintain()
    if as_json:
        emit(summary, done)
        return
    changes = [
        f"{n:,} {what}"
        for n, what in (
            (summary.added, "added"),
            (summary.updated, "updated"),
            (summary.moved, "moved"),
            (summary.removed, "removed"),
        )
        if n
    ]
    click.echo(f"synced in {summary.seconds:.2f}s: {', '.join(changes) or 'no changes'}")
    echo_skipped(summary.skipped)
    for line in done.lines():
        click.echo(line)


@main.command()
@click.option("--fix", is_flag=True, help="Repair one-sided links and duplicate ids.")
@click.option(
    "--secrets", is_flag=True, help="Also report files holding secrets (kind and line only)."
)
@json_option
@click.pass_context
def check(ctx: click.Context, fix: bool, secrets: bool, as_json: bool) -> None:
    """Report broken, one-sided and ambiguous links, duplicate ids and bad frontmatter."""
    with service(ctx, fill=False) as vault:
        out = vault.upkeep.check(fix=fix, secrets=secrets)
        semantic = vault.semantic_status()
    if as_json:
        emit(out)
    else:
        echo_check(out)
        click.echo(semantic_line(semantic))
    if not out.clean:
        ctx.exit(EXIT_ERROR)


def echo_check(out: CheckReport) -> None:
    """What check found (and fixed), one line each."""
    for fixed in out.fixed:
        click.echo(f"fixed: {fixed}")
    for broken in out.broken_links:
        click.echo(broken_line(broken))
    for pair in out.one_sided_links:
        click.echo(f"one-sided link: {pair.source} -> {pair.target} (not back)")
    for duplicate in out.duplicate_ids:
        click.echo(f"duplicate id {duplicate.id}: {', '.join(duplicate.paths)}")
    for bad in out.malformed:
        click.echo(f"malformed: {bad.path}: {bad.problem}")
    for skipped in out.unreadable:
        click.echo(f"unreadable: {skipped.path}: {skipped.reason}")
    for ambiguous in out.ambiguous_links:
        click.echo(
            f"ambiguous link: {ambiguous.source} -> [[{ambiguous.target}]] could be "
            + ", ".join(ambiguous.candidates)
        )
    for secret in out.secrets:
        click.echo(f"secret: {secret.path}:{secret.line}: {secret.kind}")
    for lost in out.lost_appends:
        click.echo(
            f"lost append: {lost.path}: appended at {lost.appended_at}, no longer in the note "
            "(an editor saved over it?)"
        )
    if out.clean:
        click.echo("vault is clean")


def broken_line(broken: BrokenLink) -> str:
    """A broken link where it is, as `a.md:3: [[gone]]` (editors open path:line at the line),
    with the other lines it is on: `(also on lines 7, 9)`; the path alone when none is known."""
    place = ":".join([broken.source, *map(str, broken.lines[:1])])
    more = broken.lines[1:]
    also = f" (also on line{'s' if len(more) > 1 else ''} {', '.join(map(str, more))})"
    return f"broken link: {place}: [[{broken.target}]]{also if more else ''}"


@main.command(name="export")
@click.option("--format", "fmt", type=click.Choice(["json", "jsonl"]), default="json")
@filter_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the same as --format json).")
@click.pass_context
def export_(ctx: click.Context, /, fmt: str, as_json: bool, **filters: Any) -> None:
    """Print every memory (or the filtered ones) with metadata, links and usage, as JSON or
    JSON Lines."""
    fmt = "json" if as_json else fmt
    # export_import builds on presentation/output.py's models (pydantic)
    from memvault.features.export_import import (
        dump,
        export_records,
    )

    where = make_filter(
        **{**filters, "archived": filters["archived"] or None, "include_superseded": True}
    )
    with service(ctx) as vault:
        for chunk in dump(export_records(vault, where), fmt):
            click.echo(chunk, nl=False)


@main.command(name="import")
@click.argument("source", type=click.Path(exists=True, allow_dash=True, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", *FORMATS, *TRANSCRIPT_FORMATS]),
    default="auto",
    show_default=True,
    help="Where FILE comes from; auto tells by its content.",
)
@click.option("--dry-run", is_flag=True, help="Count what it would add, update and skip.")
@secrets_option
@json_option
@click.pass_context
def import_(
    ctx: click.Context, source: Path, fmt: str, dry_run: bool, secrets: SecretPolicy, as_json: bool
) -> None:
    """Import memvault's export (JSON or JSON Lines: new ids are created, others reported;
    a memory holding a secret too, unless --secrets redact), or another tool's data: a
    Claude.ai or ChatGPT data export's conversations.json (a memory a conversation), the
    MCP memory server's memory.json (a memory an entity, its relations as links). Those
    are dated as their source, their secrets redacted whatever --secrets says, and found
    again by their id there: a second import adds nothing. A folder of Claude Code or Codex
    session transcripts is captured as the hooks capture a session, one memory a session.
    Ctrl-C stops between two memories; the same import finishes it."""
    # the readers load only for an import (about 10 ms every other command would pay)
    from memvault.features.importers.sources import parsed, sniffed

    if source.is_dir():
        _import_transcripts(ctx, source, fmt, dry_run, as_json)
        return
    text = stdin_text("an export") if str(source) == "-" else _read_text(source)
    fmt = sniffed(text) if fmt == "auto" else fmt
    if fmt in TRANSCRIPT_FORMATS:
        raise click.BadParameter(
            f"--format {fmt} imports a folder of transcripts; `memvault capture FILE` takes one",
            param_hint="--format",
        )
    if fmt == MEMVAULT:
        _import_export(ctx, text, secrets, dry_run, as_json)
    else:
        _import_source(ctx, parsed(text, fmt), dry_run, as_json)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise click.BadParameter(
            f"{path} is not UTF-8 text ({exc.reason})", param_hint="SOURCE"
        ) from exc


def _import_export(
    ctx: click.Context, text: str, secrets: SecretPolicy, dry_run: bool, as_json: bool
) -> None:
    """`import` of memvault's own export."""
    # export_import builds on presentation/output.py's models (pydantic)
    from memvault.features.export_import import (
        import_records,
        load,
    )

    records = load(text)
    with service(ctx, start=not dry_run) as vault:
        report = import_records(vault, records, secrets, dry_run)
    if as_json:
        emit(report)
    else:
        created = "would create" if dry_run else "created"
        click.echo(
            f"{created} {memories(len(report.created))}, "
            f"{len(report.unchanged):,} unchanged, {count(len(report.conflicts), 'conflict')}"
        )
        for conflict in report.conflicts:
            click.echo(f"  conflict {conflict['id']} ({conflict['path']}): {conflict['reason']}")
    if report.conflicts:
        ctx.exit(EXIT_ERROR)


def _import_transcripts(
    ctx: click.Context, folder: Path, fmt: str, dry_run: bool, as_json: bool
) -> None:
    """`import` of a folder of session transcripts."""
    from memvault.features.importers.transcripts import (
        import_transcripts,
        sniffed_transcripts,
        transcript_files,
    )

    if fmt == "auto":
        fmt = sniffed_transcripts(transcript_files(folder))
    elif fmt not in TRANSCRIPT_FORMATS:
        raise click.BadParameter(
            f"a folder holds transcripts: claude-code or codex, not {fmt}", param_hint="--format"
        )
    _report_import(
        ctx, dry_run, as_json, lambda vault, run: import_transcripts(vault, folder, fmt, run)
    )


def _import_source(ctx: click.Context, found: Parsed, dry_run: bool, as_json: bool) -> None:
    """`import` of another tool's data; exit 130 when Ctrl-C stopped it."""
    from memvault.features.importers.run import import_parsed

    _report_import(ctx, dry_run, as_json, lambda vault, run: import_parsed(vault, found, run))


def _report_import(
    ctx: click.Context,
    dry_run: bool,
    as_json: bool,
    importing: Callable[[VaultService, Run], SourceImport],
) -> None:
    """Run an import of another tool's data with a progress bar, and report it; exit 130
    when Ctrl-C stopped it."""
    from memvault.features.importers.run import Run

    agent = writer(ctx)
    with service(ctx, start=not dry_run) as vault, between_steps() as stop:
        report = with_progress(
            "importing",
            as_json,
            lambda progress: importing(vault, Run(dry_run, agent, stop, progress)),
        )
    if as_json:
        emit(report)
    else:
        click.echo(source_import_line(report))
        for skip in report.skipped:
            click.echo(f"  skipped {skip['entry']}: {skip['reason']}")
    if report.interrupted:
        click.echo("interrupted: the same import again finishes it", err=True)
        ctx.exit(EXIT_INTERRUPTED)
