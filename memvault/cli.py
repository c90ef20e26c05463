"""The `memvault` command: a thin click face over VaultService (parse, call, format)."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager, suppress
from dataclasses import asdict
from pathlib import Path
from typing import Any, cast

import click

from . import clock
from .briefing import build_briefing
from .config import DEFAULT_VAULT, ContextSettings, Settings
from .errors import MemvaultError
from .exchange import dump, export_records, import_records, load
from .markdown import BodyEdit
from .records import Filter
from .session_notes import save_session_notes
from .vault import VaultService
from .views import (
    check_view,
    memory_view,
    note_view,
    plain_text,
    search_view,
    summary_view,
)

EXIT_ERROR = 1


class Face(click.Group):
    """Turns memvault errors into one line on stderr and a non-zero exit (no traceback)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemvaultError as exc:
            if ctx.meta.get("memvault.debug"):
                raise
            click.echo(f"error: {exc}", err=True)
            ctx.exit(EXIT_ERROR)


@click.group(cls=Face, context_settings={"help_option_names": ["-h", "--help"]})
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
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
@click.pass_context
def main(
    ctx: click.Context,
    vault: Path,
    index_path: Path | None,
    always: str,
    stale_days: float,
    debug: bool,
) -> None:
    """memvault: an assistant's long-term memory as a folder of markdown files."""
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    ctx.meta["memvault.debug"] = debug
    always_categories = tuple(c.strip() for c in always.split(",") if c.strip())
    context_settings = ContextSettings(always=always_categories, stale_days=stale_days)
    ctx.obj = Settings(vault=vault, index_path=index_path, context=context_settings)


@contextmanager
def service(ctx: click.Context, fill: bool = True) -> Iterator[VaultService]:
    vault = VaultService.open(ctx.find_object(Settings) or Settings(), fill)
    try:
        yield vault
    finally:
        vault.close()


@contextmanager
def watching(vault: VaultService, enabled: bool) -> Iterator[None]:
    if not enabled:
        yield
        return
    from .watch import VaultWatcher

    watcher = VaultWatcher(vault)
    watcher.start()
    try:
        yield
    finally:
        watcher.stop()


def emit(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def show_summary(view: dict[str, Any], as_json: bool, headline: str) -> None:
    """A reindex or sync summary: the JSON, or a headline and one line per skipped file."""
    if as_json:
        emit(view)
        return
    click.echo(headline)
    for item in view["skipped"]:
        click.echo(f"  {item['path']}: {item['reason']}")


def read_content(content: str | None) -> str | None:
    """CONTENT as given, or standard input for `-`."""
    return sys.stdin.read() if content == "-" else content


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
tag_option = click.option("--tag", "tags", multiple=True, help="A tag (repeat for several).")


def filter_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--category, --tag, --scope, --only-scope, --archived: which memories a command covers."""
    for option in reversed(
        (
            click.option("--category", default=None, help="Only this category (and below it)."),
            tag_option,
            click.option("--scope", default=None, help="This scope's memories plus global ones."),
            click.option("--only-scope", is_flag=True, help="With --scope: leave out global ones."),
            click.option("--archived", is_flag=True, help="The archive instead of live memories."),
        )
    ):
        command = option(command)
    return command


def make_filter(
    category: str | None,
    tags: tuple[str, ...],
    scope: str | None,
    only_scope: bool,
    archived: bool,
) -> Filter:
    return Filter(category, tags, scope, only_scope, archived)


@main.command()
@json_option
@click.pass_context
def reindex(ctx: click.Context, as_json: bool) -> None:
    """Rebuild the index from the files (kept state such as usage counts survives)."""
    with service(ctx, fill=False) as vault:
        if sys.stderr.isatty() and not as_json:
            with click.progressbar(length=1, label="indexing", file=sys.stderr) as bar:

                def progress(done: int, total: int) -> None:
                    bar.length = total
                    bar.update(done - bar.pos)

                summary = vault.rebuild(progress)
        else:
            summary = vault.rebuild()
    view = summary_view(summary)
    show_summary(
        view,
        as_json,
        f"indexed {view['notes']} notes in {view['seconds']:.2f}s: {view['links']} links, "
        f"{view['unresolved_links']} unresolved, {view['attachments']} to attachments",
    )


@main.command()
@json_option
@click.pass_context
def sync(ctx: click.Context, as_json: bool) -> None:
    """Index only what changed on disk since the last pass (the full rebuild is `reindex`)."""
    with service(ctx, fill=False) as vault:
        summary = vault.sync()
        done = vault.maintain()
    view = {**summary_view(summary), **asdict(done)}
    show_summary(
        view,
        as_json,
        f"synced in {view['seconds']:.2f}s: {view['added']} added, {view['updated']} updated, "
        f"{view['moved']} moved, {view['removed']} removed",
    )
    if not as_json:
        for line in done.lines():
            click.echo(line)


@main.command()
@click.argument("query")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option("--offset", default=0, type=click.IntRange(0))
@filter_options
@json_option
@click.pass_context
def search(
    ctx: click.Context, /, query: str, limit: int, offset: int, as_json: bool, **filters: Any
) -> None:
    """Full-text search: plain questions, "exact phrases", prefix*, -excluded, OR."""
    with service(ctx) as vault:
        page = vault.search(query, limit, offset, make_filter(**filters))
    if as_json:
        emit(search_view(page))
        return
    if not page.results:
        click.echo("no results", err=True)
    for hit in page.results:
        click.echo(f"{hit.score:8.2f}  {hit.title}  ({hit.path}, updated {hit.age})")
        click.echo(f"          {' '.join(hit.snippet.split())}")


@main.command()
@click.argument("identifier")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "plain", "json"]),
    default="markdown",
    show_default=True,
)
@click.pass_context
def read(ctx: click.Context, identifier: str, fmt: str) -> None:
    """Print a memory named by id, path, slug, title or alias (or, when none matches exactly,
    the one it clearly means: a note on stderr gives the confidence)."""
    with service(ctx) as vault:
        found = vault.recall(identifier)
        memory = found.memory
        if found.confidence < 1.0:
            click.echo(
                f"note: no memory is named {identifier!r}; showing the closest, {memory.title!r} "
                f"({found.matched_by} match, confidence {found.confidence:.2f})",
                err=True,
            )
        if fmt == "json":
            view = memory_view(memory, vault.outgoing(memory), vault.backlinks(memory))
            emit({**view, "confidence": found.confidence, "matched_by": found.matched_by})
        elif fmt == "plain":
            click.echo(plain_text(memory), nl=False)
        else:
            click.echo(vault.file_text(memory.path), nl=False)


@main.command()
@click.option("--title", required=True)
@click.option("--category", default=None)
@tag_option
@click.option("--scope", default=None, help="Project, account or fleet (omit: global).")
@click.option("--expires-at", default=None, help="ISO date after which it is archived.")
@click.option("--ttl-days", type=click.FloatRange(min=0, min_open=True), default=None)
@click.option("--allow-duplicate", is_flag=True, help="Keep it even if it repeats another.")
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
    content: str,
    as_json: bool,
) -> None:
    """Write a new memory; CONTENT or `-` (the default) for standard input."""
    with service(ctx) as vault:
        memory = vault.create(
            title,
            read_content(content) or "",
            list(tags),
            category,
            scope,
            expires_at,
            ttl_days,
            allow_duplicate,
        )
    if as_json:
        emit(
            {
                "id": memory.id,
                "title": memory.title,
                "path": memory.path,
                "created_at": memory.created_at,
            }
        )
    else:
        click.echo(f"{memory.id}  {memory.path}")


@main.command()
@click.argument("identifier")
@click.option("--title", default=None)
@click.option("--content", default=None, help="New body, or - for standard input.")
@click.option("--append", default=None, help="Text to add at the end (before ## Related).")
@click.option("--prepend", default=None, help="Text to add at the top.")
@click.option("--find", default=None, help="Exact text to replace (with --replace).")
@click.option("--replace", default=None, help="Replacement for --find.")
@click.option("--expected-count", type=int, default=None, help="How often --find must occur.")
@click.option("--tag", "tags", multiple=True, help="Replace the tags (repeat for several).")
@click.option("--category", default=None)
@click.option("--expected-updated-at", default=None, help="Refuse if the file changed since.")
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
    expected_updated_at: str | None,
    as_json: bool,
) -> None:
    """Change a memory's title (renames), text, tags or category (moves)."""
    edit = BodyEdit(
        content=read_content(content),
        find=find,
        replace=replace,
        expected_count=expected_count,
        prepend=prepend,
        append=append,
    )
    with service(ctx) as vault:
        memory = vault.update(
            identifier,
            title=title,
            edit=None if edit.empty else edit,
            tags=list(tags) if tags else None,
            category=category,
            expected_updated_at=expected_updated_at,
        )
    if as_json:
        emit({"id": memory.id, "path": memory.path, "updated_at": memory.updated_at})
    else:
        click.echo(f"{memory.id}  {memory.path}")


@main.command()
@click.argument("identifier")
@json_option
@click.pass_context
def rm(ctx: click.Context, identifier: str, as_json: bool) -> None:
    """Delete a memory and every link to it."""
    with service(ctx) as vault:
        deleted = vault.delete(identifier)
    if as_json:
        emit(
            {"id": deleted.memory.id, "path": deleted.memory.path, "removed_links": deleted.changed}
        )
    else:
        click.echo(f"deleted {deleted.memory.path}; links removed from {len(deleted.changed)}")


@main.command()
@click.argument("source")
@click.argument("target")
@click.option("--text", default=None, help="Link text shown in SOURCE.")
@json_option
@click.pass_context
def link(ctx: click.Context, source: str, target: str, text: str | None, as_json: bool) -> None:
    """Link two memories both ways (each lists the other under ## Related)."""
    with service(ctx) as vault:
        change = vault.link(source, target, text)
    if as_json:
        emit(
            {
                "source": change.source.path,
                "target": change.target.path,
                "markdown": change.markdown,
                "changed": change.changed,
            }
        )
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
        change = vault.unlink(source, target)
    if as_json:
        emit(
            {"source": change.source.path, "target": change.target.path, "changed": change.changed}
        )
    else:
        state = "unlinked" if change.changed else "were not linked"
        click.echo(f"{change.source.path} / {change.target.path}: {state}")


@main.command(name="list")
@filter_options
@click.option(
    "--sort", type=click.Choice(["updated", "created", "title", "usage"]), default="updated"
)
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10000))
@click.option("--offset", default=0, type=click.IntRange(0))
@json_option
@click.pass_context
def list_(
    ctx: click.Context, /, sort: str, limit: int, offset: int, as_json: bool, **filters: Any
) -> None:
    """List memories, newest first by default (--sort usage: most used first)."""
    with service(ctx) as vault:
        rows, total = vault.list_memories(make_filter(**filters), sort, limit, offset)
    if as_json:
        emit({"items": [note_view(r) for r in rows], "total": total})
        return
    for row in rows:
        click.echo(
            f"{row.age:>16}  {row.title}  ({row.path}; reviewed {clock.age(row.last_reviewed)}"
            f"; used {row.access_count}x)"
        )
    click.echo(f"{len(rows)} of {total}", err=True)


@main.command()
@click.option("--fix", is_flag=True, help="Repair one-sided links and duplicate ids.")
@json_option
@click.pass_context
def check(ctx: click.Context, fix: bool, as_json: bool) -> None:
    """Report broken, one-sided and ambiguous links, duplicate ids and bad frontmatter."""
    with service(ctx) as vault:
        view = check_view(vault.check(fix=fix))
    if as_json:
        emit(view)
    else:
        for fixed in view["fixed"]:
            click.echo(f"fixed: {fixed}")
        for item in view["broken_links"]:
            click.echo(f"broken link: {item['source']} -> [[{item['target']}]]")
        for item in view["one_sided_links"]:
            click.echo(f"one-sided link: {item['source']} -> {item['target']} (not back)")
        for item in view["duplicate_ids"]:
            click.echo(f"duplicate id {item['id']}: {', '.join(item['paths'])}")
        for item in view["malformed"]:
            click.echo(f"malformed: {item['path']}: {item['problem']}")
        for item in view["ambiguous_links"]:
            click.echo(
                f"ambiguous link: {item['source']} -> [[{item['target']}]] could be "
                + ", ".join(item["candidates"])
            )
        if view["clean"]:
            click.echo("vault is clean")
    if not view["clean"]:
        ctx.exit(EXIT_ERROR)


@main.command()
@click.argument("identifier")
@json_option
@click.pass_context
def verify(ctx: click.Context, identifier: str, as_json: bool) -> None:
    """Mark a memory as reviewed now (it is still true)."""
    with service(ctx) as vault:
        memory = vault.verify(identifier)
    if as_json:
        emit({"id": memory.id, "path": memory.path, "last_reviewed": memory.last_reviewed})
    else:
        click.echo(f"verified {memory.path} at {memory.last_reviewed}")


@main.command()
@click.option("--scope", default=None)
@click.option("--max-tokens", default=2000, show_default=True, type=click.IntRange(100))
@json_option
@click.pass_context
def context(ctx: click.Context, scope: str | None, max_tokens: int, as_json: bool) -> None:
    """The session briefing an assistant gets from get_context."""
    settings = ctx.find_object(Settings) or Settings()
    with service(ctx) as vault:
        briefing = build_briefing(vault, scope, max_tokens, settings.context)
    if as_json:
        emit(
            {
                "briefing": briefing.text,
                "tokens": briefing.tokens,
                "items": [vars(item) for item in briefing.items],
            }
        )
    else:
        click.echo(briefing.text, nl=False)
        click.echo(f"(about {briefing.tokens} tokens)", err=True)


@main.command()
@json_option
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """Counts by category, scope and tag, never-used memories, vault size."""
    with service(ctx) as vault:
        figures = asdict(vault.stats())
    if as_json:
        emit(figures)
        return
    click.echo(f"{figures['memories']} memories, {figures['bytes']:,} bytes")
    for key in ("by_category", "by_scope", "by_tag"):
        counts = ", ".join(f"{name} {n}" for name, n in figures[key].items())
        click.echo(f"{key.replace('_', ' ')}: {counts or '-'}")
    never = figures["never_used"]
    click.echo(f"never used: {len(never)}" + (f" ({', '.join(never[:10])}...)" if never else ""))


@main.command()
@click.option("--expired", is_flag=True, required=True, help="Archive memories past expires_at.")
@json_option
@click.pass_context
def archive(ctx: click.Context, expired: bool, as_json: bool) -> None:
    """Move expired memories to archive/ (never deleted; still readable)."""
    with service(ctx) as vault:
        moved = vault.archive_expired()
    if as_json:
        emit({"archived": moved})
    else:
        click.echo(f"archived {len(moved)} memories" + "".join(f"\n  {p}" for p in moved))


@main.command(name="export")
@click.option("--format", "fmt", type=click.Choice(["json", "jsonl"]), default="json")
@filter_options
@click.pass_context
def export_(ctx: click.Context, /, fmt: str, **filters: Any) -> None:
    """Print every memory (or the filtered ones) with metadata, links and usage."""
    where = make_filter(**filters)
    if not filters["archived"]:
        where = Filter(where.category, where.tags, where.scope, where.only_scope, None)
    with service(ctx) as vault:
        for chunk in dump(export_records(vault, where), fmt):
            click.echo(chunk, nl=False)


@main.command(name="import")
@click.argument("file", type=click.File("r", encoding="utf-8"))
@json_option
@click.pass_context
def import_(ctx: click.Context, file: Any, as_json: bool) -> None:
    """Import an export (JSON or JSON Lines): new ids are created, others reported."""
    records = load(file.read())
    with service(ctx) as vault:
        report = import_records(vault, records)
    if as_json:
        emit(vars(report))
    else:
        click.echo(
            f"created {len(report.created)}, unchanged {len(report.unchanged)}, "
            f"conflicts {len(report.conflicts)}"
        )
        for conflict in report.conflicts:
            click.echo(f"  conflict {conflict['id']} ({conflict['path']}): {conflict['reason']}")
    if report.conflicts:
        ctx.exit(EXIT_ERROR)


@main.command(name="session-notes")
@click.option("--summary", required=True)
@click.option("--highlight", "highlights", multiple=True)
@click.option("--decision", "decisions", multiple=True)
@click.option("--next-step", "next_steps", multiple=True)
@click.option("--scope", default=None)
@json_option
@click.pass_context
def session_notes(
    ctx: click.Context,
    summary: str,
    highlights: tuple[str, ...],
    decisions: tuple[str, ...],
    next_steps: tuple[str, ...],
    scope: str | None,
    as_json: bool,
) -> None:
    """Save dated session notes, linked with the memories they name."""
    with service(ctx) as vault:
        notes = save_session_notes(
            vault, summary, list(highlights), list(next_steps), list(decisions), scope
        )
    if as_json:
        emit(
            {
                "id": notes.memory.id,
                "path": notes.memory.path,
                "linked": [m.path for m in notes.linked],
                "unresolved": notes.unresolved,
            }
        )
    else:
        click.echo(f"{notes.memory.id}  {notes.memory.path} (linked {len(notes.linked)})")


@main.command()
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for MCP clients that launch memvault; http to share.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to bind.")
@click.option("--port", default=3000, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--token",
    envvar="MEMVAULT_TOKEN",
    default=None,
    help="HTTP: require Authorization: Bearer TOKEN (env MEMVAULT_TOKEN).",
)
@click.option(
    "--log-level",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"]),
    default="WARNING",
    show_default=True,
    help="Logs go to stderr.",
)
@click.option("--no-watch", is_flag=True, help="Do not watch the vault for outside edits.")
@click.pass_context
def serve(
    ctx: click.Context,
    transport: str,
    host: str,
    port: int,
    token: str | None,
    log_level: str,
    no_watch: bool,
) -> None:
    """Serve the vault to MCP clients (stdio by default, or streamable HTTP at /mcp).

    The index is synced with the files at start and, unless --no-watch, kept in step while
    serving by watching the vault for edits made in Obsidian or any other program."""
    logging.getLogger().setLevel(log_level)
    settings = ctx.find_object(Settings) or Settings()
    # A child process looks for what changed on disk while this one imports the MCP SDK: most
    # of a second each at 100k notes, which no other command pays (hence the import here).
    starting = VaultService.start(settings)
    from .server import LogLevel, build_server
    from .transport import MCP_PATH, serve_http, serve_stdio

    vault, done = starting.finish()
    for line in done.lines():
        click.echo(f"memvault: {line}", err=True)
    with closing(vault), watching(vault, not no_watch):
        server = build_server(vault, cast(LogLevel, log_level), settings.context)
        if transport == "http":
            url = f"http://{host if ':' not in host else f'[{host}]'}:{port}{MCP_PATH}"
            click.echo(
                f"memvault: serving {vault.root} at {url}\n"
                f"  connect an MCP client to {url} (streamable HTTP"
                f"{', header Authorization: Bearer <token>' if token else ''}),\n"
                "  or let the client launch `memvault serve` over stdio (see README). "
                "Ctrl-C stops.",
                err=True,
            )
            serve_http(server, host, port, token)
            return
        if sys.stdin.isatty():
            click.echo(
                "memvault: speaking MCP on stdin/stdout for an MCP client; nothing to type "
                "here. For a person: `memvault serve --transport http`. Ctrl-C stops.",
                err=True,
            )
        with suppress(KeyboardInterrupt):
            serve_stdio(server)


if __name__ == "__main__":
    main()
