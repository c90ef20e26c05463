"""Search: natural questions, explicit syntax, any input safe, diacritics, CJK, title first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memvault.core.drafts import Draft
from memvault.core.records import Filter
from memvault.service.vault import VaultService

from .conftest import write_file


@pytest.fixture
def notes(vault: VaultService, vault_dir: Path) -> VaultService:
    vault.create(
        Draft(
            "Payment retry decision",
            "We decided that failed card payments are retried three times with exponential "
            "backoff, then the order is cancelled.",
            ["payments", "decision"],
            "decision",
        )
    )
    vault.create(
        Draft("Retry budget for the search API", "Search requests are retried once.", [], "api")
    )
    vault.create(
        Draft("Payment providers", "We use Stripe for cards and Adyen in Europe.", ["payments"])
    )
    vault.create(Draft("Café opening hours", "The café near the office opens at 8.", ["places"]))
    vault.create(
        Draft("支付重试策略", "失败的支付会重试三次，然后取消订单。", ["支付"], "decision")
    )
    vault.create(Draft("決済のリトライ", "失敗した決済は三回まで再試行します。", [], "jp"))
    vault.create(Draft("결제 재시도 정책", "실패한 결제는 세 번 재시도합니다.", [], "kr"))
    vault.create(
        Draft("Deploy checklist", "Run migrations before the deploy. Body mentions payment.")
    )
    write_file(vault_dir, "hand/notes.md", "# Meeting notes\nThe exact phrase lives here.\n")
    vault.upkeep.rebuild()
    return vault


def titles(vault: VaultService, query: str, limit: int = 10, **filters: Any) -> list[str]:
    return [hit.title for hit in vault.search(query, limit, 0, Filter(**filters)).results]


def test_a_natural_question_finds_the_decision_first(notes: VaultService) -> None:
    results = titles(notes, "what did we decide about the payment retry policy?")
    assert results[0] == "Payment retry decision"
    assert "Retry budget for the search API" in results


def test_a_missing_word_never_means_zero_results(notes: VaultService) -> None:
    assert titles(notes, "payment zebra-unicorn")[0] == "Payment providers"


def test_notes_with_every_word_come_before_partial_matches_that_score_higher(
    vault: VaultService,
) -> None:
    vault.create(
        Draft("Kafka kafka kafka", "Kafka kafka kafka: consumer lag on every kafka topic.")
    )
    vault.create(
        Draft("Broker notes", "The broker had a rebalance; kafka came back after a minute.")
    )
    vault.create(Draft("Rebalance rebalance", "Rebalance, rebalance and once more rebalance."))
    vault.create(Draft("Unrelated", "Nothing to see here."))
    every = titles(vault, "kafka rebalance")
    assert every[0] == "Broker notes"
    assert set(every[1:]) == {"Kafka kafka kafka", "Rebalance rebalance"}
    pages = [vault.search("kafka rebalance", 1, offset) for offset in range(3)]
    assert [page.results[0].title for page in pages] == every
    assert [page.total for page in pages] == [3, 3, 3]


def test_a_possessive_or_contraction_finds_the_plain_word(vault: VaultService) -> None:
    """`Melanie's` is Melanie, not the phrase "Melanie s" that a chat log never holds (the
    LoCoMo dev split lost questions to it), and `what's` is a filler word like `what`."""
    vault.create(
        Draft("Hiking chat", "- **Melanie:** I finally bought new boots for the ridge trail.")
    )
    vault.create(Draft("Cooking chat", "- **Caroline:** The soup needs more salt."))
    assert titles(vault, "What's Melanie's gear?") == ["Hiking chat"]
    assert titles(vault, "Caroline's soup")[0] == "Cooking chat"


def test_words_typed_side_by_side_rank_a_note_holding_them_together_first(
    vault: VaultService,
) -> None:
    """Both notes hold every word, and bm25 alone prefers the short one; the note that holds
    them as typed, side by side (a possessive as written), comes first."""
    vault.create(Draft("Chores", "Group tasks; support each other."))
    vault.create(
        Draft(
            "Tuesday", "Caroline went to her support group on Tuesday evening and met new friends."
        )
    )
    vault.create(Draft("Weekend", "Kids asked Melanie to paint."))
    vault.create(
        Draft("Museum", "On Sunday Melanie's kids painted dinosaurs at the museum workshop.")
    )
    assert titles(vault, "support group") == ["Tuesday", "Chores"]
    assert titles(vault, "What do Melanie's kids like?") == ["Museum", "Weekend"]


def test_title_matches_rank_above_body_matches(notes: VaultService) -> None:
    results = titles(notes, "payment")
    assert results.index("Deploy checklist") > results.index("Payment providers")


def test_explicit_syntax(notes: VaultService) -> None:
    assert titles(notes, '"exact phrase"') == ["Meeting notes"]
    assert titles(notes, '"phrase exact"') == []
    assert set(titles(notes, "provid*")) == {"Payment providers"}
    assert "Payment providers" not in titles(notes, "payment -stripe")
    assert set(titles(notes, "stripe OR migrations")) == {"Payment providers", "Deploy checklist"}


def test_diacritics_fold(notes: VaultService) -> None:
    assert titles(notes, "cafe") == ["Café opening hours"]
    assert titles(notes, "CAFÉ") == ["Café opening hours"]


def test_chinese_japanese_korean_by_a_few_characters(notes: VaultService) -> None:
    assert titles(notes, "重试") == ["支付重试策略"]
    assert titles(notes, "取消订单") == ["支付重试策略"]
    assert titles(notes, "再試行") == ["決済のリトライ"]
    assert titles(notes, "재시도") == ["결제 재시도 정책"]
    assert titles(notes, "订单取消了吗")[0] == "支付重试策略"
    assert notes.search("重试").results[0].snippet == "失败的支付会**重试**三次，然后取消订单。"
    # Only the gaps made for indexing leave a snippet: the writer's own spaces stay.
    assert notes.search("재시도").results[0].snippet == "실패한 결제는 세 번 **재시도**합니다."


def test_snippet_comes_from_the_title_when_only_the_title_matches(notes: VaultService) -> None:
    assert notes.search("策略").results[0].snippet == "支付重试**策略**"


def test_filters_by_category_and_tags(notes: VaultService) -> None:
    assert titles(notes, "retry", category="decision") == ["Payment retry decision"]
    assert titles(notes, "retried", tags=("payments",)) == ["Payment retry decision"]
    assert titles(notes, "retried", tags=("payments", "nope")) == []


def test_results_carry_every_field(notes: VaultService) -> None:
    page = notes.search("stripe", limit=5)
    hit = page.results[0]
    assert (hit.title, hit.path, hit.category, hit.tags) == (
        "Payment providers",
        "payment-providers.md",
        None,
        ["payments"],
    )
    assert hit.score > 0 and "**Stripe**" in hit.snippet and hit.updated_at and hit.id
    assert page.total == 1


def test_paging_walks_through_all_results_once(notes: VaultService) -> None:
    every = titles(notes, "payment retry", limit=100)
    paged = [
        hit.title
        for offset in range(0, len(every))
        for hit in notes.search("payment retry", limit=1, offset=offset).results
    ]
    assert paged == every
    assert notes.search("payment retry", limit=2).total == len(every)


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "AND",
        "NEAR(",
        "*",
        ":",
        "^",
        "",
        "   ",
        "OR OR",
        "-",
        '""',
        "a:b",
        "(x",
        "NOT",
        "title:x",
        "x" * 10_000,
        "word " * 2_000,
        "\x00",
        "💥",
        "'; DROP TABLE notes",
    ],
)
def test_any_input_returns_a_page_never_an_error(notes: VaultService, query: str) -> None:
    page = notes.search(query)
    assert page.total >= len(page.results)


def test_a_write_is_visible_to_the_next_search(vault: VaultService) -> None:
    vault.create(Draft("Fresh", "zyzzyva"))
    assert titles(vault, "zyzzyva") == ["Fresh"]


def test_the_hits_of_any_page_show_their_snippets_with_the_words_marked(
    vault: VaultService,
) -> None:
    for n in range(14):
        vault.create(
            Draft(f"Airship log {n}", f"Day {n}: the zeppelin drifted north over the ridge.")
        )
    vault.create(Draft("Hangar", "The zeppelin sleeps in the hangar; nothing drifted today."))
    later = vault.search("zeppelin drifted", 10, 10).results
    assert [hit.snippet for hit in later] == [
        *(f"Day {n}: the **zeppelin drifted** north over the ridge." for n in range(10, 14)),
        "The **zeppelin** sleeps in the hangar; nothing **drifted** today.",
    ]
    alone = vault.search("hangar zeppelin").results
    assert alone[0].snippet == "The **zeppelin** sleeps in the **hangar**; nothing drifted today."


def test_a_note_of_several_megabytes_is_found_by_a_word_at_its_end(
    vault: VaultService, vault_dir: Path
) -> None:
    line = "payment retries and the ledger were discussed again at length\n"
    body = line * 60_000 + "The last line names the zeppelin.\n"
    write_file(vault_dir, "huge.md", "---\ntitle: Long log\n---\n" + body)
    vault.create(Draft("Payment retry decision", "Failed payments are retried three times."))
    vault.upkeep.rebuild()
    assert titles(vault, "zeppelin") == ["Long log"]
    assert "**zeppelin**" in vault.search("zeppelin").results[0].snippet
    assert titles(vault, "ledger zeppelin") == ["Long log"]
    assert set(titles(vault, "payment")) == {"Long log", "Payment retry decision"}
    assert vault.search("payment").total == 2
    write_file(vault_dir, "huge.md", "---\ntitle: Long log\n---\n" + line * 60_000)
    vault.upkeep.sync()
    assert titles(vault, "zeppelin") == []
    vault.delete("huge")
    assert titles(vault, "ledger") == []
