"""Commands that look at many memories: search, similar, list, context, stats."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import click

from memvault.cli import emit, filter_options, json_option, main, make_filter, service, settings_of
from memvault.cli.terminal import show
from memvault.core.records import SearchHit, SearchMode
from memvault.features.briefing import build_briefing
from memvault.presentation.lines import (
    hit_line,
    list_heading,
    note_line,
    search_heading,
    similar_heading,
    stats_text,
    waiting_line,
)

# How long a search may first spend embedding the notes that wait for it (none has a server).
QUICK_EMBED_SECONDS = 2.0


@main.command()
@click.argument("query")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option("--offset", default=0, type=click.IntRange(0))
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "keyword", "semantic"]),
    default=None,
    help="By words and meaning (hybrid), words only or meaning only [default: hybrid once "
    "notes are embedded, else keyword].",
)
@click.option(
    "--min-relevance",
    default=0.0,
    type=click.FloatRange(0, 1),
    help="Leave out hits less relevant than this (0..1; see docs/search.md).",
)
@click.option("--prefer-recent", is_flag=True, help="Break near-ties toward newer memories.")
@filter_options
@json_option
@click.pass_context
def search(
    ctx: click.Context,
    /,
    query: str,
    limit: int,
    offset: int,
    mode: SearchMode | None,
    min_relevance: float,
    prefer_recent: bool,
    as_json: bool,
    **filters: Any,
) -> None:
    """Search: plain questions by words and meaning; "exact phrases", prefix*, -excluded, OR."""
    where = make_filter(**filters)
    with service(ctx) as vault:
        if mode != "keyword":
            waiting = vault.embed_if_quick(QUICK_EMBED_SECONDS)
            if waiting.notes:
                click.echo(f"note: {waiting_line(waiting)}", err=True)
        page = vault.search(query, limit, offset, where, mode, min_relevance, prefer_recent)
    if as_json:
        from memvault.presentation.output import SearchOut

        emit(SearchOut.of(page))
        return
    _echo_hits(page.results, search_heading(page, query))
    if page.has_more:
        click.echo(f"More match: --offset {page.offset + len(page.results)}.", err=True)


@main.command()
@click.argument("identifier")
@click.option("--limit", default=5, show_default=True, type=click.IntRange(1, 1000))
@json_option
@click.pass_context
def similar(ctx: click.Context, /, identifier: str, limit: int, as_json: bool) -> None:
    """Memories most like one (id, path or title): by meaning once embedded, else by words."""
    with service(ctx) as vault:
        found = vault.similar(identifier, limit)
    if as_json:
        from memvault.presentation.output import SimilarOut

        emit(SimilarOut.of(found))
        return
    _echo_hits(found.results, similar_heading(found, identifier))


def _echo_hits(hits: list[SearchHit], heading: str) -> None:
    """One line a hit on stdout, then the heading (how many, of what) on stderr."""
    for hit in hits:
        show(hit_line(hit))
    click.echo(heading, err=True)


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
        from memvault.presentation.output import ListOut

        emit(ListOut.of(rows, total))
        return
    for row in rows:
        click.echo(note_line(row))
    click.echo(list_heading(len(rows), total, offset), err=True)


@main.command()
@click.option("--scope", "scopes", multiple=True, help="A scope (repeat for several).")
@click.option("--max-tokens", default=2000, show_default=True, type=click.IntRange(100))
@click.option(
    "--recent-days",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="What counts as changed recently [default: 7].",
)
@json_option
@click.pass_context
def context(
    ctx: click.Context,
    scopes: tuple[str, ...],
    max_tokens: int,
    recent_days: float | None,
    as_json: bool,
) -> None:
    """The session briefing an assistant gets from get_context."""
    settings = settings_of(ctx).context
    if recent_days is not None:
        settings = replace(settings, recent_days=recent_days)
    with service(ctx) as vault:
        briefing = build_briefing(vault, scopes, max_tokens, settings)
    if as_json:
        from memvault.presentation.output import ContextOut

        emit(ContextOut.of(briefing))
    else:
        show(briefing.text, nl=False)
        click.echo(f"(about {briefing.tokens} tokens)", err=True)


@main.command()
@json_option
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """Counts by category, scope and tag, never-used memories, vault size."""
    with service(ctx) as vault:
        figures = vault.stats()
    if as_json:
        emit(figures)  # the fields of get_stats's StatsOut, without importing pydantic
        return
    click.echo(stats_text(figures))
