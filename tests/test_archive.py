"""Expiry and the archive as edits: an existing memory's expiry set, changed or taken away, a
replace that keeps the expiry it is given, and archiving and restoring one memory or every
memory of a category or scope in one call, reversibly (back where it was, links intact),
through the service, the CLI and a real MCP session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memvault.cli import main
from memvault.core import clock
from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.core.records import Filter
from memvault.errors import Invalid
from memvault.service.vault import VaultService

from .conftest import write_file
from .mcp_helpers import stdio_session, structured, text_of, tool_error
from .test_terminal import on_terminal

REPLACE = WriteOptions(on_exists="replace")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def days_left(expires_at: str | None) -> float:
    return -(clock.days_since(expires_at) or 0.0)


def live(vault: VaultService) -> set[str]:
    return {row.title for row in vault.list_memories()[0]}


def shelved(vault: VaultService) -> set[str]:
    return {row.title for row in vault.list_memories(Filter(archived=True))[0]}


def test_a_replace_applies_the_expiry_it_is_given(vault: VaultService) -> None:
    vault.write(Draft("session token", "abc"), REPLACE)
    replaced = vault.write(Draft("session token", "def", ttl_days=1), REPLACE)
    assert replaced.replaced
    assert 0.9 < days_left(vault.get("session token").expires_at) <= 1
    vault.write(Draft("session token", "ghi", expires_at="2099-01-02"), REPLACE)
    assert vault.get("session token").expires_at == "2099-01-02T00:00:00Z"
    vault.write(Draft("session token", "jkl"), REPLACE)  # none given: it stays
    assert vault.get("session token").expires_at == "2099-01-02T00:00:00Z"
    vault.write(Draft("session token", "mno", expires_at="never"), REPLACE)
    assert vault.get("session token").expires_at is None


def test_an_edit_sets_changes_and_clears_the_expiry(vault: VaultService) -> None:
    memory = vault.create(Draft("Deploy freeze", "No deploys this week.", category="ops"))
    edited = vault.update(memory.id, Revision(ttl_days=3))
    assert 2.9 < days_left(edited.expires_at) <= 3
    edited = vault.update(memory.id, Revision(expires_at="2030-05-01T12:00:00+02:00"))
    assert edited.expires_at == "2030-05-01T10:00:00Z"
    assert vault.update(memory.id, Revision(expires_at="never")).expires_at is None
    assert "expires_at" not in (vault.root / memory.path).read_text(encoding="utf-8")
    with pytest.raises(Invalid, match="expires_at 'soon' is not an ISO date"):
        vault.update(memory.id, Revision(expires_at="soon"))


def test_never_spares_a_new_memory_its_categorys_ttl(vault_dir: Path) -> None:
    write_file(vault_dir, ".memvault/policies.toml", "[ttl_days]\nsession = 30\n")
    for title, given in (("Kept", ["--expires-at", "never"]), ("Short", [])):
        assert (
            cli(vault_dir, "write", "--title", title, "--category", "session", *given, "x")[0] == 0
        )
    kept = json.loads(cli(vault_dir, "read", "Kept", "--json")[1])
    short = json.loads(cli(vault_dir, "read", "Short", "--json")[1])
    assert kept["expires_at"] is None and 29.9 < days_left(short["expires_at"]) <= 30


def test_archive_and_restore_one_memory_keep_its_place_and_links(vault: VaultService) -> None:
    target = vault.create(Draft("Retry budget", "Three retries.", category="ops"))
    source = vault.create(
        Draft(
            "Payments",
            "See [[retry-budget]] and [budget](../ops/retry-budget.md).",
            category="decision",
        )
    )
    before = (vault.root / source.path).read_text(encoding="utf-8")
    archived = vault.update(target.id, Revision(archived=True))
    assert archived.path == "archive/ops/retry-budget.md"
    assert "Retry budget" not in live(vault) and "Retry budget" in shelved(vault)
    assert vault.search("three").results == []
    assert [link.source for link in vault.backlinks(archived)] == [source.path] * 2
    restored = vault.update(target.id, Revision(archived=False))
    assert restored.path == target.path and restored.category == "ops"
    assert (vault.root / source.path).read_text(encoding="utf-8") == before
    assert [link.source for link in vault.backlinks(restored)] == [source.path] * 2
    assert vault.search("three").results[0].path == target.path


def test_restoring_an_expired_memory_keeps_it_live(vault: VaultService) -> None:
    memory = vault.create(Draft("Promo code", "SPRING", category="deals", ttl_days=1))
    vault.update(memory.id, Revision(expires_at="2020-01-01"))
    assert vault.upkeep.archive_expired() == ["archive/deals/promo-code.md"]
    restored = vault.update(memory.id, Revision(archived=False))
    assert restored.path == "deals/promo-code.md" and restored.expires_at is None
    assert vault.upkeep.archive_expired() == [] and "Promo code" in live(vault)


def test_a_replace_brings_an_archived_key_back(vault: VaultService) -> None:
    vault.write(Draft("feature flag", "on", category="flags"), REPLACE)
    vault.archive("feature flag")
    saved = vault.write(Draft("feature flag", "off"), REPLACE)
    assert saved.replaced and saved.memory.path == "flags/feature-flag.md"
    assert "feature flag" in live(vault)


def test_every_memory_of_a_category_or_scope_in_one_call(vault: VaultService) -> None:
    for title, category, scope in (
        ("Ops A", "ops", None),
        ("Ops B", "ops/db", "acme"),
        ("Acme note", "notes", "acme"),
        ("Other", "notes", None),
    ):
        vault.create(Draft(title, f"{title} text", category=category, scope=scope))
    paths = [row.path for row in vault.archivable(vault.group("ops"))]
    moved = vault.archive_all(paths)
    assert sorted(m.path for m in moved) == ["archive/ops/db/ops-b.md", "archive/ops/ops-a.md"]
    assert live(vault) == {"Acme note", "Other"}
    acme = [row.path for row in vault.archivable(vault.group("acme"))]
    assert acme == ["notes/acme-note.md"]  # the archived one is not moved again
    vault.archive_all(acme)
    assert live(vault) == {"Other"}
    back = vault.archivable(vault.group("acme"), restore=True)
    vault.archive_all([row.path for row in back], restore=True)
    assert live(vault) == {"Other", "Acme note", "Ops B"}
    assert vault.get("Ops B").path == "ops/db/ops-b.md"
    back = vault.archivable(Filter(category="ops"), restore=True)
    vault.archive_all([row.path for row in back], restore=True)
    assert live(vault) == {"Other", "Acme note", "Ops B", "Ops A"} and shelved(vault) == set()


def cli(vault: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--vault", str(vault), *args])
    return result.exit_code, result.output


def test_cli_edit_expiry_and_archive_restore(vault_dir: Path) -> None:
    assert cli(vault_dir, "write", "--title", "Key A", "--category", "ops", "a")[0] == 0
    assert cli(vault_dir, "write", "--title", "Key B", "--category", "ops", "b")[0] == 0
    code, out = cli(vault_dir, "edit", "Key A", "--ttl-days", "2", "--json")
    assert code == 0, out
    read = json.loads(cli(vault_dir, "read", "Key A", "--json")[1])
    assert 1.9 < days_left(read["expires_at"]) <= 2
    assert cli(vault_dir, "edit", "Key A", "--expires-at", "never")[0] == 0
    assert json.loads(cli(vault_dir, "read", "Key A", "--json")[1])["expires_at"] is None
    code, out = cli(vault_dir, "archive", "--category", "ops", "--yes")
    assert code == 0, out
    assert out.splitlines() == [
        "archived 2 memories of category 'ops'",
        "  archive/ops/key-a.md",
        "  archive/ops/key-b.md",
    ]
    code, out = cli(vault_dir, "restore", "Key B", "--json")
    assert code == 0 and json.loads(out)["path"] == "ops/key-b.md"
    code, out = cli(vault_dir, "restore", "--category", "ops", "--json")
    assert code == 0 and [m["path"] for m in json.loads(out)["moved"]] == ["ops/key-a.md"]
    assert cli(vault_dir, "archive")[0] == 2  # a usage error: nothing named


@pytest.mark.processes
def test_archiving_a_category_asks_first_on_a_terminal(vault_dir: Path) -> None:
    write_file(vault_dir, "ops/a.md", "# A\n\none\n")
    write_file(vault_dir, "ops/b.md", "# B\n\ntwo\n")
    vault = ["--vault", str(vault_dir)]
    question = b"archive 2 memories of category 'ops'? [y/N]"
    code, printed = on_terminal([*vault, "archive", "--category", "ops"], b"n\n", question)
    assert code == 1 and "nothing archived" in printed and (vault_dir / "ops/a.md").exists()
    code, printed = on_terminal([*vault, "archive", "--category", "ops"], b"y\n", question)
    assert code == 0 and (vault_dir / "archive/ops/a.md").exists()
    code, printed = on_terminal([*vault, "restore", "--category", "ops", "--yes"])
    assert code == 0 and "[y/N]" not in printed and (vault_dir / "ops/b.md").exists()


@pytest.mark.processes
@pytest.mark.anyio
async def test_expiry_and_archive_over_mcp(vault_dir: Path) -> None:
    async with stdio_session(vault_dir) as session:

        async def call(name: str, **args: object) -> dict[str, object]:
            return structured(await session.call_tool(name, args))

        await call("write_mem", title="rate limit", content="100/s", category="ops")
        await call("write_mem", title="rate limit", content="50/s", on_exists="replace", ttl_days=2)
        read = await call("read_mem", identifier="rate limit", format="json")
        assert 1.9 < days_left(str(read["expires_at"])) <= 2
        await call("edit_mem", id="rate limit", expires_at="never")
        read = await call("read_mem", identifier="rate limit", format="json")
        assert read["expires_at"] is None
        await call("edit_mem", id="rate limit", ttl_days=5)
        await call("write_mem", title="pool size", content="20", category="ops")
        archived = await call("edit_mem", id="rate limit", archive=True)
        assert archived["path"] == "archive/ops/rate-limit.md"
        restored = await call("edit_mem", id="rate limit", archive=False)
        assert restored["path"] == "ops/rate-limit.md"
        result = await session.call_tool("edit_mem", {"id": "ops:*", "archive": True})
        moved = structured(result)["moved"]
        assert isinstance(moved, list) and len(moved) == 2
        assert text_of(result).startswith("archived 2 memories of category 'ops'")
        listed = await call("list_mem")
        assert listed["total"] == 0
        back = await call("edit_mem", id="ops:*", archive=False)
        assert sorted(m["path"] for m in back["moved"]) == ["ops/pool-size.md", "ops/rate-limit.md"]
        error = await tool_error(session, "edit_mem", {"id": "ops:*", "append": "x"})
        assert "pass archive=true" in error
        error = await tool_error(session, "edit_mem", {"id": "rate limit", "category": "archive"})
        assert "archive it now with edit_mem(archive=true)" in error
