"""Links keep the words a reader sees: a rename points them at the new file name (the form
Obsidian resolves) with the old words as display text, a delete leaves the words, and the
links memvault writes resolve by file name in Obsidian too."""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision
from memvault.service.vault import VaultService

from .conftest import write_file
from .mcp_helpers import stdio_session, structured


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.processes
@pytest.mark.anyio
async def test_a_rename_then_a_delete_keep_the_sentence_s_words(vault_dir: Path) -> None:
    """The issue's calls: a link by title survives the target's rename and then its delete."""
    async with stdio_session(vault_dir) as session:
        pool = structured(
            await session.call_tool(
                "write_mem",
                {"title": "Postgres connection pool exhausted", "content": "Raise max_conn."},
            )
        )
        note = structured(
            await session.call_tool(
                "write_mem",
                {
                    "title": "Outage review",
                    "content": "See [[Postgres connection pool exhausted]].",
                },
            )
        )
        await session.call_tool(
            "edit_mem", {"id": pool["id"], "title": "Postgres too many connections"}
        )
        renamed = (vault_dir / note["path"]).read_text()
        assert (
            "See [[postgres-too-many-connections|Postgres connection pool exhausted]]." in renamed
        )
        await session.call_tool("delete_mem", {"id": pool["id"]})
        assert "See Postgres connection pool exhausted.\n" in (vault_dir / note["path"]).read_text()


def test_a_link_naming_the_file_follows_it_as_obsidian_does(
    vault: VaultService, vault_dir: Path
) -> None:
    vault.create(Draft("Old name", "x"))
    write_file(
        vault_dir,
        "hand.md",
        "By name [[old-name]], by title [[Old name#Part]], embedded ![[Old name]].\n"
        "| cell | [[Old name]] |\n|---|---|\n",
    )
    vault.upkeep.rebuild()
    vault.update("old-name", Revision(title="New name"))
    assert (vault_dir / "hand.md").read_text() == (
        "By name [[new-name]], by title [[new-name#Part|Old name]], embedded ![[new-name]].\n"
        "| cell | [[new-name\\|Old name]] |\n|---|---|\n"
    )


def test_a_title_change_that_keeps_the_file_name_keeps_links_by_title(
    vault: VaultService, vault_dir: Path
) -> None:
    """`Redis cache` -> `Redis cache!` keeps the file redis-cache.md; a link by the old title
    resolves nowhere unless it is rewritten."""
    vault.create(Draft("Redis cache", "cache"))
    write_file(vault_dir, "hand.md", "We use [[Redis cache]] here.\n")
    vault.upkeep.rebuild()
    vault.update("Redis cache", Revision(title="Redis cache!"))
    assert (vault_dir / "hand.md").read_text() == "We use [[redis-cache|Redis cache]] here.\n"
    assert vault.upkeep.check().broken_links == []


def test_related_items_show_the_current_title(vault: VaultService) -> None:
    a = vault.create(Draft("Alpha", "a"))
    b = vault.create(Draft("Beta", "b"))
    vault.link(a.id, b.id)
    vault.update(b.id, Revision(title="Beta two"))
    assert vault.get(a.id).body == "a\n\n## Related\n- [[beta-two|Beta two]]\n"
    vault.update(b.id, Revision(title="Beta Two"))
    assert vault.get(a.id).body == "a\n\n## Related\n- [[beta-two|Beta Two]]\n"
    vault.link(a.id, vault.create(Draft("Gamma", "g")).id, "the third")
    vault.update("Gamma", Revision(title="Gamma ray"))
    assert vault.get(a.id).body.endswith("- [[gamma-ray|the third]]\n")


def test_links_memvault_writes_name_a_path_where_the_file_name_is_not_unique(
    vault: VaultService, vault_dir: Path
) -> None:
    """Obsidian resolves `[[topic]]` by file name alone: with two topic.md it needs the path."""
    write_file(vault_dir, "a/topic.md", "# Topic\nfirst\n")
    write_file(vault_dir, "b/topic.md", "# Topic\nsecond\n")
    vault.upkeep.rebuild()
    source = vault.create(Draft("Source", "s"))
    change = vault.link(source.id, "b/topic.md")
    assert change.markdown == "[[b/topic|Topic]]"
    assert [row.target for row in change.source_links] == ["b/topic.md"]


def test_append_starts_a_new_paragraph(vault: VaultService) -> None:
    memory = vault.create(Draft("Notes", "first paragraph"))
    vault.update(memory.id, Revision(edit=BodyEdit(append="second paragraph")))
    assert vault.get(memory.id).body == "first paragraph\n\nsecond paragraph\n"
    vault.link(memory.id, vault.create(Draft("Other", "o")).id)
    vault.update(memory.id, Revision(edit=BodyEdit(append="third")))
    assert vault.get(memory.id).body == (
        "first paragraph\n\nsecond paragraph\n\nthird\n\n## Related\n- [[other|Other]]\n"
    )


def test_a_section_bringing_its_own_related_list_makes_no_second_one(
    vault: VaultService,
) -> None:
    memory = vault.create(Draft("Notes", "## Plan\nold plan\n"))
    vault.link(memory.id, vault.create(Draft("Other", "o")).id)
    vault.create(Draft("Third", "t"))
    section = ("Plan", "new plan\n\n## Related\n- [[other|Other]]\n- [[third|Third]]\n")
    vault.update(memory.id, Revision(edit=BodyEdit(section=section)))
    assert vault.get(memory.id).body == (
        "## Plan\nnew plan\n\n## Related\n- [[other|Other]]\n- [[third|Third]]\n"
    )


def test_a_move_next_to_a_namesake_points_links_at_the_path(
    vault: VaultService, vault_dir: Path
) -> None:
    """`[[topic]]` in b/ meant b/topic.md; moved to c/, it would fall to a/topic.md."""
    write_file(vault_dir, "a/topic.md", "---\ntitle: Topic A\n---\nfirst\n")
    write_file(vault_dir, "b/topic.md", "---\ntitle: Topic B\n---\nsecond\n")
    write_file(vault_dir, "b/source.md", "See [[topic]].\n")
    vault.upkeep.rebuild()
    vault.update("b/topic.md", Revision(category="c"))
    assert (vault_dir / "b/source.md").read_text() == "See [[c/topic]].\n"
    assert [row.target for row in vault.outgoing(vault.get("b/source.md"))] == ["c/topic.md"]
