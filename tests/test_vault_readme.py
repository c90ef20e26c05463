"""memvault's own README.md describes the default vault: it is not a memory, and memvault never
writes a memory over a top-level README.md. A person's README.md at the top of their vault is a
note like any other (Obsidian's help vault has one). Personal memories in the repository's
default vault stay out of git."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from memvault.core.drafts import Draft
from memvault.service.vault import VaultService

from .conftest import write_file
from .mcp_helpers import stdio_session, structured

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.processes
@pytest.mark.anyio
async def test_memvaults_own_readme_is_not_a_memory(vault_dir: Path) -> None:
    own = (REPO / "memories" / "README.md").read_text(encoding="utf-8")
    write_file(vault_dir, "README.md", own + "\nEach memory is a markdown file.\n")
    write_file(vault_dir, "notes/readme.md", "# A note named readme\nkept as a memory\n")
    async with stdio_session(vault_dir) as session:
        await session.call_tool("write_mem", {"title": "Deploy order", "content": "db first"})
        briefing = structured(await session.call_tool("get_context", {}))
        recent = await session.read_resource("memvault://recent")
        listed = structured(await session.call_tool("list_mem", {}))
        found = structured(await session.call_tool("search_mem", {"query": "markdown file"}))
    assert "About this vault" not in briefing["briefing"]
    assert "About this vault" not in recent.contents[0].text  # type: ignore[union-attr]
    assert sorted(item["path"] for item in listed["items"]) == [
        "deploy-order.md",
        "notes/readme.md",
    ]
    assert found["total"] == 0


def test_a_persons_readme_at_the_top_of_the_vault_is_a_note(
    vault: VaultService, vault_dir: Path
) -> None:
    """Before, every vault's top-level README.md was taken for memvault's own and left out:
    6,279 of Obsidian's help vault's 6,280 notes were indexed."""
    write_file(vault_dir, "README.md", "# Start here\n\nThe map of this vault: [[deploy-order]].\n")
    write_file(
        vault_dir, "old/README.md", "# About this vault\n\nThis folder is memvault's default vault"
    )
    vault.upkeep.sync()
    assert {row.path for row in vault.list_memories()[0]} == {"README.md", "old/README.md"}
    assert [hit.path for hit in vault.search("map").results] == ["README.md"]
    old_default = "# About this vault\n\nThis folder is memvault's default vault: each memory.\n"
    write_file(vault_dir, "README.md", old_default)
    vault.upkeep.sync()
    assert {row.path for row in vault.list_memories()[0]} == {"old/README.md"}


def test_a_memory_titled_readme_is_never_written_over_the_vault_readme(
    vault: VaultService, vault_dir: Path
) -> None:
    write_file(vault_dir, "README.md", "# About this vault\n")
    memory = vault.create(Draft("README", "a memory about readmes"))
    assert memory.path == "readme-2.md"
    assert (vault_dir / "README.md").read_text() == "# About this vault\n"
    assert vault.get(memory.id).body == "a memory about readmes\n"


@pytest.mark.processes
@pytest.mark.skipif(
    shutil.which("git") is None or not (REPO / ".git").exists(), reason="needs a git checkout"
)
def test_memories_in_the_default_vault_are_ignored_by_git() -> None:
    def ignored(path: str) -> bool:
        check = ["git", "-C", str(REPO), "check-ignore", "-q", "--no-index", path]
        return subprocess.run(check, check=False).returncode == 0

    assert ignored("memories/decision/payment-retries.md")
    assert ignored("memories/a-note.md")
    assert ignored("memories/.memvault/index.sqlite3")
    assert not ignored("memories/README.md")
