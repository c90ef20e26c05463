"""A full disk: every write that fails leaves the vault and the index as they were, and says
"disk full" in one line.

A write fails where the disk is full: at a rename over a file (os.replace raising ENOSPC, once;
the next calls pass, as when a delete elsewhere frees space), or for real on a small tmpfs
(root only: skipped where it cannot be mounted).
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision
from memvault.errors import Unwritable
from memvault.service.vault import VaultService

from .conftest import write_file

REAL_REPLACE = os.replace
Operation = Callable[[VaultService], object]

OPERATIONS: dict[str, tuple[int, Operation]] = {
    # name: (renames over a file that pass before the one that fails, the call)
    "write": (0, lambda v: v.create(Draft("Brand new", "fresh content here"))),
    "edit": (0, lambda v: v.update("Alpha", Revision(edit=BodyEdit(append="more")))),
    "delete": (0, lambda v: v.delete("Beta")),
    "link": (1, lambda v: v.link("Gamma", "Beta")),
    "rename": (2, lambda v: v.update("Beta", Revision(title="Beta renamed"))),
}


def full_disk_at(monkeypatch: pytest.MonkeyPatch, passing: int) -> None:
    """The disk is full for one rename over a file, after `passing` others went through."""
    calls = [0]

    def replace(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
        calls[0] += 1
        if calls[0] == passing + 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        REAL_REPLACE(source, target)

    monkeypatch.setattr(os, "replace", replace)


def linked_vault(vault: VaultService) -> None:
    """Alpha links to Beta in its text (a rename of Beta rewrites Alpha); Gamma stands alone."""
    vault.create(Draft("Beta", "the second memory, target of a link"))
    vault.create(Draft("Alpha", "the first memory, see [[beta]]"))
    vault.create(Draft("Gamma", "the third memory, alone"))


def state(vault: VaultService) -> tuple[dict[str, bytes], list[tuple[str, str, str]]]:
    """Every file in the vault (state folder aside) and every index row (path, id, version)."""
    files = {
        p.relative_to(vault.root).as_posix(): p.read_bytes()
        for p in sorted(vault.root.rglob("*"))
        if p.is_file() and ".memvault" not in p.parts
    }
    rows, _total = vault.list_memories(sort="title")
    return files, [(r.path, r.id, r.version) for r in rows]


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_a_failed_write_changes_nothing_and_says_disk_full(
    vault: VaultService, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    linked_vault(vault)
    before = state(vault)
    passing, operation = OPERATIONS[name]
    full_disk_at(monkeypatch, passing)
    with pytest.raises(Unwritable, match=r"^disk full"):
        operation(vault)
    monkeypatch.undo()
    assert state(vault) == before
    assert vault.upkeep.check().clean
    vault.upkeep.sync()
    assert state(vault) == before


def test_without_hard_links_a_failed_change_is_undone_from_the_old_text(
    vault: VaultService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a file system without hard links (FAT, some network shares) writes work, and a
    change that fails halfway is undone by writing the old text back."""
    linked_vault(vault)
    before = state(vault)

    def no_links(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "link", no_links)
    vault.update("Gamma", Revision(edit=BodyEdit(append="written without a hard link")))
    assert "written without a hard link" in vault.get("Gamma").body
    edited = state(vault)
    passing, operation = OPERATIONS["link"]
    full_disk_at(monkeypatch, passing)
    with pytest.raises(Unwritable, match=r"^disk full"):
        operation(vault)
    monkeypatch.undo()
    assert state(vault) == edited != before


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs (needs root and the right to mount)."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def fill(folder: Path) -> None:
    """Write a file until the disk refuses another byte."""
    with open(folder / "filler.bin", "wb", buffering=0) as handle:
        for size in (65536, 4096, 1):
            try:
                while True:
                    handle.write(b"\0" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC


# On a real disk, a delete of a note nothing links to needs no new file: it fails in the index.
ON_A_REAL_DISK = {**OPERATIONS, "delete alone": (0, lambda v: v.delete("Gamma"))}


@pytest.mark.processes
@pytest.mark.parametrize("name", list(ON_A_REAL_DISK))
def test_on_a_really_full_disk_files_and_index_stay_in_step(small_disk: Path, name: str) -> None:
    vault_dir = small_disk / "vault"
    vault = VaultService.open(Settings(vault=vault_dir))
    try:
        linked_vault(vault)
        write_file(vault_dir, "Gamma-notes.md", "x" * 20_000)
        vault.upkeep.sync()
        before = state(vault)
        fill(small_disk)
        _passing, operation = ON_A_REAL_DISK[name]
        try:
            operation(vault)
        except Unwritable as exc:
            assert str(exc).startswith("disk full"), exc
            assert state(vault) == before
        files, rows = state(vault)
        on_disk = {path for path in files if path.endswith(".md")}
        assert on_disk == {path for path, _id, _version in rows}
    finally:
        vault.close()
