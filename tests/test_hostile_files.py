"""A vault of bad files next to good ones: no file can stop the vault.

One fixture vault holds every kind of file a careless person or an attacker leaves in a vault
(symlink loops, impossible dates, YAML alias bombs, bytes that are not UTF-8 text, ...) next to
good notes. Every good note still searches, reads and lists; `reindex`, `sync` and `check` name
each bad file with its reason; and nothing raises.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from mcp import ClientSession, StdioServerParameters, stdio_client

from memvault.cli import main
from memvault.config import STATE_DIR, Settings
from memvault.core.document import parse_document
from memvault.core.drafts import Draft, Revision
from memvault.core.memory import Limits
from memvault.core.records import Skipped
from memvault.errors import Invalid, NotFound, TooLarge, Unreadable
from memvault.features.export_import import import_records, load
from memvault.features.watch import VaultWatcher
from memvault.index.sync import file_rows
from memvault.service.vault import VaultService
from memvault.storage.files import VaultStore

from .conftest import patience, write_file
from .mcp_helpers import MEMVAULT, server_env, stdio_session, structured, text_of
from .test_sync import eventually

ALIAS_BOMB = (
    "---\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
    "---\n"
    "bomb body\n"
)
OUT_OF_RANGE_DATES = (
    "---\ntitle: Far dates\nupdated_at: 9999-12-31T23:59:59-23:59\n"
    "created_at: 0001-01-01 00:00:00+23:00\n---\nfar dates body okapi\n"
)
DUPLICATE = "---\nid: 11111111-2222-4333-8444-555555555555\ntitle: {title}\n---\n{title} tapir\n"

# Good notes: every one must keep working whatever sits next to it (path, word, title).
GOOD = [
    ("notes/alpha.md", "quokka", "Alpha"),
    ("beta.md", "wombat", "Beta"),
    ("crlf.md", "numbat", "Windows lines"),
    ("two-blocks.md", "dingo", "Two blocks"),
    ("x.md/inside.md", "bilby", "Inside a folder named x.md"),
    ("far-dates.md", "okapi", "Far dates"),
    ("nul.md", "quoll", "nul"),
]
# Bad files, and a word of each reason `reindex`, `sync` and `check` must give.
BAD = {
    "loop-a.md": "symlink loop",
    "loop-b.md": "symlink loop",
    "invalid-utf8.md": "not UTF-8",
    "utf16.md": "not UTF-8",
    "binary.md": "not UTF-8",
    "dangling.md": "No such file",
    "bomb.md": "alias",
    "pipe.md": "named pipe",
}


def hostile_vault(root: Path) -> None:
    """Good notes, and next to them every kind of bad file (see GOOD and BAD)."""
    write_file(root, "notes/alpha.md", "---\ntitle: Alpha\ntags: [a]\n---\nquokka facts\n")
    write_file(root, "beta.md", "# Beta\nwombat facts\n")
    (root / "crlf.md").write_bytes(b"---\r\ntitle: Windows lines\r\n---\r\nnumbat\r\n")
    write_file(root, "two-blocks.md", "---\ntitle: Two blocks\n---\n---\nx: 1\n---\ndingo\n")
    write_file(root, "x.md/inside.md", "# Inside a folder named x.md\nbilby\n")
    write_file(root, "far-dates.md", OUT_OF_RANGE_DATES)
    (root / "nul.md").write_bytes(b"quoll \x00 with a NUL byte\n")
    os.symlink("loop-b.md", root / "loop-a.md")
    os.symlink("loop-a.md", root / "loop-b.md")
    (root / "invalid-utf8.md").write_bytes(b"# Broken\n\xff\xfe\xfa not text\n")
    (root / "utf16.md").write_bytes("# Sixteen\nutf sixteen\n".encode("utf-16"))
    (root / "binary.md").write_bytes(bytes(range(256)) * 4)
    os.symlink("missing.md", root / "dangling.md")
    write_file(root, "bomb.md", ALIAS_BOMB)
    write_file(root, "dup-one.md", DUPLICATE.format(title="Dup one"))
    write_file(root, "dup-two.md", DUPLICATE.format(title="Dup two"))
    os.symlink("notes/alpha.md", root / "alias-of-alpha.md")
    write_file(root, ".trash/old.md", "# Trashed\nquokka in the trash\n")
    write_file(root, ".obsidian/plugins/p/readme.md", "# Plugin\nquokka plugin\n")
    os.mkfifo(root / "pipe.md")  # a plain open() of it waits for a writer that never comes


@pytest.fixture
def hostile(vault_dir: Path) -> Path:
    hostile_vault(vault_dir)
    return vault_dir


def run(vault: Path, *args: str, index: Path | None = None) -> tuple[int, str, str]:
    """A CLI command on `vault`, as a person types it; (exit code, stdout, stderr)."""
    options = ["--vault", str(vault)] + (["--index-path", str(index)] if index else [])
    result = CliRunner().invoke(main, [*options, *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def assert_good_notes_work(vault: Path, index: Path | None = None) -> None:
    """Each good note is found by a search, read by its path and listed; the bad ones are not
    memories, and no note appears twice."""
    for path, word, title in GOOD:
        code, out, err = run(vault, "search", word, "--json", index=index)
        assert code == 0, err
        assert [hit["path"] for hit in json.loads(out)["results"]] == [path], word
        code, out, err = run(vault, "read", path, "--format", "json", index=index)
        assert code == 0, err
        assert json.loads(out)["title"] == title
    code, out, err = run(vault, "list", "--json", "--limit", "100", index=index)
    assert code == 0, err
    listed = [row["path"] for row in json.loads(out)["items"]]
    assert sorted(listed) == sorted(
        [p for p, _, _ in GOOD] + ["bomb.md", "dup-one.md", "dup-two.md"]
    )


def assert_reported(out: str, include_malformed: bool = True) -> None:
    """Every bad file is named in `out` with its reason, one line each."""
    for path, reason in BAD.items():
        if path == "bomb.md" and not include_malformed:
            continue
        lines = [line for line in out.splitlines() if path in line]
        assert lines, f"{path} is not reported in:\n{out}"
        assert any(reason in line for line in lines), lines


def test_every_good_note_works_next_to_bad_files(hostile: Path) -> None:
    assert_good_notes_work(hostile)
    code, out, err = run(hostile, "stats", "--json")
    assert code == 0, err
    assert json.loads(out)["memories"] == len(GOOD) + 3


def test_reindex_names_each_bad_file_with_its_reason(hostile: Path) -> None:
    code, out, err = run(hostile, "reindex")
    assert code == 0, err
    assert_reported(out)
    assert "alias-of-alpha.md" not in out and ".trash" not in out
    assert_good_notes_work(hostile)


def test_sync_names_each_bad_file_with_its_reason(hostile: Path) -> None:
    code, out, err = run(hostile, "sync")
    assert code == 0, err
    assert_reported(out)
    code, out, err = run(hostile, "sync")
    assert code == 0, err
    assert_reported(out, include_malformed=False)
    assert_good_notes_work(hostile)


def test_check_names_each_bad_file_with_its_reason(hostile: Path) -> None:
    code, out, err = run(hostile, "check")
    assert code == 1, err
    assert_reported(out)
    assert "duplicate id 11111111-2222-4333-8444-555555555555: dup-one.md, dup-two.md" in out
    assert "alias-of-alpha" not in out
    code, out, err = run(hostile, "check", "--json")
    report = json.loads(out)
    assert sorted(s["path"] for s in report["unreadable"]) == sorted(
        p for p in BAD if p != "bomb.md"
    )


def test_check_fix_gives_a_symlinked_note_no_new_id(vault_dir: Path) -> None:
    """A symlink to a note inside the vault is that note, not a copy with the same id."""
    write_file(vault_dir, "linked.md", "---\nid: 0b3e3b4e-0000-4000-8000-000000000001\n---\nibis\n")
    os.symlink("linked.md", vault_dir / "link-to-linked.md")
    for _ in range(2):
        code, out, _ = run(vault_dir, "check", "--fix")
        assert code == 0 and "new id" not in out and "duplicate" not in out, out
    assert "id: 0b3e3b4e-0000-4000-8000-000000000001" in (vault_dir / "linked.md").read_text()
    _code, out, _ = run(vault_dir, "search", "ibis", "--json")
    assert [hit["path"] for hit in json.loads(out)["results"]] == ["linked.md"]


@pytest.mark.processes
@pytest.mark.anyio
async def test_the_server_starts_and_serves_next_to_bad_files(hostile: Path) -> None:
    """`serve` starts on the hostile vault; search and read_mem (json) answer, the alias bomb
    included (read as malformed, never expanded)."""
    async with stdio_session(hostile) as session:
        found = structured(await session.call_tool("search_mem", {"query": "quokka"}))
        assert [hit["path"] for hit in found["results"]] == ["notes/alpha.md"]
        bomb = await session.call_tool("read_mem", {"identifier": "bomb", "format": "json"})
        assert not bomb.is_error and structured(bomb)["frontmatter"] == {}


@pytest.fixture
def watched(vault_dir: Path) -> Iterator[VaultService]:
    vault = VaultService.open(Settings(vault=vault_dir))
    watcher = VaultWatcher(vault, debounce=0.05)
    watcher.start()
    yield vault
    watcher.stop()
    vault.close()


def test_the_watcher_keeps_indexing_after_bad_files(
    watched: VaultService, vault_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="memvault")
    hostile_vault(vault_dir)
    write_file(vault_dir, "after.md", "# After\nplatypus\n")
    eventually(lambda: [h.path for h in watched.search("platypus").results] == ["after.md"])
    (vault_dir / "loop-c.md").symlink_to("loop-d.md")
    (vault_dir / "loop-d.md").symlink_to("loop-c.md")
    write_file(vault_dir, "later.md", OUT_OF_RANGE_DATES.replace("okapi", "echidna"))
    eventually(lambda: [h.path for h in watched.search("echidna").results] == ["later.md"])
    eventually(lambda: [h.path for h in watched.search("okapi").results] == ["far-dates.md"])

    def reported(name: str, reason: str) -> bool:
        return any(name in r.getMessage() and reason in r.getMessage() for r in caplog.records)

    # loop-c.md dangles until loop-d.md exists, and the watcher may read it before: loop-d.md is
    # the one that is a loop whenever it is read.
    eventually(lambda: reported("loop-d.md", "symlink loop"))
    assert reported("invalid-utf8.md", "not UTF-8")


# -- one kind of bad file each -------------------------------------------------------------


@pytest.mark.processes
@pytest.mark.anyio
async def test_a_named_pipe_made_while_serving_never_holds_up_a_call(vault_dir: Path) -> None:
    """A named pipe `x.md` appearing in a served vault is passed over: the sync that meets it
    and the write after it answer (a plain open of it waited for a writer for good)."""
    write_file(vault_dir, "kept.md", "# Kept\nquokka\n")
    async with stdio_session(vault_dir) as session:
        os.mkfifo(vault_dir / "x.md")
        with anyio.fail_after(patience(30)):
            written = await session.call_tool("write_mem", {"title": "Kiwi", "content": "kiwi"})
            assert not written.is_error, text_of(written)
            found = structured(await session.call_tool("search_mem", {"query": "kiwi"}))
            assert [hit["title"] for hit in found["results"]] == ["Kiwi"]
            listed = structured(await session.call_tool("list_mem", {}))
            assert "x.md" not in [item["path"] for item in listed["items"]]


def outside_the_vault(vault_dir: Path) -> Path:
    """A file out of the vault that a swapped-in symlink points at (as /etc/passwd would)."""
    secret = vault_dir.parent / "outside" / "passwd"
    secret.parent.mkdir()
    secret.write_text("root:x:0:0:wolverine:/root:/bin/sh\n")
    return secret


def test_a_symlink_swapped_in_after_the_walk_is_not_read(vault_dir: Path) -> None:
    """The walk saw a regular note; a symlink out of the vault renamed over it before the read
    is refused when opened, by the store and by a rebuild's worker alike."""
    secret = outside_the_vault(vault_dir)
    write_file(vault_dir, "note.md", "# Note\nquokka\n")
    store = VaultStore(vault_dir)
    [info] = store.walk()
    os.symlink(secret, vault_dir / "swap.md")
    os.replace(vault_dir / "swap.md", vault_dir / "note.md")
    with pytest.raises(Unreadable, match="out of the vault"):
        store.load(info)
    skipped = file_rows((str(vault_dir), info.path, info.size, info.mtime_ns))
    assert isinstance(skipped, Skipped) and "out of the vault" in skipped.reason


def test_rebuilds_never_index_a_symlink_swapped_in_and_out(vault_dir: Path) -> None:
    """An attacker renames a symlink to a file out of the vault over a note, and the note back,
    in a loop while the index is rebuilt: no rebuild ever holds the outside file's text."""
    secret = outside_the_vault(vault_dir)
    note = write_file(vault_dir, "note.md", "# Note\nquokka\n")
    saved = vault_dir / "saved.txt"
    os.link(note, saved)
    done = threading.Event()

    def swap() -> None:
        while not done.is_set():
            os.symlink(secret, vault_dir / "swap.tmp")
            os.replace(vault_dir / "swap.tmp", note)
            os.link(saved, vault_dir / "back.tmp")
            os.replace(vault_dir / "back.tmp", note)

    swapper = threading.Thread(target=swap)
    vault = VaultService.open(Settings(vault=vault_dir))
    swapper.start()
    try:
        for _ in range(20):
            vault.upkeep.rebuild()
            assert vault.search("wolverine").results == []
    finally:
        done.set()
        swapper.join()
        vault.close()


def test_out_of_range_dates_read_as_absent(vault: VaultService, vault_dir: Path) -> None:
    write_file(vault_dir, "far.md", OUT_OF_RANGE_DATES)
    vault.upkeep.sync()
    memory = vault.get("far")
    assert memory.created_at is None
    assert memory.problem is None
    assert [h.path for h in vault.search("okapi").results] == ["far.md"]
    edited = vault.update("far", Revision(edit=None, tags=["kept"]))
    assert "created_at: 0001-01-01 00:00:00+23:00" in (vault_dir / edited.path).read_text()


def test_a_yaml_alias_bomb_is_malformed_never_expanded(
    vault: VaultService, vault_dir: Path
) -> None:
    write_file(vault_dir, "bomb.md", ALIAS_BOMB)
    vault.upkeep.sync()
    memory = vault.get("bomb")
    assert memory.metadata == {}
    assert memory.problem is not None and "alias" in memory.problem
    assert [m.path for m in vault.upkeep.check().malformed] == ["bomb.md"]
    with pytest.raises(Invalid, match="cannot parse"):
        vault.update("bomb", Revision(tags=["x"]))


@given(
    key=st.from_regex(r"[a-z]{1,8}", fullmatch=True),
    anchor=st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True),
    value=st.sampled_from(["1", "text", "[1, 2]", "{a: 1}", "2024-01-15"]),
)
def test_any_yaml_anchor_or_alias_is_refused(key: str, anchor: str, value: str) -> None:
    """Given frontmatter that uses an anchor (and an alias of it), when parsed, then it is
    reported as malformed and nothing is read from it, whatever the value."""
    for frontmatter in (
        f"{key}: &{anchor} {value}\n",
        f"{key}: &{anchor} {value}\nother: *{anchor}\n",
        f"list:\n  - &{anchor} {value}\n  - *{anchor}\n",
    ):
        doc = parse_document(f"---\n{frontmatter}---\nbody\n")
        assert doc.metadata == {} and doc.error is not None and "alias" in doc.error


def test_ampersands_and_stars_in_values_are_not_anchors() -> None:
    doc = parse_document('---\ntitle: "Q&A *important*"\nnote: a & b * c\n---\nbody\n')
    assert doc.error is None
    assert doc.metadata == {"title": "Q&A *important*", "note": "a & b * c"}


def test_deep_categories_are_refused_on_write(vault: VaultService) -> None:
    limits = Limits()
    deepest = "/".join(["d"] * limits.max_category_depth)
    assert vault.create(Draft("Deep enough", "x", category=deepest)).category == deepest
    with pytest.raises(TooLarge, match="levels"):
        vault.create(Draft("Too deep", "x", category="/".join(["d"] * 980)))
    with pytest.raises(TooLarge, match="characters"):
        vault.create(Draft("Too long", "x", category="/".join(["abcdefghij" * 5] * 5)))
    memory = vault.create(Draft("Shallow", "x"))
    with pytest.raises(TooLarge, match="levels"):
        vault.update(memory.id, Revision(category="/".join(["d"] * 9)))


def test_an_archived_deepest_category_is_allowed(vault: VaultService) -> None:
    """The archive mirrors categories one level down: the deepest one still archives."""
    deepest = "/".join(["d"] * Limits().max_category_depth)
    vault.create(Draft("Deep and expired", "x", category=deepest, expires_at="2000-01-01"))
    assert vault.upkeep.archive_expired() == [f"archive/{deepest}/deep-and-expired.md"]


def test_a_hand_made_deep_tree_is_walked_without_recursion(vault_dir: Path) -> None:
    folders = [vault_dir / "d"]
    for _ in range(999):
        folders.append(folders[-1] / "d")
    for folder in folders:
        folder.mkdir()  # os.makedirs (and shutil.rmtree) recurse once a level
    bottom = folders[-1] / "bottom.md"
    bottom.write_text("# Bottom\naardvark\n")
    write_file(vault_dir, "top.md", "# Top\nelephant\n")
    vault = VaultService.open(Settings(vault=vault_dir))
    try:
        assert [h.title for h in vault.search("elephant").results] == ["Top"]
        assert [h.title for h in vault.search("aardvark").results] == ["Bottom"]
        assert vault.upkeep.rebuild().notes == 2
        assert vault.upkeep.sync().skipped == []
    finally:
        vault.close()
        bottom.unlink()
        for folder in reversed(folders):
            folder.rmdir()


def test_an_expired_note_whose_archive_path_is_taken_archives_to_a_free_name(
    vault_dir: Path,
) -> None:
    write_file(vault_dir, "archive/ops/outage.md", "---\ntitle: Old outage\n---\nolder outage\n")
    write_file(
        vault_dir,
        "ops/outage.md",
        "---\ntitle: Outage\nexpires_at: 2001-01-01T00:00:00Z\n---\nnewer outage\n",
    )
    write_file(vault_dir, "ops/status.md", "# Status\nsee [[ops/outage]] and [[outage]]\n")
    for command in (["search", "outage"], ["list"], ["stats"], ["sync"]):
        code, _out, err = run(vault_dir, *command)
        assert code == 0, (command, err)
    code, out, err = run(vault_dir, "check")
    assert "cannot move" not in out + err
    assert (vault_dir / "archive/ops/outage-2.md").read_text().endswith("newer outage\n")
    assert (vault_dir / "archive/ops/outage.md").read_text().endswith("older outage\n")
    assert not (vault_dir / "ops/outage.md").exists()
    status = (vault_dir / "ops/status.md").read_text()
    assert "outage-2" in status and "[[ops/outage]]" not in status


@pytest.mark.processes
def test_an_index_path_that_is_a_folder_is_one_clear_line(vault_dir: Path) -> None:
    write_file(vault_dir, "note.md", "# Note\nnarwhal\n")
    (vault_dir / STATE_DIR / "index.sqlite3").mkdir(parents=True)
    done = subprocess.run(
        [*MEMVAULT, "--vault", str(vault_dir), "search", "narwhal"], capture_output=True, text=True
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "is a folder" in done.stderr, done.stderr


@pytest.mark.processes
def test_an_index_missing_its_notes_table_is_rebuilt_at_start(vault_dir: Path) -> None:
    write_file(vault_dir, "note.md", "# Note\nnarwhal\n")
    assert run(vault_dir, "reindex")[0] == 0
    with closing(sqlite3.connect(vault_dir / STATE_DIR / "index.sqlite3")) as db:
        db.execute("DROP TABLE notes")
    done = subprocess.run(
        [*MEMVAULT, "--vault", str(vault_dir), "search", "narwhal"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.startswith("Note (note, ")
    warnings = [line for line in done.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and "rebuilding" in warnings[0]


@pytest.mark.parametrize(
    ("damage", "warning"),
    [
        ("ALTER TABLE notes DROP COLUMN problem", "the index has another notes; rebuilding it"),
        ("DROP TABLE notes_fts_idx", "the index lacks notes_fts_idx; rebuilding it"),
        ("DROP TABLE usage", "the index lacks usage (kept state); making it again"),
    ],
)
def test_every_schema_object_is_checked_at_start(
    vault_dir: Path, damage: str, warning: str, caplog: pytest.LogCaptureFixture
) -> None:
    write_file(vault_dir, "note.md", "# Note\nnarwhal\n")
    VaultService.open(Settings(vault=vault_dir)).close()
    with closing(sqlite3.connect(vault_dir / STATE_DIR / "index.sqlite3")) as db:
        db.execute(damage)
    with caplog.at_level(logging.WARNING, logger="memvault"):
        vault = VaultService.open(Settings(vault=vault_dir))
    try:
        assert [r.message for r in caplog.records] == [warning]
        assert [h.path for h in vault.search("narwhal").results] == ["note.md"]
    finally:
        vault.close()


def test_unreadable_files_are_skipped_with_their_reason(vault_dir: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads a chmod 000 file anyway")
    write_file(vault_dir, "good.md", "# Good\nibex\n")
    locked = write_file(vault_dir, "locked.md", "# Locked\nsecret\n")
    locked.chmod(0)
    try:
        code, out, _ = run(vault_dir, "reindex")
        assert code == 0 and "locked.md: cannot read: Permission denied" in out
        assert "good.md" in run(vault_dir, "search", "ibex")[1]
    finally:
        locked.chmod(0o644)


def test_thousands_of_files_in_one_folder(vault_dir: Path) -> None:
    """2,500 files (past PARALLEL_FROM, so worker processes parse them): creating 10k files
    alone takes about 7 s on the shared test machine, so the 10k case is left to benchmarks."""
    folder = vault_dir / "many"
    folder.mkdir()
    for n in range(2500):
        (folder / f"note-{n}.md").write_text(f"# Note {n}\nword{n}\n")
    code, out, err = run(vault_dir, "reindex")
    assert code == 0, err
    assert out.startswith("indexed 2,500 notes")
    code, out, _ = run(vault_dir, "search", "word2499", "--json")
    assert [hit["path"] for hit in json.loads(out)["results"]] == ["many/note-2499.md"]


# -- identifiers ---------------------------------------------------------------------------


def test_dotted_identifiers_name_one_memory(vault: VaultService, vault_dir: Path) -> None:
    write_file(vault_dir, "foo.md", "# Foo\nmongoose\n")
    for name in ("./foo", ".//foo", "./././foo.md", "foo"):
        assert vault.get(name).path == "foo.md"
    assert vault.stats().memories == 1
    assert [h.path for h in vault.search("mongoose").results] == ["foo.md"]
    vault.delete("./foo")
    assert not (vault_dir / "foo.md").exists() and vault.stats().memories == 0


@pytest.mark.parametrize("folder", [".trash", ".obsidian", ".hidden/deeper"])
def test_dot_folders_are_never_memories(vault: VaultService, vault_dir: Path, folder: str) -> None:
    hidden = write_file(vault_dir, f"{folder}/old.md", "# Old\nmeerkat\n")
    for name in (f"{folder}/old", f"{folder}/old.md", f"./{folder}/old.md"):
        with pytest.raises(NotFound):
            vault.get(name)
        with pytest.raises(NotFound):
            vault.update(name, Revision(tags=["x"]))
    assert vault.search("meerkat").results == [] and vault.stats().memories == 0
    assert hidden.read_text() == "# Old\nmeerkat\n"


@pytest.mark.parametrize(
    "path", [".trash/evil.md", "ok/.obsidian/evil.md", "a\x00b.md", "../outside.md"]
)
def test_import_refuses_bad_record_paths_before_writing_anything(
    vault: VaultService, vault_dir: Path, path: str
) -> None:
    records = [
        {"id": "aaaaaaaa-0000-4000-8000-000000000001", "title": "Fine", "path": "fine.md"},
        {"id": "aaaaaaaa-0000-4000-8000-000000000002", "title": "Evil", "path": path},
    ]
    with pytest.raises(Invalid, match="record 2"):
        import_records(vault, load("\n".join(json.dumps(r) for r in records)))
    assert sorted(p.name for p in vault_dir.rglob("*.md")) == []


# -- a read-only vault ---------------------------------------------------------------------


@dataclass
class ReadOnlyVault:
    """A vault on read-only media: how to run memvault on it in a fresh process."""

    path: Path
    env: dict[str, str]
    namespace: bool  # as root: each command in its own mount namespace, the vault bound read-only

    def command(self, *args: str) -> list[str]:
        command = [*MEMVAULT, "--vault", str(self.path), *args]
        if not self.namespace:
            return command
        mount = 'mount --bind -o ro "$0" "$0" && exec "$@"'
        return ["unshare", "-m", "sh", "-c", mount, str(self.path), *command]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args), capture_output=True, text=True, env=self.env, timeout=patience(60)
        )


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[ReadOnlyVault]:
    """A vault on read-only media, with its index in the user's cache folder.

    Run as a normal user, the vault is made read-only with chmod. Root writes through file
    modes, so as root each command runs in its own mount namespace where the vault is a
    read-only bind mount (skipped where the system allows no such namespace)."""
    vault = tmp_path / "ro-vault"
    write_file(vault, "work/plan.md", "---\ntitle: Plan\ntags: [q4]\n---\ngazelle plan\n")
    write_file(vault, "gotcha/deploy.md", "---\ntitle: Deploy gotcha\n---\nalways antelope\n")
    env = {**server_env(), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    root = os.geteuid() == 0
    if root:
        probe = subprocess.run(
            ["unshare", "-m", "mount", "--bind", "-o", "ro", str(vault), str(vault)],
            capture_output=True,
        ) if shutil.which("unshare") else None  # fmt: skip
        if probe is None or probe.returncode != 0:
            pytest.skip("running as root without mount namespaces: cannot make a read-only vault")
    else:
        for folder, _dirs, files in os.walk(vault):
            for name in files:
                os.chmod(os.path.join(folder, name), 0o444)
            os.chmod(folder, 0o555)
    yield ReadOnlyVault(vault, env, root)
    if not root:
        for folder, _dirs, _files in os.walk(vault):
            os.chmod(folder, 0o755)


@pytest.mark.processes
def test_a_read_only_vault_reads_with_the_index_in_the_user_cache(
    read_only: ReadOnlyVault, tmp_path: Path
) -> None:
    done = read_only.run("search", "gazelle", "--json")
    assert done.returncode == 0, done.stderr
    assert [hit["path"] for hit in json.loads(done.stdout)["results"]] == ["work/plan.md"]
    assert list((tmp_path / "cache" / "memvault").glob("*/index.sqlite3"))
    done = read_only.run("read", "Plan", "--format", "json")
    assert done.returncode == 0 and json.loads(done.stdout)["title"] == "Plan"
    done = read_only.run("list", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["total"] == 2
    done = read_only.run("context", "--json")
    assert done.returncode == 0 and "antelope" in done.stdout
    assert "Traceback" not in done.stderr
    done = read_only.run("sync")
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stderr.splitlines() if "upkeep skipped" in line]


@pytest.mark.processes
@pytest.mark.parametrize(
    "command",
    [("write", "--title", "New", "body"), ("edit", "Plan", "--append", "more"), ("rm", "Plan")],
)
def test_a_write_to_a_read_only_vault_fails_with_one_line(
    read_only: ReadOnlyVault, command: tuple[str, ...]
) -> None:
    done = read_only.run(*command)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "read-only" in done.stderr, done.stderr


@pytest.mark.processes
@pytest.mark.anyio
async def test_the_server_serves_a_read_only_vault(read_only: ReadOnlyVault) -> None:
    """`serve` starts (upkeep skipped), searches and reads; a write is one clear error."""
    command = read_only.command("serve")
    params = StdioServerParameters(command=command[0], args=command[1:], env=read_only.env)
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            found = structured(await session.call_tool("search_mem", {"query": "gazelle"}))
            assert [hit["path"] for hit in found["results"]] == ["work/plan.md"]
            plan = await session.call_tool("read_mem", {"identifier": "Plan", "format": "json"})
            assert structured(plan)["title"] == "Plan"
            written = await session.call_tool("write_mem", {"title": "New", "content": "x"})
            assert written.is_error and "read-only" in text_of(written)


def test_the_index_path_option_keeps_the_index_elsewhere(vault_dir: Path, tmp_path: Path) -> None:
    write_file(vault_dir, "note.md", "# Note\nnarwhal\n")
    index = tmp_path / "elsewhere" / "index.sqlite3"
    code, out, _ = run(vault_dir, "search", "narwhal", index=index)
    assert code == 0 and out.startswith("Note (note, ")
    assert index.exists() and not (vault_dir / STATE_DIR / "index.sqlite3").exists()
