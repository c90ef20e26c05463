"""No edit is lost: compare before replace, versions, what is the person's (mode, owner, hard
links, a hand-made note's id), titles kept unique, and copies that keep their update times.

An editor's save that lands while memvault is between its read and its rename is made by a hook
on the first fsync of memvault's temp file: the one moment the race can strike.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from memvault.cli import main
from memvault.config import Settings
from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.errors import Conflict, Duplicate, Invalid
from memvault.service.vault import VaultService

from .conftest import write_file
from .mcp_helpers import stdio_session, structured, text_of

REAL_FSYNC = os.fsync


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def during_write(monkeypatch: pytest.MonkeyPatch, edit: Callable[[], None]) -> None:
    """Run `edit` (a person's editor saving) once, while memvault writes its temp file."""
    done: list[bool] = []

    def fsync(fd: int) -> None:
        if not done:
            done.append(True)
            edit()
        REAL_FSYNC(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def editor_append(path: Path, line: str) -> Callable[[], None]:
    """An editor that saves the file with a line added at the end (atomically)."""

    def save() -> None:
        temp = path.with_name("editor.tmp")
        temp.write_text(path.read_text(encoding="utf-8") + line, encoding="utf-8")
        os.replace(temp, path)

    return save


def test_an_append_made_while_an_editor_saves_keeps_both_lines(
    vault: VaultService, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = vault.create(Draft("Shared note", "first\n"))
    during_write(monkeypatch, editor_append(vault_dir / memory.path, "from the editor\n"))
    vault.update(memory.id, Revision(edit=BodyEdit(append="from memvault")))
    text = (vault_dir / memory.path).read_text(encoding="utf-8")
    assert "from the editor" in text and "from memvault" in text
    assert vault.get(memory.id).version == vault.list_memories()[0][0].version


def test_a_find_replace_is_applied_again_to_the_editors_version(
    vault: VaultService, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = vault.create(Draft("Retries", "retries: 3\n"))
    during_write(monkeypatch, editor_append(vault_dir / memory.path, "owner: ops\n"))
    vault.update(memory.id, Revision(edit=BodyEdit(find="retries: 3", replace="retries: 5")))
    body = vault.get(memory.id).body
    assert "retries: 5" in body and "owner: ops" in body and "retries: 3" not in body


def test_a_guarded_edit_fails_when_an_editor_saves_meanwhile(
    vault: VaultService, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = vault.create(Draft("Guarded", "v1\n"))
    during_write(monkeypatch, editor_append(vault_dir / memory.path, "by hand\n"))
    with pytest.raises(Conflict, match="changed since version"):
        vault.update(
            memory.id,
            Revision(edit=BodyEdit(content="v2\n")),
            WriteOptions(expected_version=memory.version),
        )
    assert "by hand" in (vault_dir / memory.path).read_text(encoding="utf-8")


def test_expected_version_refuses_an_edit_made_in_the_same_second(
    vault: VaultService, vault_dir: Path
) -> None:
    memory = vault.create(Draft("Same second", "one\n"))
    seen = vault.get(memory.id)
    note = vault_dir / memory.path
    note.write_text(note.read_text(encoding="utf-8") + "two\n", encoding="utf-8")
    with pytest.raises(Conflict, match=seen.version):
        vault.update(
            memory.id,
            Revision(edit=BodyEdit(content="three\n")),
            WriteOptions(expected_version=seen.version),
        )
    assert "two" in note.read_text(encoding="utf-8")
    fresh = vault.get(memory.id)
    edited = vault.update(
        memory.id,
        Revision(edit=BodyEdit(append="four")),
        WriteOptions(expected_version=fresh.version),
    )
    assert edited.version not in ("", fresh.version)


def test_versions_match_across_read_search_and_list(vault: VaultService) -> None:
    memory = vault.create(Draft("Payment retries", "We retry payments three times."))
    hit = vault.search("payment retries").results[0]
    row = vault.list_memories()[0][0]
    assert len(memory.version) == 12
    assert memory.version == hit.version == row.version == vault.get(memory.id).version


def test_a_half_written_file_is_never_the_base_of_an_edit(
    vault: VaultService, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor writing in place holds the note open and has written half of it when memvault
    reads it; it writes the rest and closes the file while memvault waits for it."""
    memory = vault.create(Draft("In place", "start\n"))
    note = vault_dir / memory.path
    lines = "".join(f"line {n}\n" for n in range(200))
    whole = note.read_text(encoding="utf-8") + lines
    editor = open(note, "w", encoding="utf-8")  # noqa: SIM115 - held open across the edit
    editor.write(whole[: len(whole) // 2])
    editor.flush()

    def finish_the_write(_seconds: float) -> None:
        if not editor.closed:
            editor.write(whole[len(whole) // 2 :])
            editor.close()

    monkeypatch.setattr("memvault.storage.files.time.sleep", finish_the_write)
    vault.update(memory.id, Revision(edit=BodyEdit(append="from memvault")))
    # The body whole; the frontmatter's updated_at moves when the edit falls in a later second.
    assert note.read_text(encoding="utf-8").endswith("start\n" + lines + "\nfrom memvault\n")


def test_an_edit_keeps_the_files_mode_and_owner(vault: VaultService, vault_dir: Path) -> None:
    memory = vault.create(Draft("Private", "secret plan\n"))
    note = vault_dir / memory.path
    note.chmod(0o600)
    owner = (4321, 4321) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    if os.geteuid() == 0:
        os.chown(note, *owner)
    vault.update(memory.id, Revision(edit=BodyEdit(append="more")))
    after = note.stat()
    assert stat.S_IMODE(after.st_mode) == 0o600
    assert (after.st_uid, after.st_gid) == owner


def test_a_hard_linked_note_is_refused_not_split(vault: VaultService, vault_dir: Path) -> None:
    memory = vault.create(Draft("Linked twice", "body\n"))
    note = vault_dir / memory.path
    twin = vault_dir.parent / "twin.md"
    os.link(note, twin)
    with pytest.raises(Invalid, match="2 hard links"):
        vault.update(memory.id, Revision(edit=BodyEdit(append="more")))
    assert os.path.samefile(note, twin) and "more" not in note.read_text(encoding="utf-8")


def test_a_copy_a_killed_writer_kept_aside_does_not_block_the_next_edit(
    vault: VaultService, vault_dir: Path
) -> None:
    """A write keeps the note it replaces as a hard link until it is done; one a SIGKILL left
    behind is memvault's own, so it is not taken for the person's hard link."""
    memory = vault.create(Draft("Kept aside", "body\n"))
    note = vault_dir / memory.path
    os.link(note, note.with_name(f".{note.name}.0badc0de.memvault-tmp"))
    vault.update(memory.id, Revision(edit=BodyEdit(append="more")))
    assert [p.name for p in vault_dir.iterdir() if p.is_file()] == [note.name]
    assert "more" in note.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("text", "edits"),
    [
        ("# Hand made\nbody\n", ["append", "rename"]),
        ("---\nstatus: draft\n---\nbody\n", ["append", "rename"]),
        ("# Hand made\nbody\n", ["rename"]),
        ("# Hand made\nbody\n", ["move", "append"]),
    ],
)
def test_a_hand_made_note_keeps_its_id(
    vault: VaultService, vault_dir: Path, text: str, edits: list[str]
) -> None:
    write_file(vault_dir, "notes/hand.md", text)
    vault.upkeep.sync()
    first = vault.get("notes/hand.md").id
    for edit in edits:
        if edit == "append":
            vault.update(first, Revision(edit=BodyEdit(append="more")))
        elif edit == "rename":
            vault.update(first, Revision(title="Renamed by memvault"))
        else:
            vault.update(first, Revision(category="elsewhere"))
    assert vault.get(first).id == first
    assert [row.id for row in vault.list_memories()[0]] == [first]


def test_edit_refuses_a_title_another_memory_has(vault: VaultService) -> None:
    vault.create(Draft("Deploy order", "db first"))
    other = vault.create(Draft("Deploy steps", "then the app"))
    with pytest.raises(Duplicate, match="Deploy order"):
        vault.update(other.id, Revision(title="deploy order"))
    assert vault.get(other.id).title == "Deploy steps"
    kept = vault.update(
        other.id, Revision(title="Deploy order"), WriteOptions(allow_duplicate=True)
    )
    assert kept.title == "Deploy order" and kept.path != "deploy-order.md"


@pytest.fixture
def old_vault(tmp_path: Path) -> Iterator[Path]:
    """A vault whose notes were written long ago (frontmatter and mtime), with its index."""
    folder = tmp_path / "old"
    old = "2020-01-02T03:04:05Z"
    write_file(folder, "a.md", f"---\ntitle: Old A\nupdated_at: {old}\n---\nalpha\n")
    write_file(folder, "b.md", "# Old B\nbeta\n")
    for note in ("a.md", "b.md"):
        os.utime(folder / note, (1577934245, 1577934245))
    service = VaultService.open(Settings(vault=folder))
    service.close()
    yield folder


@pytest.mark.parametrize("reindex", [False, True])
def test_a_copied_vault_keeps_its_update_times(
    old_vault: Path, tmp_path: Path, reindex: bool
) -> None:
    """`cp -r` gives every file a new mtime: memories whose content did not change keep their
    time in reads, lists and searches, also after a reindex."""
    copy = tmp_path / "copy"
    shutil.copytree(old_vault, copy, copy_function=shutil.copy)
    service = VaultService.open(Settings(vault=copy))
    try:
        if reindex:
            service.upkeep.rebuild()
        times = {row.path: row.updated_at for row in service.list_memories()[0]}
        assert times == {"a.md": "2020-01-02T03:04:05Z", "b.md": "2020-01-02T03:04:05Z"}
        assert service.get("a.md").updated_at == service.get("b.md").updated_at == times["a.md"]
        assert service.search("alpha").results[0].updated_at == times["a.md"]
        (copy / "b.md").write_text("# Old B\nbeta, edited by hand\n", encoding="utf-8")
        service.upkeep.sync()
        assert service.get("b.md").updated_at != times["b.md"]
    finally:
        service.close()


def test_cli_edit_with_a_stale_version_is_one_clear_line(vault_dir: Path) -> None:
    runner = CliRunner()
    base = ["--vault", str(vault_dir)]
    made = runner.invoke(main, [*base, "write", "--title", "Cli note", "--json", "hello"])
    assert made.exit_code == 0, made.output
    read = runner.invoke(main, [*base, "read", "Cli note", "--format", "json"])
    version = read.output.split('"version": "')[1][:12]
    ok = runner.invoke(
        main, [*base, "edit", "Cli note", "--append", "x", "--expected-version", version]
    )
    assert ok.exit_code == 0, ok.output
    stale = runner.invoke(
        main, [*base, "edit", "Cli note", "--append", "y", "--expected-version", version]
    )
    assert stale.exit_code == 1
    assert stale.output.startswith("error: ") and "changed since version" in stale.output


@pytest.mark.processes
@pytest.mark.anyio
async def test_edit_mem_refuses_a_stale_version_over_mcp(vault_dir: Path) -> None:
    async with stdio_session(vault_dir) as session:
        written = structured(
            await session.call_tool("write_mem", {"title": "Mcp note", "content": "one"})
        )
        read = await session.call_tool("read_mem", {"identifier": "Mcp note"})
        assert f"version: {written['version']}" in text_of(read)
        edited = structured(
            await session.call_tool(
                "edit_mem",
                {"id": "Mcp note", "append": "two", "expected_version": written["version"]},
            )
        )
        assert edited["version"] != written["version"]
        stale = await session.call_tool(
            "edit_mem",
            {"id": "Mcp note", "append": "three", "expected_version": written["version"]},
        )
        assert stale.is_error and "changed since version" in text_of(stale)
