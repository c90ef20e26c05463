"""Lines an assistant can read (issue 35): a search hit in one line of at most 105
characters, a listed memory and a briefing item in at most 160, each naming the memory as
read_mem takes it; a plain text snippet whose highlights sit on words a reader sees, never
inside a link's target."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from memvault.core.drafts import Draft
from memvault.core.markdown import plain_snippet
from memvault.features.briefing import build_briefing
from memvault.presentation.lines import hit_line, note_line
from memvault.service.vault import VaultService

from .conftest import write_file

OPEN, CLOSE = "\x02", "\x03"
# Short enough that the snippet holds all of it: the query's words are in the links' hidden
# targets and in the text a reader sees.
LINKED = (
    "## Rendering\n\nThe [[invoice-pdf-rendering|PDF pipeline]] draws each **invoice** with "
    "`weasyprint` ([notes](https://example.com/invoice/rendering)).\n"
)


def test_a_hit_is_one_plain_line_naming_the_memory(vault: VaultService) -> None:
    vault.create(Draft("Invoice rendering", LINKED, ["billing"], "decision", scope="shop"))
    [hit] = vault.search("invoice rendering").results
    line = hit_line(hit)
    assert line.startswith("Invoice rendering (decision/invoice-rendering, shop, just now, ")
    assert len(line) <= 105
    for syntax in ("[[", "]]", "](", "`", "##", "\n"):
        assert syntax not in line, syntax
    # Highlights only on words shown: the link's hidden target holds "invoice" too.
    assert "pdf" not in line and "example.com" not in line
    assert "PDF pipeline draws each **invoice** with weasyprint (notes)" in hit.snippet
    assert vault.recall("decision/invoice-rendering").memory.id == hit.id


def test_long_titles_and_snippets_are_cut_at_a_word(vault: VaultService) -> None:
    title = "A very long title " + "about payment retry budgets " * 6
    vault.create(Draft(title, "retry " * 400))
    [hit] = vault.search("retry").results
    line = hit_line(hit)
    assert len(line) <= 105 and line.endswith("…")
    assert line.startswith("A very long title about payment retry budgets")
    [row] = vault.list_memories()[0]
    assert len(note_line(row)) <= 160


def test_a_briefing_item_has_the_same_shape(vault: VaultService, vault_dir: Path) -> None:
    write_file(vault_dir, "gotcha/force-push.md", "# Never force-push main\n\nIt breaks CI.\n")
    vault.upkeep.sync()
    [item] = build_briefing(vault).items
    assert item.line == "Never force-push main (gotcha/force-push, just now): It breaks CI."


@given(st.text(alphabet=st.sampled_from("ab [](|)#*_`>-\n!\x02\x03:/."), max_size=80))
def test_a_plain_snippet_is_one_line_without_link_syntax(text: str) -> None:
    plain = plain_snippet(text)
    assert "\n" not in plain and "[[" not in plain and "]]" not in plain
    assert plain == plain.strip()


def test_a_snippet_cut_inside_a_link_shows_what_a_reader_sees() -> None:
    assert plain_snippet(f"{OPEN}invoice{CLOSE}-pdf|the PDF]] then") == "the PDF then"
    assert plain_snippet(f"…{OPEN}invoice{CLOSE}-pdf|the PDF]] then…") == "…the PDF then…"
    assert (
        plain_snippet(f"see [[deploy/order|the {OPEN}order{CLOSE}") == f"see the {OPEN}order{CLOSE}"
    )
    assert plain_snippet(f"see [[{OPEN}deploy{CLOSE}-order") == f"see {OPEN}deploy{CLOSE}-order"
    assert plain_snippet("a [link](http://x/y) and ![img](a.png)") == "a link and img"
