"""Attribution of every change memvault makes to a file for a caller: verify, link, unlink,
session notes, a delete's link removals, a rename's rewritten links, a merge, and the web
page's writes each record who made them as `updated_by`; upkeep (archive on expiry) leaves it
as it was. Through the MCP SDK client, the CLI, the web page's API and the service API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.service.vault import VaultService

from .mcp_helpers import http_server, stdio_session, structured
from .test_cli import run
from .test_web_api import TOKEN, signed_in

pytestmark = pytest.mark.anyio

# The memories each test starts from, all written by "setup".
TITLES = ("Verified", "Linked a", "Linked b", "Unlinked a", "Unlinked b", "Keeper", "Doomed")


def seeded(vault_dir: Path) -> dict[str, str]:
    """A vault holding TITLES by "setup", Unlinked a and b linked, Keeper linking to Doomed;
    each title's id."""
    vault = VaultService.open(Settings(vault=vault_dir))
    try:
        ids = {
            t: vault.create(Draft(t, f"About {t.lower()}."), WriteOptions(agent="setup")).id
            for t in TITLES
        }
        vault.link(ids["Unlinked a"], ids["Unlinked b"])
        vault.link(ids["Keeper"], ids["Doomed"])
        return ids
    finally:
        vault.close()


def writers(vault_dir: Path, ids: dict[str, str]) -> dict[str, tuple[object, object]]:
    """Each remaining memory's (created_by, updated_by), by title, read from its file."""
    vault = VaultService.open(Settings(vault=vault_dir))
    try:
        found = {}
        for title, memory_id in ids.items():
            if vault.has_id(memory_id):
                meta = vault.get(memory_id).metadata
                found[title] = (meta.get("created_by"), meta.get("updated_by"))
        return found
    finally:
        vault.close()


def changed_by(who: str) -> dict[str, tuple[object, object]]:
    """What `writers` reads once `who` verified, linked, unlinked and deleted Doomed."""
    return {title: ("setup", who) for title in TITLES if title != "Doomed"}


@pytest.mark.processes
async def test_every_tool_that_changes_a_file_records_the_client(vault_dir: Path) -> None:
    ids = seeded(vault_dir)
    async with stdio_session(vault_dir, "assistant-b") as session:
        await session.call_tool("verify_mem", {"id": ids["Verified"]})
        structured(
            await session.call_tool(
                "link_mem", {"source_id": ids["Linked a"], "target_id": ids["Linked b"]}
            )
        )
        structured(
            await session.call_tool(
                "unlink_mem", {"source_id": ids["Unlinked a"], "target_id": ids["Unlinked b"]}
            )
        )
        structured(await session.call_tool("delete_mem", {"id": ids["Doomed"]}))
        notes = structured(
            await session.call_tool("save_session_notes", {"summary": "Checked [[Verified]]."})
        )
    assert writers(vault_dir, ids) == changed_by("assistant-b")
    session_note = writers(vault_dir, {"notes": notes["id"]})
    assert session_note == {"notes": ("assistant-b", "assistant-b")}


def test_every_command_that_changes_a_file_records_the_agent(vault_dir: Path) -> None:
    ids = seeded(vault_dir)
    for args in (
        ("verify", ids["Verified"]),
        ("link", ids["Linked a"], ids["Linked b"]),
        ("unlink", ids["Unlinked a"], ids["Unlinked b"]),
        ("rm", "--yes", ids["Doomed"]),
    ):
        code, out, err = run(vault_dir, "--agent", "ana", *args)
        assert code == 0, err
    code, out, err = run(
        vault_dir, "--agent", "ana", "session-notes", "--summary", "See [[Keeper]].", "--json"
    )
    assert code == 0, err
    assert writers(vault_dir, ids) == changed_by("ana")
    assert writers(vault_dir, {"notes": json.loads(out)["id"]}) == {"notes": ("ana", "ana")}


@pytest.mark.processes
def test_the_web_page_s_writes_record_web_or_the_person_a_proxy_names(vault_dir: Path) -> None:
    ids = seeded(vault_dir)
    with (
        http_server(vault_dir, "--token", TOKEN) as (url, _process),
        signed_in(url.removesuffix("/mcp")) as client,
    ):
        page = {"Origin": str(client.base_url).rstrip("/"), "X-Memvault": "1"}

        def post(path: str, data: dict[str, str], **headers: str) -> None:
            """One write as the page sends it."""
            answer = client.post(path, json=data, headers={**page, **headers})
            assert answer.status_code == 200 and "conflict" not in answer.json(), answer.text

        post("/api/verify", {"id": ids["Verified"]})
        post("/api/link", {"source": ids["Linked a"], "target": ids["Linked b"]})
        post("/api/unlink", {"source": ids["Unlinked a"], "target": ids["Unlinked b"]})
        post("/api/delete", {"id": ids["Doomed"]})
        assert writers(vault_dir, ids) == changed_by("web")
        memory = client.get("/api/memory", params={"id": ids["Keeper"]}).json()["memory"]
        post(
            "/api/save",
            {"id": ids["Keeper"], "version": memory["version"], "content": "Kept."},
            **{"X-Memvault-Agent": "ana"},
        )
        post("/api/archive", {"id": ids["Verified"]}, **{"X-Memvault-Agent": "ana"})
        post("/api/merge", {"keep": ids["Linked a"], "other": ids["Linked b"]})
    found = writers(vault_dir, ids)
    assert (found["Keeper"], found["Verified"]) == (("setup", "ana"), ("setup", "ana"))
    assert found["Linked a"] == ("setup", "web") and "Linked b" not in found


def test_a_rename_records_its_caller_in_the_files_whose_links_follow(
    vault: VaultService,
) -> None:
    target = vault.create(Draft("Old name", "The target."), WriteOptions(agent="setup"))
    source = vault.create(Draft("Source", "See [[old-name]]."), WriteOptions(agent="setup"))
    vault.update(target.id, Revision(title="New name"), WriteOptions(agent="renamer"))
    moved = vault.get(source.id)
    assert moved.body == "See [[new-name]].\n"
    assert moved.metadata["updated_by"] == "renamer"


def test_upkeep_s_archive_on_expiry_leaves_updated_by_as_it_was(vault: VaultService) -> None:
    memory = vault.create(
        Draft("Short-lived", "True until 2020.", expires_at="2020-01-02"), WriteOptions(agent="bot")
    )
    assert vault.upkeep.maintain().archived == [f"archive/{memory.path}"]
    archived = vault.get(memory.id)
    assert archived.category == "archive"
    assert (archived.metadata["created_by"], archived.metadata["updated_by"]) == ("bot", "bot")
