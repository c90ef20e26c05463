"""An edit over the size limit is refused before its result is built (issue 32, item 5): a
find/replace of two letters by 10,000 in a 900 KB note once held 5.7 GB for 19 s before the
limit refused it, and by 100,000 it failed with an internal MemoryError."""

from __future__ import annotations

import dataclasses
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memvault.core.body_edits import BodyEdit, apply_edit
from memvault.core.drafts import Draft, Revision
from memvault.errors import TooLarge
from memvault.service.vault import VaultService

from .mcp_helpers import stdio_session, structured, text_of

# 900 KB holding "ab" 300,000 times, as the attack's note did.
BIG = "abc" * 300_000
REFUSAL = "the limit is 1 MiB. Split it into several linked memories."


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_a_multiplying_replace_is_refused_without_building_its_result(
    vault: VaultService, vault_dir: Path
) -> None:
    memory = vault.create(Draft("Big note", BIG))
    before = (vault_dir / memory.path).read_bytes()
    edit = BodyEdit(find="ab", replace="Z" * 1000, expected_count=300_000)
    tracemalloc.start()
    try:
        with pytest.raises(TooLarge) as refused:
            vault.update(memory.id, Revision(edit=edit))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(refused.value) == f"content is 286.4 MiB; {REFUSAL}"
    # The note itself is 0.9 MB: a few copies of it fit, the 286 MiB result never did.
    assert peak < 32 * 1024 * 1024
    assert (vault_dir / memory.path).read_bytes() == before


def test_each_kind_of_edit_is_refused_over_the_limit_and_accepted_under_it(
    vault: VaultService, vault_dir: Path
) -> None:
    limit = vault.limits.max_content
    memory = vault.create(Draft("Half full", "# Top\n\n## Part\nx\n"))
    size = len(vault.get(memory.id).body.encode())
    fill = "é" * ((limit - size) // 2)  # two bytes each: the limit counts bytes
    for edit in (
        BodyEdit(append=fill + "é"),
        BodyEdit(prepend=fill + "é"),
        BodyEdit(section=("Part", fill + "éé")),
        BodyEdit(find="x", replace=fill + "éé"),
    ):
        with pytest.raises(TooLarge, match="the limit is 1 MiB"):
            vault.update(memory.id, Revision(edit=edit))
    grown = vault.update(memory.id, Revision(edit=BodyEdit(find="x", replace=fill[:-1] + "x")))
    assert len(grown.body.encode()) <= limit


@pytest.mark.processes
@pytest.mark.anyio
async def test_edit_mem_says_the_limit_where_it_ran_out_of_memory(vault_dir: Path) -> None:
    async with stdio_session(vault_dir) as session:
        written = structured(
            await session.call_tool("write_mem", {"title": "Big note", "content": BIG})
        )
        refused = await session.call_tool(
            "edit_mem",
            {"id": "Big note", "find": "ab", "replace": "Z" * 100_000, "expected_count": 300_000},
        )
        assert refused.is_error
        assert f"content is 28610.5 MiB; {REFUSAL}" in text_of(refused)
        read = structured(await session.call_tool("read_mem", {"identifier": "Big note"}))
        assert read["version"] == written["version"]


# -- the size an edit computes is the size it builds ------------------------------------------

PIECES = [
    "## Related\n", "- [[a|A]]\n", "- [[b]]\n", "* [[a|A]]", "## Part\n", "# Top\n", "### Sub\n",
    "text\n", "\n", "\n\n", "é", "中文", "😀", "```\n## Related\n```\n", "ab", "\r\n", "- x",
]  # fmt: skip
texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=12).map("".join)


@st.composite
def edits(draw: st.DrawFn) -> BodyEdit:
    """An edit of any kinds at once (the service applies them in one order)."""
    maybe = st.one_of(st.none(), texts)
    find = draw(st.one_of(st.none(), st.sampled_from(["ab", "\n", "é", "- [[a|A]]"]), texts))
    heading = draw(st.sampled_from(["Part", "Related", "Top", "Sub"]))
    return BodyEdit(
        content=draw(maybe),
        find=find,
        replace=None if find is None else draw(texts),
        section=draw(st.one_of(st.none(), texts.map(lambda text: (heading, text)))),
        prepend=draw(maybe),
        append=draw(maybe),
    )


def counted(body: str, edit: BodyEdit) -> BodyEdit:
    """The edit with `expected_count` the number of times its `find` occurs when it applies."""
    if edit.find is None:
        return edit
    found = apply_edit(body, BodyEdit(content=edit.content)).count(edit.find)
    return dataclasses.replace(edit, expected_count=found)


@given(texts, edits())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_size_an_edit_checks_is_the_size_it_builds(body: str, edit: BodyEdit) -> None:
    """Given any body and edit, when the edit applies, then the last size it asked the limit
    about is the size of the body it returned."""
    edit = counted(body, edit)
    asked: list[int] = []
    try:
        edited = apply_edit(body, edit, asked.append)
    except ValueError:
        assume(False)
    assert (asked[-1] if asked else len(body.encode())) == len(edited.encode())


@given(texts, edits(), st.integers(0, 200))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_an_edit_is_refused_exactly_when_a_step_is_over_the_limit(
    body: str, edit: BodyEdit, limit: int
) -> None:
    """Given a limit, an edit whose steps all fit gives the same body as without one, and one
    refused had a step over it."""
    edit = counted(body, edit)
    asked: list[int] = []

    def check(size: int) -> None:
        asked.append(size)
        if size > limit:
            raise TooLarge(str(size))

    try:
        unlimited = apply_edit(body, edit)
    except ValueError:
        assume(False)
    try:
        assert apply_edit(body, edit, check) == unlimited
        assert all(size <= limit for size in asked)
    except TooLarge:
        assert asked[-1] > limit
