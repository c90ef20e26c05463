"""Nested properties (objects, lists of objects) as block YAML, `where` by dotted path, and
edits that add items to and take items out of a list property (issue 37): through the service
API, the CLI and a real MCP session, with hypothesis round trips of nested values."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from memvault.cli import main
from memvault.config import Settings
from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.core.memory import OWNED_KEYS
from memvault.core.properties import RESERVED, clean_properties, properties_of
from memvault.core.records import Filter
from memvault.errors import Invalid
from memvault.service.vault import VaultService

from .conftest import write_file
from .mcp_helpers import stdio_session, structured, text_of

TEAM = {"owner": {"team": "infra", "name": "Ann"}}
REVIEWERS = {"reviewers": [{"name": "ann", "role": "lead"}, {"name": "bo"}]}
ROUND_TRIP = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def titles(vault: VaultService, **where: Any) -> list[str]:
    rows, _ = vault.list_memories(Filter(where=tuple(where.items())))
    return sorted(row.title for row in rows)


def test_nested_values_are_block_yaml_that_reads_back(vault: VaultService) -> None:
    memory = vault.create(Draft("Billing job", "Runs nightly.", properties={**TEAM, **REVIEWERS}))
    text = (vault.root / memory.path).read_text()
    assert (
        "owner:\n  team: infra\n  name: Ann\n"
        "reviewers:\n  - name: ann\n    role: lead\n  - name: bo\n---\n"
    ) in text
    assert properties_of(vault.get(memory.id).metadata) == {**TEAM, **REVIEWERS}


def test_where_reaches_into_objects_and_any_item_of_a_list(vault: VaultService) -> None:
    vault.create(Draft("Billing job", "Runs nightly.", properties={**TEAM, **REVIEWERS}))
    vault.create(Draft("Mail job", "Sends mail.", properties={"owner": {"team": "web"}}))
    write_file(
        vault.root,
        "notes/by-hand.md",
        "---\nowner:\n  team: Infra\nreviewers:\n- name: cy\n  since: 2024-05-01\n---\nHand.\n",
    )
    vault.upkeep.sync()
    assert titles(vault, **{"owner.team": "infra"}) == ["Billing job", "by-hand"]
    assert titles(vault, **{"reviewers.name": "bo"}) == ["Billing job"]
    assert titles(vault, **{"reviewers.since": "2024-05-01"}) == ["by-hand"]
    assert titles(vault, **{"owner.team": "web", "reviewers.name": "ann"}) == []
    hits = vault.search("job", where=Filter(where=(("owner.team", "web"),))).results
    assert [hit.title for hit in hits] == ["Mail job"]
    assert vault.get("by-hand").metadata["reviewers"] == [{"name": "cy", "since": "2024-05-01"}]


def test_add_to_keeps_the_other_items(vault: VaultService) -> None:
    """Appending one file once replaced the list with that file alone."""
    memory = vault.create(Draft("Flaky test", "x", properties={"files": ["a.py", "b.py"]}))
    vault.update(memory.id, Revision(add_to={"files": "c.py"}))
    assert vault.get(memory.id).metadata["files"] == ["a.py", "b.py", "c.py"]
    text = (vault.root / memory.path).read_text()
    assert "files: [a.py, b.py, c.py]\n" in text


def test_items_are_added_once_taken_out_by_their_fields_and_swapped(vault: VaultService) -> None:
    memory = vault.create(Draft("Billing job", "Runs.", ["ops", "Billing"], properties=REVIEWERS))
    edit = Revision(add_to={"reviewers": [{"name": "bo"}, {"name": "cy"}], "tags": ["#new"]})
    vault.update(memory.id, edit)
    vault.update(memory.id, edit)  # a retry adds nothing
    got = vault.get(memory.id)
    assert [r["name"] for r in got.metadata["reviewers"]] == ["ann", "bo", "cy"]
    assert got.tags == ["ops", "Billing", "new"]
    vault.update(
        memory.id,
        Revision(
            remove_from={"reviewers": {"name": "ann"}, "tags": ["billing", "gone"]},
            add_to={"reviewers": {"name": "ann", "role": "backup"}},
        ),
    )
    got = vault.get(memory.id)
    assert got.metadata["reviewers"] == [{"name": "bo"}, {"name": "cy"}, REVIEWERS_BACKUP]
    assert got.tags == ["ops", "new"]
    assert titles(vault, **{"reviewers.role": "backup"}) == ["Billing job"]
    assert titles(vault, **{"reviewers.role": "lead"}) == []


REVIEWERS_BACKUP = {"name": "ann", "role": "backup"}


def test_a_single_value_becomes_a_list_and_an_absent_one_starts_one(vault: VaultService) -> None:
    memory = vault.create(Draft("Owner", "x", properties={"who": "ann", "flags": [1, True]}))
    vault.update(memory.id, Revision(add_to={"who": "bo", "new": "first"}))
    vault.update(memory.id, Revision(remove_from={"flags": True, "absent": "x"}))
    meta = vault.get(memory.id).metadata
    assert (meta["who"], meta["new"], meta["flags"]) == (["ann", "bo"], ["first"], [1])
    before = (vault.root / memory.path).read_text()
    assert vault.update(memory.id, Revision(remove_from={"who": "cy"})).version
    assert (vault.root / memory.path).read_text() == before


@pytest.mark.parametrize(
    ("revision", "message"),
    [
        (Revision(add_to={"owner": "x"}), "property 'owner' is an object, not a list"),
        (Revision(add_to={"files": None}), "add_to: 'files' names no item"),
        (Revision(remove_from={"files": []}), "remove_from: 'files' names no item"),
        (Revision(add_to={"id": "x"}), "property 'id' is reserved"),
        (
            Revision(properties={"files": ["z"]}, add_to={"files": "y"}),
            "files: set a value whole, or add and remove items, not both at once",
        ),
        (Revision(tags=["a"], remove_from={"tags": "b"}), "tags: set a value whole"),
        (Revision(add_to={"files": [[[[[1]]]]]}), "nests deeper than 4 levels"),
    ],
)
def test_list_edits_that_cannot_apply_are_refused(
    vault: VaultService, revision: Revision, message: str
) -> None:
    memory = vault.create(Draft("Job", "x", properties={**TEAM, "files": ["a"]}))
    before = (vault.root / memory.path).read_text()
    with pytest.raises(Invalid, match=message):
        vault.update(memory.id, revision)
    assert (vault.root / memory.path).read_text() == before


def test_the_cli_sets_nested_values_filters_by_path_and_edits_lists(vault_dir: Path) -> None:
    def run(*args: str) -> str:
        result = CliRunner().invoke(main, ["--vault", str(vault_dir), *args])
        assert result.exit_code == 0, result.output
        return result.stdout

    written = json.loads(
        run("write", "--title", "Billing job", "--tag", "ops,old", "--set",
            'owner={"team": "infra"}', "--set", 'reviewers=[{"name": "ann"}]', "--json",
            "Runs nightly.")
    )  # fmt: skip
    run("edit", written["id"], "--add-to", 'reviewers={"name": "bo"}', "--add-to",
        "reviewers=cy", "--remove-from", "tags=old", "--add-to", "tags=billing")  # fmt: skip
    read = json.loads(run("read", written["id"], "--format", "json"))
    assert read["properties"]["reviewers"] == [{"name": "ann"}, {"name": "bo"}, "cy"]
    assert read["tags"] == ["ops", "billing"]
    assert "Billing job" in run("list", "--where", "owner.team=infra")
    assert "Billing job" in run("list", "--where", "reviewers.name=bo")
    assert "Billing job" not in run("list", "--where", "reviewers.name=zed")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.processes
@pytest.mark.anyio
async def test_mcp_tools_take_nested_values_paths_and_list_edits(vault_dir: Path) -> None:
    async with stdio_session(vault_dir) as session:
        written = structured(
            await session.call_tool(
                "write_mem",
                {"title": "Billing job", "content": "Runs.", "properties": {**TEAM, **REVIEWERS}},
            )
        )
        edited = await session.call_tool(
            "edit_mem",
            {
                "id": written["id"],
                "add_to": {"reviewers": {"name": "cy"}, "tags": "billing"},
                "remove_from": {"reviewers": {"name": "bo"}},
            },
        )
        assert not edited.is_error, text_of(edited)
        read = await session.call_tool("read_mem", {"identifier": written["id"]})
        found = structured(
            await session.call_tool(
                "search_mem", {"query": "runs", "where": {"owner": {"team": "infra"}}}
            )
        )
        by_item = structured(
            await session.call_tool("list_mem", {"where": {"reviewers.name": "cy"}})
        )
        refused = await session.call_tool(
            "edit_mem", {"id": written["id"], "add_to": {"owner": "x"}}
        )
    props = structured(read)["properties"]
    assert props["reviewers"] == [{"name": "ann", "role": "lead"}, {"name": "cy"}]
    assert structured(read)["tags"] == ["billing"]
    assert '- owner: {"team": "infra", "name": "Ann"}\n' in text_of(read)
    assert [hit["title"] for hit in found["results"]] == ["Billing job"]
    assert [item["title"] for item in by_item["items"]] == ["Billing job"]
    assert refused.is_error and "is an object, not a list" in text_of(refused)


# -- hypothesis: nested values round trip through a write and a read ---------------------------

names = st.one_of(
    st.sampled_from(["team", "name", "1", "true", "null", "<<", "a.b", "- x", "#", "é", "key: v"]),
    st.text(st.characters(exclude_categories=["Cc", "Cs"]), min_size=1, max_size=12),
).map(str.strip)
field_names = names.filter(lambda name: bool(name) and "\u2028" not in name)
scalars = st.one_of(
    st.booleans(),
    st.integers(-(10**15), 10**15),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(st.characters(exclude_characters="\x00"), max_size=30),
    st.sampled_from(["2024-01-15", "2024-01-15T10:30:00Z", "yes", "~", "", " x ", "a: b", "[1]"]),
)
nested = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(st.one_of(inner, st.none()), max_size=4),
        st.dictionaries(field_names, st.one_of(inner, st.none()), max_size=4),
    ),
    max_leaves=12,
)
property_names = field_names.filter(
    lambda name: name not in RESERVED and name not in OWNED_KEYS and "\ufeff" not in name
)
properties = st.dictionaries(property_names, nested, min_size=1, max_size=4)


@pytest.fixture(scope="module")
def round_trip_vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VaultService]:
    service = VaultService.open(Settings(vault=tmp_path_factory.mktemp("nested-vault")))
    yield service
    service.close()


_count = itertools.count()


def valid(given: dict[str, Any]) -> dict[str, Any]:
    """The properties as memvault takes them; inputs it refuses are not the case here."""
    try:
        return clean_properties(given)
    except Invalid:
        assume(False)
        raise  # unreachable: assume(False) raises


@ROUND_TRIP
@given(given=properties)
@example(given={"<<": {"<<": [1, {"a": None}]}})
@example(given={"list": [[], {}, [{"x": "2024-01-15"}]], "when": "2024-01-15T10:30:00Z"})
def test_nested_values_read_back_as_written(
    round_trip_vault: VaultService, given: dict[str, Any]
) -> None:
    """Given any nested properties memvault accepts,
    when a memory is written with them and read again (and a reindex reads the file anew),
    then its properties equal what was written, in order."""
    cleaned = valid(given)
    memory = round_trip_vault.create(
        Draft(f"Round trip {next(_count)}", "x", properties=cleaned),
        WriteOptions(allow_duplicate=True),
    )
    read = properties_of(round_trip_vault.get(memory.id).metadata)
    assert read == cleaned
    assert list(read) == list(cleaned)


@ROUND_TRIP
@given(first=properties, second=properties)
def test_an_edit_of_nested_values_keeps_the_others(
    round_trip_vault: VaultService, first: dict[str, Any], second: dict[str, Any]
) -> None:
    """Given a memory with nested properties,
    when an edit sets other nested values,
    then the memory holds the first ones merged with the second, key by key."""
    memory = round_trip_vault.create(
        Draft(f"Edited {next(_count)}", "x", properties=valid(first)),
        WriteOptions(allow_duplicate=True),
    )
    round_trip_vault.update(memory.id, Revision(properties=valid(second)))
    read = properties_of(round_trip_vault.get(memory.id).metadata)
    assert read == {**valid(first), **valid(second)}
