"""The session briefing shares its token budget among its sections: a tight budget shortens
every section rather than leaving some out (issue 37). Through the service API, the CLI and a
real MCP session."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

import pytest
from click.testing import CliRunner

from memvault.cli import main
from memvault.config import Settings
from memvault.core.drafts import Draft, WriteOptions
from memvault.core.records import Filter
from memvault.features.briefing import build_briefing, estimate_tokens, fair_widths
from memvault.features.session_notes import SessionFields, save_session_notes
from memvault.service.vault import VaultService

from .conftest import write_file
from .mcp_helpers import stdio_session, structured

OLD = "2020-01-01T00:00:00Z"
SECTIONS = [
    "Always (gotcha)",
    "Last session",
    "Scope: project",
    "Scope: shared",
    "Changed in the last 7 days",
    "Not reviewed for 90+ days (verify_mem if still true)",
]
WORDS = "a long sentence about the deploy pipeline and what it needs before it runs"


def filled(vault: VaultService) -> None:
    """A vault where every section has more than any budget here shows: gotchas, a session,
    memories of two scopes, recent global ones and old ones nobody reviewed."""
    for i in range(12):
        note(vault, f"Gotcha number {i}", category="gotcha")
        note(vault, f"project fact {i}", scope="project")
        note(vault, f"shared fact {i}", scope="shared")
        note(vault, f"Global note {i}", category="notes")
    save_session_notes(vault, SessionFields("Moved the billing job to the new queue."))
    for i in range(12):
        path = write_file(
            vault.root,
            f"pattern/old-{i}.md",
            f"---\nid: {i:08d}-0000-4000-8000-000000000000\ntitle: Old pattern {i}\n"
            f"category: pattern\ntags: []\ncreated_at: {OLD}\nupdated_at: {OLD}\n"
            f"last_reviewed: {OLD}\n---\nOld pattern {i} body.\n",
        )
        os.utime(path, (1_577_836_800, 1_577_836_800))
    vault.upkeep.sync()


def note(vault: VaultService, title: str, **where: str) -> None:
    vault.create(Draft(title, f"{WORDS}: {title}.", **where), WriteOptions(allow_duplicate=True))


def sections_of(names: Iterable[str]) -> list[str]:
    """The sections items name, in order, once each."""
    return list(dict.fromkeys(names))


@pytest.mark.parametrize("budget", [300, 500, 2000])
def test_every_section_shows_within_the_budget(vault: VaultService, budget: int) -> None:
    filled(vault)
    briefing = build_briefing(vault, ("project", "shared"), budget)
    assert sections_of(item.section for item in briefing.items) == SECTIONS
    assert estimate_tokens(briefing.text) == briefing.tokens <= budget
    for name in SECTIONS:
        assert f"\n## {name}\n" in briefing.text
    assert "Moved the billing job" in briefing.text or budget < 500
    if budget == 2000:
        counts = [sum(item.section == name for item in briefing.items) for name in SECTIONS]
        # The sections with more to say share the room about equally; the session has one.
        assert counts[1] == 1 and min(counts[2:]) >= max(counts) - 1 >= 4, counts


def test_a_section_that_needs_little_leaves_its_share_to_the_others(vault: VaultService) -> None:
    """With one short gotcha and many long notes, the notes take what the gotcha leaves."""
    vault.create(Draft("Tabs", "No.", category="gotcha"))
    for i in range(30):
        note(vault, f"Global note {i}", category="notes")
    briefing = build_briefing(vault, max_tokens=400)
    assert [item.title for item in briefing.items][:1] == ["Tabs"]
    assert sum(item.section.startswith("Changed") for item in briefing.items) >= 4
    assert briefing.tokens <= 400


def test_fair_widths_give_short_lines_their_length_and_long_ones_equal_cuts() -> None:
    assert fair_widths([20, 200, 200], 220) == [20, 100, 100]
    assert fair_widths([20, 30], 1000) == [20, 30]
    assert fair_widths([90, 100, 200], 240) == [80, 80, 80]


def test_the_cli_context_keeps_every_section_at_300_tokens(vault: VaultService) -> None:
    filled(vault)
    result = CliRunner().invoke(
        main,
        ["--vault", str(vault.root), "context", "--scope", "project", "--scope", "shared",
         "--max-tokens", "300", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert sections_of(item["section"] for item in out["items"]) == SECTIONS
    assert out["tokens"] <= 300


@pytest.mark.processes
@pytest.mark.anyio
async def test_get_context_keeps_every_section_at_500_tokens(vault: VaultService) -> None:
    filled(vault)
    async with stdio_session(vault.root) as session:
        result = await session.call_tool(
            "get_context", {"scope": ["project", "shared"], "max_tokens": 500}
        )
    out = structured(result)
    assert sections_of(item["section"] for item in out["items"]) == SECTIONS
    assert estimate_tokens(out["briefing"]) <= 500


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_a_huge_note_in_the_briefing_is_read_from_its_start_only(vault_dir: Path) -> None:
    """A 30 MB note just written is among the recent changes: its lead line comes from the
    start of its file (a SessionStart hook read a 50 MB note whole: 0.7 s)."""
    write_file(vault_dir, "big.md", "# Huge log\n\nFirst line of the log.\n" + "x " * 15_000_000)
    vault = VaultService.open(Settings(vault=vault_dir))
    before = _rchar()
    briefing = build_briefing(vault, None, 1500)
    read = _rchar() - before
    vault.close()
    assert "First line of the log." in briefing.text
    assert read < 5 * 1024 * 1024, read
    assert os.path.getsize(vault_dir / "big.md") > 25 * 1024 * 1024


def _rchar() -> int:
    """Bytes this process has read so far (Linux's /proc/self/io)."""
    counts = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(counts["rchar"])


def test_an_uncounted_list_gives_the_same_page_without_its_total(vault: VaultService) -> None:
    for n in range(5):
        vault.create(Draft(f"Note {n}", f"Text number {n} of five, each its own."))
    counted = vault.list_memories(Filter(), "updated", 3)
    uncounted = vault.list_memories(Filter(), "updated", 3, counted=False)
    assert counted[1] == 5 and uncounted[1] == 3
    assert [row.id for row in counted[0]] == [row.id for row in uncounted[0]]
