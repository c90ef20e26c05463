"""Assistant workflows: scope, usage, verification, expiry, export/import, session notes, the
session briefing; through the service, the CLI and a real MCP session."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from memvault.cli import main
from memvault.config import ContextSettings, Settings
from memvault.core.drafts import Draft
from memvault.core.records import Filter
from memvault.features.briefing import build_briefing
from memvault.features.export_import import dump, export_records, import_records, load
from memvault.features.session_notes import SessionFields, save_session_notes
from memvault.service.vault import VaultService

from .conftest import write_file
from .mcp_helpers import stdio_session, structured, text_of

OLD = "2020-01-01T00:00:00Z"


def old_memory(vault_dir: Path, name: str, title: str, category: str = "pattern") -> None:
    """A memory written long ago and never reviewed since."""
    write_file(
        vault_dir,
        f"{category}/{name}.md",
        f"---\nid: {name}-0000-4000-8000-000000000000\ntitle: {title}\ncategory: {category}\n"
        f"tags: []\ncreated_at: {OLD}\nupdated_at: {OLD}\nlast_reviewed: {OLD}\n---\n"
        f"{title} body.\n",
    )


def test_scope_filters_and_includes_global_memories(vault: VaultService) -> None:
    vault.create(Draft("Shop deploy", "deploy steps for the shop", scope="shop"))
    vault.create(Draft("Blog deploy", "deploy steps for the blog", scope="blog"))
    vault.create(Draft("General deploy rule", "deploy on weekdays only"))

    def titles(**where: object) -> set[str]:
        return {h.title for h in vault.search("deploy", 10, 0, Filter(**where)).results}  # type: ignore[arg-type]

    assert titles(scope="shop") == {"Shop deploy", "General deploy rule"}
    assert titles(scope="shop", only_scope=True) == {"Shop deploy"}
    assert titles() == {"Shop deploy", "Blog deploy", "General deploy rule"}
    assert vault.get("shop-deploy").scope == "shop"


def test_usage_counts_reads_searches_and_survives_reindex(vault: VaultService) -> None:
    used = vault.create(Draft("Often used", "kangaroo facts"))
    vault.create(Draft("Never used", "nothing here"))
    vault.recall("often used")
    vault.search("kangaroo")
    vault.upkeep.rebuild()
    rows, _ = vault.list_memories(sort="usage")
    assert [(r.title, r.access_count) for r in rows] == [("Often used", 2), ("Never used", 0)]
    assert rows[0].last_access is not None
    assert vault.stats().never_used == ["never-used.md"]
    assert (vault.root / used.path).read_text().count("access") == 0


def test_verify_sets_last_reviewed_and_clears_the_stale_flag(
    vault: VaultService, vault_dir: Path
) -> None:
    old_memory(vault_dir, "aaaaaaaa", "Old pattern")
    vault.upkeep.sync()
    before = build_briefing(vault)
    assert [(i.title, i.stale) for i in before.items] == [("Old pattern", True)]
    assert "not reviewed 6 years ago" in before.text or "not reviewed" in before.text
    verified = vault.verify("Old pattern")
    assert verified.last_reviewed and verified.last_reviewed > OLD
    assert [i.stale for i in build_briefing(vault).items] == [False]


def test_expired_memories_leave_search_then_move_to_the_archive(vault: VaultService) -> None:
    gone = vault.create(
        Draft("Temporary outage", "the API is down", category="ops", expires_at="2000-01-01")
    )
    vault.create(Draft("Lasting fact", "the API lives in eu-west", category="ops", ttl_days=30))
    assert [h.title for h in vault.search("API").results] == ["Lasting fact"]
    assert vault.upkeep.archive_expired() == ["archive/ops/temporary-outage.md"]
    assert vault.get(gone.id).path == "archive/ops/temporary-outage.md"
    rows, total = vault.list_memories(Filter(archived=True))
    assert (total, rows[0].title) == (1, "Temporary outage")
    assert vault.list_memories()[1] == 1


def test_export_then_import_into_another_vault(vault: VaultService, tmp_path: Path) -> None:
    a = vault.create(Draft("Alpha", "first", ["x"], "notes", scope="shop"))
    b = vault.create(Draft("Beta", "second"))
    vault.link(a.id, b.id)
    vault.recall("alpha")
    for fmt in ("json", "jsonl"):
        records = load("".join(dump(export_records(vault), fmt)))
        assert {r["id"] for r in records} == {a.id, b.id}
        other = VaultService.open(Settings(vault=tmp_path / f"other-{fmt}"))
        report = import_records(other, records)
        assert sorted(report.created) == ["beta.md", "notes/alpha.md"]
        copy = other.get(a.id)
        assert (copy.title, copy.scope, copy.tags, copy.body) == (
            "Alpha",
            "shop",
            ["x"],
            vault.get(a.id).body,
        )
        assert other.usage()[a.id].access_count == 1
        assert other.upkeep.check().clean
        again = import_records(other, records)
        assert (again.created, sorted(again.unchanged)) == ([], sorted([a.id, b.id]))
        records[0]["content"] = "changed elsewhere"
        clash = import_records(other, records)
        assert [c["id"] for c in clash.conflicts] == [records[0]["id"]]
        other.close()


# One memory as `memvault export --format jsonl` wrote it before the faces shared output.py.
EXPORTED_BEFORE = (
    '{"id": "0b7f3c1e-5a2d-4c8e-9f10-2b3c4d5e6f70", "title": "Kept", "path": "notes/kept.md", '
    '"category": "notes", "scope": "shop", "tags": ["x"], "aliases": ["K"], '
    '"created_at": "2020-01-01T00:00:00Z", "updated_at": "2020-01-01T00:00:00Z", '
    '"last_reviewed": "2020-01-01T00:00:00Z", "expires_at": null, '
    '"content": "Kept body, see [[gone]].\\n", '
    '"links": [{"id": null, "title": "gone", "path": null, "raw": "gone"}], "backlinks": [], '
    '"frontmatter": {"id": "0b7f3c1e-5a2d-4c8e-9f10-2b3c4d5e6f70", "title": "Kept", '
    '"aliases": ["K"], "category": "notes", "scope": "shop", "tags": ["x"], '
    '"created_at": "2020-01-01T00:00:00Z", "updated_at": "2020-01-01T00:00:00Z", '
    '"last_reviewed": "2020-01-01T00:00:00Z", "status": "draft"}, "problem": null, '
    '"usage": {"access_count": 2, "last_access": "2020-01-02T00:00:00Z"}}\n'
)


def test_an_older_export_imports_and_exports_keep_its_keys(vault: VaultService) -> None:
    before = json.loads(EXPORTED_BEFORE)
    assert import_records(vault, load(EXPORTED_BEFORE)).created == ["notes/kept.md"]
    kept = vault.get(before["id"])
    assert (kept.title, kept.scope, kept.aliases, kept.metadata["status"]) == (
        "Kept",
        "shop",
        ["K"],
        "draft",
    )
    assert vault.usage()[before["id"]].access_count == 2
    (again,) = export_records(vault)
    assert set(again) == set(before)
    assert {k: again[k] for k in ("id", "path", "content", "links", "backlinks", "tags")} == {
        k: before[k] for k in ("id", "path", "content", "links", "backlinks", "tags")
    }


def test_session_notes_link_both_ways_to_what_they_name(vault: VaultService) -> None:
    deploy = vault.create(Draft("Deploy order", "migrations first"))
    notes = save_session_notes(
        vault,
        SessionFields(
            f"Fixed the deploy; see [[deploy-order]] and {deploy.id}.",
            highlights=["found the race"],
            next_steps=["add a canary"],
            decisions=["keep order"],
        ),
    )
    assert notes.memory.category == "session"
    assert re.fullmatch(r"Session \d{4}-\d{2}-\d{2} \d{2}:\d{2}", notes.memory.title)
    assert [m.id for m in notes.linked] == [deploy.id]
    assert "## Next steps\n- add a canary\n" in notes.memory.body
    assert {r.source for r in vault.backlinks(vault.get(deploy.id))} == {notes.memory.path}
    assert vault.upkeep.check().clean


def test_the_briefing_fits_its_budget_and_says_how_old_things_are(
    vault: VaultService, vault_dir: Path
) -> None:
    vault.create(Draft("Never force-push main", "it breaks CI for everyone", category="gotcha"))
    for i in range(30):
        vault.create(
            Draft(
                f"Recent note {i}", " ".join(f"topic{i}x{j}" for j in range(40)), category="notes"
            )
        )
    old_memory(vault_dir, "bbbbbbbb", "Ancient schema", "schema")
    vault.upkeep.sync()
    briefing = build_briefing(vault, max_tokens=400)
    assert briefing.tokens <= 400
    assert briefing.items[0].title == "Never force-push main"
    assert briefing.items[0].section == "Always (gotcha)"
    # Each item names its memory as read_mem takes it (its path, category first) and its age.
    assert "- Never force-push main (gotcha/never-force-push-main, just now): it breaks" in (
        briefing.text
    )
    assert all(len(item.line) <= 160 for item in briefing.items)
    big = build_briefing(vault, max_tokens=20_000, settings=ContextSettings(stale_days=365))
    assert [i.title for i in big.items if i.stale] == ["Ancient schema"]
    assert len(big.items) == 32


def test_cli_stats_archive_export_import_verify_context(vault_dir: Path, tmp_path: Path) -> None:
    def run(*args: str, vault: Path = vault_dir) -> tuple[int, str]:
        result = CliRunner().invoke(main, ["--vault", str(vault), *args])
        return result.exit_code, result.stdout

    run("write", "--title", "Gotcha one", "--category", "gotcha", "--scope", "shop", "beware")
    run("write", "--title", "Short lived", "--expires-at", "2001-01-01", "x")
    code, out = run("stats", "--json")
    figures = json.loads(out)
    assert figures["memories"] == 2
    assert figures["by_scope"] == {"(global)": 1, "shop": 1}
    assert json.loads(run("list", "--archived", "--json")[1])["total"] == 0
    assert json.loads(run("archive", "--expired", "--json")[1]) == {
        "finished_renames": [],
        "archived": ["archive/short-lived.md"],
    }
    assert json.loads(run("list", "--archived", "--json")[1])["total"] == 1
    assert run("verify", "gotcha-one")[0] == 0
    code, out = run("context", "--scope", "shop")
    assert code == 0 and "Gotcha one" in out
    code, out = run("export", "--format", "jsonl")
    (tmp_path / "dump.jsonl").write_text(out)
    assert len(out.splitlines()) == 2
    code, out = run("--create", "import", str(tmp_path / "dump.jsonl"), vault=tmp_path / "copy")
    assert code == 0 and out.startswith("created 2 memories, 0 unchanged, no conflicts")
    code, out = run("session-notes", "--summary", "Worked on [[gotcha-one]]", "--json")
    assert [m["path"] for m in json.loads(out)["linked"]] == ["gotcha/gotcha-one.md"]
    code, out = run("write", "--title", "Gotcha one", "--scope", "shop", "again")
    assert code == 1


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.processes
@pytest.mark.anyio
async def test_a_scripted_assistant_session(vault_dir: Path) -> None:
    old_memory(vault_dir, "cccccccc", "Payments use idempotency keys", "pattern")
    async with stdio_session(vault_dir) as session:
        start = structured(await session.call_tool("get_context", {"scope": "shop"}))
        assert "Payments use idempotency keys" in start["briefing"]
        assert start["items"][0]["stale"] is True

        found = structured(
            await session.call_tool(
                "search_mem", {"query": "how do payments avoid double charges?", "scope": "shop"}
            )
        )
        assert found["results"] and found["results"][0]["title"].startswith("Payments")

        gotcha = structured(
            await session.call_tool(
                "write_mem",
                {
                    "title": "Stripe retries webhooks for 3 days",
                    "content": "Handlers must be "
                    "idempotent: Stripe retries a failed webhook for up to three days.",
                    "category": "gotcha",
                    "scope": "shop",
                    "tags": ["stripe"],
                },
            )
        )
        refused = await session.call_tool(
            "write_mem",
            {"title": "Stripe retries webhooks for 3 days", "content": "again", "scope": "shop"},
        )
        assert refused.is_error and gotcha["id"] in text_of(refused)

        verified = structured(
            await session.call_tool("verify_mem", {"id": "Payments use idempotency keys"})
        )
        assert verified["last_reviewed"] > OLD

        notes = structured(
            await session.call_tool(
                "save_session_notes",
                {
                    "summary": "Reviewed webhooks; see [[stripe-retries-webhooks-for-3-days]].",
                    "decisions": ["keep idempotency keys"],
                    "next_steps": ["load-test webhooks"],
                    "scope": "shop",
                },
            )
        )
        assert [m["id"] for m in notes["linked"]] == [gotcha["id"]]

        exported = structured(await session.call_tool("export_mem", {"scope": "shop"}))
        assert exported["count"] == 3

    async with stdio_session(vault_dir) as session:
        again = structured(await session.call_tool("get_context", {"scope": "shop"}))
        titles = [item["title"] for item in again["items"]]
        assert titles[0] == "Stripe retries webhooks for 3 days"
        assert notes["title"] in titles
        assert not any(item["stale"] for item in again["items"])
        assert again["tokens"] <= 2000
        resource = await session.read_resource("memvault://context")
        assert "Stripe retries webhooks" in resource.contents[0].text  # type: ignore[union-attr]
        listed = structured(await session.call_tool("list_mem", {"sort": "usage"}))
        assert listed["items"][0]["access_count"] >= 2
