"""Properties, attribution, key-value writes and superseding, through the service API and the
CLI, on real files: what lands in the frontmatter, what the index finds, what is refused."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from memvault.cli import main
from memvault.config import Settings
from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.core.records import Filter, NoteRow
from memvault.errors import Conflict, Duplicate, Invalid
from memvault.service.vault import VaultService

from .conftest import write_file


def run(vault: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--vault", str(vault), *args])
    return result.exit_code, result.stdout, result.stderr


def titles(rows: list[NoteRow]) -> list[str]:
    return sorted(row.title for row in rows)


def test_properties_are_obsidian_frontmatter_merged_by_edits(vault: VaultService) -> None:
    """Each value type is written as Obsidian writes it; an edit merges keys and null
    removes one, leaving the others and a person's comment in place."""
    memory = vault.create(
        Draft(
            "Flaky test",
            "It fails on Mondays.",
            properties={"outcome": "open", "files": ["a.py", "b.py"], "hours": 1.5, "done": False},
        )
    )
    path = vault.root / memory.path
    text = path.read_text()
    assert "outcome: open\nfiles: [a.py, b.py]\nhours: 1.5\ndone: false\n---\n" in text
    path.write_text(text.replace("hours: 1.5\n", "hours: 1.5  # a guess\n"))
    vault.upkeep.sync()

    vault.update(
        memory.id, Revision(properties={"outcome": "fixed", "done": None, "due": "2026-12-01"})
    )

    text = path.read_text()
    assert "outcome: fixed\nfiles: [a.py, b.py]\nhours: 1.5  # a guess\ndue: 2026-12-01\n" in text
    assert "done" not in text
    assert vault.get(memory.id).metadata["due"] == "2026-12-01"


def test_hand_made_properties_are_filtered_on_after_a_sync(vault: VaultService) -> None:
    """A property typed in Obsidian is found by a where filter once the index has seen it; the
    match ignores case and a list matches by any element."""
    write_file(vault.root, "notes/trip.md", "---\nstatus: Planned\nwho: [Ann, Bo]\n---\nTrip.\n")
    write_file(vault.root, "notes/other.md", "---\nstatus: done\n---\nTrip too.\n")
    vault.upkeep.sync()

    planned = Filter(where=(("Status", "planned"), ("who", "bo")))
    assert titles(vault.list_memories(planned)[0]) == ["trip"]
    assert [hit.title for hit in vault.search("trip", where=planned).results] == ["trip"]


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"id": "x"}, "property 'id' is reserved"),
        ({"created_by": "me"}, "property 'created_by' is reserved"),
        ({"superseded_by": "x"}, "property 'superseded_by' is reserved"),
        ({"": "x"}, "is not a one-line name"),
        ({"bad\nkey": "x"}, "is not a one-line name"),
        ({"deep": [[[[[1]]]]]}, "property 'deep' nests deeper than 4 levels"),
        ({"owner": {"": 1}}, "property 'owner': field '' is not a one-line name"),
        ({"owner": {"a": b"x"}}, "property 'owner.a': bytes values are not allowed"),
        ({"owner": {"a": 1, " a ": 2}}, "property 'owner' names a field twice"),
    ],
)
def test_bad_properties_are_refused_with_a_clear_message(
    vault: VaultService, properties: dict, message: str
) -> None:
    with pytest.raises(Invalid, match=message):
        vault.create(Draft("Title", "Body", properties=properties))
    assert vault.list_memories()[1] == 0


def test_a_where_filter_names_a_property_with_one_value(vault: VaultService) -> None:
    code, _out, err = run(vault.root, "list", "--where", "scope=x")
    assert code == 1
    assert "where: 'scope' is one of memvault's own fields, not a property" in err


def test_a_title_repeats_across_scopes_but_not_within_one(vault: VaultService) -> None:
    """The same title (and the same text) may exist once per scope; the duplicate check looks
    only within the scope."""
    vault.create(Draft("theme", "dark", scope="alice"))
    vault.create(Draft("theme", "dark", scope="bob"))
    vault.create(Draft("theme", "dark"))
    with pytest.raises(Duplicate, match="a memory titled 'theme' exists"):
        vault.create(Draft("theme", "light", scope="Alice"))
    with pytest.raises(Duplicate, match="near-identical content"):
        vault.create(Draft("Colour theme", "dark", scope="bob"))
    with pytest.raises(Duplicate, match="a memory titled 'theme' exists"):
        vault.create(Draft("theme", "another text altogether", scope="bob"))


def test_scopes_are_one_for_the_duplicate_check_exactly_when_filters_make_them_one(
    vault: VaultService,
) -> None:
    """Filters fold a scope's ASCII letters only (as SQLite's NOCASE): "Équipe" and "équipe"
    are two scopes to a search, so a title may be in each; the check once folded every letter."""
    vault.create(Draft("theme", "dark", scope="Équipe"))
    vault.create(Draft("theme", "light", scope="équipe"))
    assert [
        h.scope
        for h in vault.search("theme", where=Filter(scope="équipe", only_scope=True)).results
    ] == ["équipe"]
    with pytest.raises(Duplicate, match="a memory titled 'theme' exists"):
        vault.create(Draft("theme", "grey", scope="éQUIPE"))


def test_a_replace_without_the_memory_it_expected_is_a_conflict(vault: VaultService) -> None:
    with pytest.raises(Conflict, match="no memory is titled 'gone' in scope"):
        vault.write(
            Draft("gone", "x"), WriteOptions(on_exists="replace", expected_version="0123456789ab")
        )
    with pytest.raises(Invalid, match="expected_version guards a replace"):
        vault.write(Draft("new", "x"), WriteOptions(expected_version="0123456789ab"))


def test_a_superseded_memory_keeps_its_links_and_stays_readable(vault: VaultService) -> None:
    old = vault.create(Draft("Old way", "Do it by hand."))
    new = vault.create(
        Draft("New way", "Use the script.", supersedes=old.path), WriteOptions(agent="bot")
    )
    marked = vault.get(old.id)
    assert marked.metadata["superseded_by"] == "[[new-way]]"
    assert marked.metadata["updated_by"] == "bot"
    assert vault.get(new.id).metadata["supersedes"] == "[[old-way]]"
    assert titles(vault.list_memories()[0]) == ["New way"]
    assert titles(vault.list_memories(Filter(include_superseded=True))[0]) == [
        "New way",
        "Old way",
    ]
    succession = vault.succession(marked)
    assert [(raw, m.id if m else None) for raw, m in succession.superseded_by] == [
        ("[[new-way]]", new.id)
    ]


def test_the_cli_sets_properties_filters_and_records_its_writer(vault_dir: Path) -> None:
    """--set takes JSON values where they are JSON and text otherwise; --where filters;
    writes record --agent, else the user name."""
    code, out, _ = run(
        vault_dir,
        "--agent",
        "ci-job",
        "write",
        "--title",
        "Build cache",
        "--set",
        "runs=3",
        "--set",
        'files=["a.ts", "b.ts"]',
        "--set",
        "owner=team platform",
        "--json",
        "Cache the node modules.",
    )
    assert code == 0, out
    written = json.loads(out)
    code, out, _ = run(vault_dir, "edit", written["id"], "--set", "runs=null", "--set", "ok=true")
    assert code == 0
    code, out, _ = run(vault_dir, "read", written["id"], "--format", "json")
    read = json.loads(out)
    assert read["properties"] == {"files": ["a.ts", "b.ts"], "owner": "team platform", "ok": True}
    assert read["created_by"] == "ci-job"
    assert read["updated_by"] not in (None, "ci-job")
    code, out, _ = run(vault_dir, "list", "--where", "files=b.ts", "--where", "ok=true")
    assert "Build cache" in out
    code, out, _ = run(vault_dir, "list", "--where", "created_by=ci-job", "--json")
    assert [item["title"] for item in json.loads(out)["items"]] == ["Build cache"]


def test_the_cli_replaces_by_key_and_reads_a_scope_s_key(vault_dir: Path) -> None:
    for scope, value in (("alice", "dark"), ("bob", "dark"), ("alice", "light")):
        code, out, _ = run(
            vault_dir,
            "write",
            "--title",
            "theme",
            "--scope",
            scope,
            "--on-exists",
            "replace",
            value,
        )
        assert code == 0
    assert out.endswith("(replaced)\n")
    assert run(vault_dir, "read", "alice:theme", "--format", "plain")[1] == "theme\n\nlight\n"
    assert run(vault_dir, "read", "bob:theme", "--format", "plain")[1] == "theme\n\ndark\n"


def test_the_cli_supersedes_and_says_so_when_reading_the_old_one(vault_dir: Path) -> None:
    run(vault_dir, "write", "--title", "Use Postgres", "Postgres.")
    code, _out, _ = run(
        vault_dir, "write", "--title", "Use SQLite", "--supersedes", "use-postgres", "SQLite."
    )
    assert code == 0
    code, out, _ = run(vault_dir, "list")
    assert "Use Postgres" not in out and "Use SQLite" in out
    code, out, err = run(vault_dir, "list", "--include-superseded")
    assert "Use Postgres" in out
    code, out, err = run(vault_dir, "read", "use-postgres")
    assert "superseded_by: '[[use-sqlite]]'" in out
    assert err.startswith("note: superseded by 'Use SQLite' (id ")


def test_an_index_of_the_previous_schema_is_rebuilt_with_properties(vault_dir: Path) -> None:
    """Properties live in a derived table: an index made before it is rebuilt, and finds them."""
    write_file(vault_dir, "a.md", "---\nrepository: shop\n---\nA.\n")
    index = vault_dir / ".memvault" / "index.sqlite3"
    first = VaultService.open(Settings(vault=vault_dir))
    first.close()
    with closing(sqlite3.connect(index)) as db:
        db.execute("PRAGMA user_version = 9")
    again = VaultService.open(Settings(vault=vault_dir))
    try:
        rows, _ = again.list_memories(Filter(where=(("repository", "shop"),)))
        assert [row.path for row in rows] == ["a.md"]
    finally:
        again.close()


def test_succession_links_follow_a_rename_and_go_with_a_delete(vault: VaultService) -> None:
    """Both ends of a superseding are links: a rename of either rewrites the other's link, and
    deleting the newer memory lets the older one surface again."""
    old = vault.create(Draft("Old way", "Do it by hand."))
    new = vault.create(Draft("New way", "Use the script.", supersedes=old.id))

    vault.update(new.id, Revision(title="Newest way"))
    vault.update(old.id, Revision(title="Oldest way"))

    assert vault.get(old.id).metadata["superseded_by"] == "[[newest-way]]"
    assert vault.get(new.id).metadata["supersedes"] == "[[oldest-way]]"
    assert [m.id for _raw, m in vault.succession(vault.get(old.id)).superseded_by if m] == [new.id]

    vault.delete(new.id)

    assert "superseded_by" not in vault.get(old.id).metadata
    assert titles(vault.list_memories()[0]) == ["Oldest way"]


def test_a_value_holding_a_line_break_only_yaml_knows_reads_back_as_written(
    vault: VaultService,
) -> None:
    """NEL, U+2028 and U+2029 are line breaks to YAML: single-quoted they were folded into a
    space on reading ("a\\x85b" read back as "a b"); double-quoted they keep."""
    odd = {"name": "a\x85b", "line": "x\u2028y\u2029z", "nested": {"items": ["\x85"]}}
    memory = vault.create(Draft("Odd breaks", "Body.", properties=odd))
    assert {k: vault.get(memory.id).metadata[k] for k in odd} == odd
    vault.update(memory.id, Revision(properties={"name": "c\x85d"}))
    assert vault.get(memory.id).metadata["name"] == "c\x85d"


def test_a_lone_surrogate_is_refused_with_what_held_it(vault: VaultService) -> None:
    """JSON can carry "\\ud800" alone (an HTTP client's), which no UTF-8 file can hold: it was
    an internal error mid-write (UnicodeEncodeError), or a file YAML could not read back."""
    memory = vault.create(Draft("Fine", "Body."))
    attempts = {
        "the title": lambda: vault.create(Draft("a\ud800b", "x")),
        "the content": lambda: vault.create(Draft("T", "x\udc00")),
        "property 'team'": lambda: vault.create(Draft("T", "x", properties={"team": "\ud800"})),
        "property 'o.name'": lambda: vault.create(
            Draft("T", "x", properties={"o": {"name": ["\ud800"]}})
        ),
        "property name": lambda: vault.create(Draft("T", "x", properties={"k\udc00": 1})),
        "the content ": lambda: vault.update(memory.id, Revision(edit=BodyEdit(append="\ud800"))),
    }
    for what, attempt in attempts.items():
        with pytest.raises(Invalid, match=f"{what.strip()} holds a lone UTF-16 surrogate"):
            attempt()
    assert [row.title for row in vault.list_memories()[0]] == ["Fine"]
    assert vault.get(memory.id).body == "Body.\n"
