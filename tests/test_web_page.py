"""The web page in headless Chromium against a real server process: each flow a person uses,
by keyboard or mouse, with no console error on any page. Each page is saved as a 1280x800
screenshot (to $MEMVAULT_SCREENSHOTS, or the test's temp folder; `make screenshots` writes
docs/screenshots/)."""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from memvault.config import Settings
from memvault.core.drafts import Draft
from memvault.service.vault import VaultService

from .browser import Browser
from .conftest import patience, write_file
from .mcp_helpers import http_server
from .test_web_api import (
    PARAPHRASE,
    ROLLBACK,
    embedded_vault,
    mcp_call,
    memvault_ui,
    stale_notes,
    vectors_loaded,
)

pytestmark = pytest.mark.processes

TOKEN = "page-token"
OLD = "2020-01-01T00:00:00Z"
WAIT = patience(20)  # seconds the page has to show a change: generous, not a timing assertion


def stale_note(title: str, body: str) -> str:
    """A hand-made note last reviewed years ago."""
    return (
        f"---\nid: {title.lower().replace(' ', '-')}-id\ntitle: {title}\ncreated_at: {OLD}\n"
        f"updated_at: {OLD}\nlast_reviewed: {OLD}\n---\n{body}"
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    chromium = Browser()
    yield chromium
    chromium.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    return Path(os.environ.get("MEMVAULT_SCREENSHOTS") or tmp_path / "screenshots")


@pytest.fixture
def page(vault_dir: Path, browser: Browser) -> Iterator[str]:
    """A vault of a few linked memories served over HTTP, the browser signed in; the page's
    address. The test fails if the page logged any console error."""
    vault = VaultService.open(Settings(vault=vault_dir))
    retries = vault.create(
        Draft(
            "Payment retries",
            "Payment retries use **exponential backoff** with jitter.\n\n"
            "Webhooks: see [[stripe-webhooks]]. Tagged #payments.\n\n- max 5 tries\n- then alert\n",
            tags=["payments"],
            category="decision",
            scope="shop",
        )
    )
    hooks = vault.create(
        Draft(
            "Stripe webhooks",
            "Stripe webhooks are verified with the signing secret before anything else.\n",
            category="gotcha",
        )
    )
    vault.link(retries.id, hooks.id)
    vault.close()
    write_file(
        vault_dir,
        "notes/old-deploy.md",
        stale_note("Old deploy steps", "Deploy by hand with rsync to the web host.\n"),
    )
    with http_server(vault_dir, "--token", TOKEN) as (url, _process):
        base = url.removesuffix("/mcp")
        browser.errors.clear()
        browser.open(f"{base}/?token={TOKEN}")
        browser.wait_for("document.querySelectorAll('#results li').length === 3")
        yield base
        errors = list(browser.errors)
        browser.open("about:blank")
        assert errors == []


def search_for(browser: Browser, words: str) -> None:
    """Type into the search box, as a person would, and wait for highlighted results."""
    browser.run("document.querySelector('#q').focus()")
    browser.run("document.querySelector('#q').select()")
    browser.type(words)
    browser.wait_for("document.querySelector('#results mark')")


def open_memory(browser: Browser, base: str, name: str) -> None:
    browser.open(f"{base}/#/m/{name}")
    browser.wait_for("document.querySelector('#memory h2')")


def test_search_as_you_type_and_open_a_memory_by_keyboard_only(
    page: str, browser: Browser, shots: Path
) -> None:
    search_for(browser, "retries")
    assert browser.text("#results li .title") == "Payment retries"
    browser.press("ArrowDown")
    assert "Payment retries" in browser.focused()
    browser.press("Enter")
    browser.wait_for("document.querySelector('#memory h2')?.innerText === 'Payment retries'")
    memory = browser.text("#memory")
    assert "exponential backoff" in memory and "decision/payment-retries.md" in memory
    assert "shop" in memory and "Backlinks (1)" in memory
    assert browser.run("document.querySelector('#memory strong').innerText") == (
        "exponential backoff"
    )
    browser.screenshot(shots / "search.png")
    browser.run("document.querySelector('#memory a.wikilink').focus()")
    browser.press("Enter")
    browser.wait_for("document.querySelector('#memory h2')?.innerText === 'Stripe webhooks'")
    browser.press("/")
    assert browser.focused().startswith("INPUT#q")


def test_tab_reaches_the_pages_and_the_search_box_and_enter_opens_them(
    page: str, browser: Browser
) -> None:
    browser.run("document.querySelector('.skip').focus()")
    reached = []
    for _ in range(8):
        browser.press("Tab")
        reached.append(browser.focused())
    assert any(r.startswith("INPUT#q") for r in reached), reached
    browser.run("document.querySelector('.skip').focus()")
    while "Review" not in browser.focused():
        browser.press("Tab")
    browser.press("Enter")
    browser.wait_for("!document.querySelector('#page-review').hidden")
    browser.wait_for("document.querySelector('.queue li button')")


def test_an_edit_while_the_file_changes_on_disk_shows_both_and_loses_nothing(
    page: str, browser: Browser, vault_dir: Path, shots: Path
) -> None:
    open_memory(browser, page, "payment-retries")
    browser.click("#memory .actions button")
    browser.wait_for("document.activeElement.id === 'editor'")
    browser.run("document.querySelector('#editor').select()")
    browser.type("My rewrite: retries stop after 3 tries.\n")
    note = vault_dir / "decision" / "payment-retries.md"
    theirs = note.read_text().replace("max 5 tries", "max 7 tries (changed in Obsidian)")
    write_file(vault_dir, "decision/payment-retries.md", theirs)
    browser.click("#save")
    browser.wait_for("document.querySelector('.conflict')")
    assert "max 7 tries" in browser.text("#theirs")
    assert browser.run("document.querySelector('#editor').value").startswith("My rewrite")
    assert note.read_text() == theirs
    browser.screenshot(shots / "edit-conflict.png")
    browser.click("#keep-mine")
    browser.wait_for("document.querySelector('#memory .body')?.innerText.includes('My rewrite')")
    assert "My rewrite: retries stop after 3 tries." in note.read_text()


def test_verify_a_stale_memory_from_the_review_queue(
    page: str, browser: Browser, vault_dir: Path, shots: Path
) -> None:
    browser.open(f"{page}/#/review")
    browser.wait_for("document.querySelector('.queue li')")
    stale = browser.text(".queue")
    assert "Not reviewed for 90 days (1)" in stale and "Old deploy steps" in stale
    browser.screenshot(shots / "review.png")
    browser.click(".queue li button")
    browser.wait_for("document.querySelector('.queue h3')?.innerText.includes('(0)')")
    assert f"last_reviewed: {OLD}" not in (vault_dir / "notes" / "old-deploy.md").read_text()


def test_merge_two_near_duplicates_keeps_both_texts_and_links(
    page: str, browser: Browser, vault_dir: Path, shots: Path
) -> None:
    text = "The staging database is restored every night from the production backup at 02:00."
    write_file(vault_dir, "ops/staging-restore.md", stale_note("Staging restore", text + "\n"))
    write_file(
        vault_dir,
        "ops/nightly-restore.md",
        stale_note(
            "Nightly restore", text.replace("02:00", "02:30") + "\nSee [[stripe-webhooks]].\n"
        ),
    )
    browser.open(f"{page}/#/review")
    browser.wait_for("document.querySelector('#duplicates .pair')", WAIT)
    assert "Nightly restore" in browser.text("#duplicates") and "Staging restore" in browser.text(
        "#duplicates"
    )
    browser.screenshot(shots / "review-duplicates.png")
    browser.click("#duplicates .side button")
    browser.wait_for("document.querySelector('#confirm').open")
    browser.click("#confirm-yes")
    browser.wait_for("document.querySelector('#duplicates h3')?.innerText.includes('(0)')", WAIT)
    left = sorted(p.name for p in (vault_dir / "ops").iterdir())
    assert len(left) == 1
    merged = (vault_dir / "ops" / left[0]).read_text()
    assert "02:00" in merged and "02:30" in merged and "stripe-webhooks" in merged


def test_unlink_takes_the_link_out_of_both_files(
    page: str, browser: Browser, vault_dir: Path
) -> None:
    open_memory(browser, page, "payment-retries")
    browser.click("#memory .links button")
    browser.wait_for("!document.querySelector('#memory .links button')")
    assert browser.text("#memory .links li") == "Stripe webhooks"
    related = (vault_dir / "decision" / "payment-retries.md").read_text()
    assert "## Related" not in related
    assert "## Related" not in (vault_dir / "gotcha" / "stripe-webhooks.md").read_text()


def test_a_memory_linked_in_the_text_and_under_related_is_listed_once(
    page: str, browser: Browser
) -> None:
    open_memory(browser, page, "payment-retries")
    links = "#memory .links"
    assert browser.run(f"document.querySelector('{links} h3').innerText") == "Links (1)"
    assert browser.text(f"{links} li").startswith("Stripe webhooks related, in text")
    open_memory(browser, page, "stripe-webhooks")
    browser.wait_for("document.querySelector('#memory h2').innerText === 'Stripe webhooks'")
    backlinks = "document.querySelectorAll('#memory .links')[1]"
    assert browser.run(f"{backlinks}.querySelector('h3').innerText") == "Backlinks (1)"
    assert browser.run(f"{backlinks}.querySelectorAll('li').length") == 1


def test_an_edit_made_elsewhere_appears_without_a_reload(
    page: str, browser: Browser, vault_dir: Path
) -> None:
    open_memory(browser, page, "stripe-webhooks")
    browser.run("window.notReloaded = true")
    note = vault_dir / "gotcha" / "stripe-webhooks.md"
    write_file(vault_dir, "gotcha/stripe-webhooks.md", note.read_text() + "\nRotate it yearly.\n")
    write_file(vault_dir, "new-from-obsidian.md", "# Written in Obsidian\n\nHello.\n")
    browser.wait_for("document.querySelector('#memory .body').innerText.includes('yearly')", WAIT)
    browser.wait_for(
        "document.querySelector('#results').innerText.includes('Written in Obsidian')", WAIT
    )
    assert browser.run("window.notReloaded") is True


def test_graph_and_overview_pages_show_the_vault(page: str, browser: Browser, shots: Path) -> None:
    ids = json.dumps(["decision", "gotcha", "notes"])
    browser.open(f"{page}/#/graph")
    browser.wait_for(
        f"{ids}.every(c => document.querySelector('svg.graph')?.textContent.includes(c))"
    )
    browser.screenshot(shots / "graph-vault.png")
    open_memory(browser, page, "payment-retries")
    browser.click("#memory .actions a")
    browser.wait_for("document.querySelectorAll('svg.graph .node').length === 2")
    assert "Stripe webhooks" in browser.run("document.querySelector('svg.graph').textContent")
    browser.screenshot(shots / "graph-memory.png")
    browser.open(f"{page}/#/overview")
    browser.wait_for("document.querySelector('.charts')")
    overview = browser.text("#page-overview")
    assert "memories\n3" in overview and "By category" in overview
    browser.screenshot(shots / "overview.png")


SECRET = "Zq9xLongSecretValue42"


def test_a_secret_in_a_note_is_shown_masked_and_the_editor_says_why(
    page: str, browser: Browser, vault_dir: Path, shots: Path
) -> None:
    write_file(
        vault_dir,
        "notes/staging-database.md",
        "---\nid: staging-db\ntitle: Staging database\n---\n"
        f"Reach the staging database with password = {SECRET} from the bastion.\n",
    )
    browser.wait_for(
        "document.querySelector('#results').innerText.includes('Staging database')", WAIT
    )
    open_memory(browser, page, "staging-db")
    assert "password = [redacted: password] from" in browser.text("#memory .body")
    assert "password on line 1" in browser.text("#secrets")
    search_for(browser, "bastion")
    assert SECRET not in browser.run("document.documentElement.outerHTML")
    browser.screenshot(shots / "memory-secret.png")
    browser.click("#memory .actions button")
    browser.wait_for("document.activeElement.id === 'editor'")
    assert "a save that keeps the marker is refused" in browser.text("#secrets")
    assert SECRET not in browser.run("document.querySelector('#editor').value")


def test_search_filters_by_time_and_property_and_shows_relevance(
    page: str, browser: Browser, vault_dir: Path
) -> None:
    # A note written by hand just now, without a stamp (its file's time is its age), beside
    # "Old deploy steps", whose frontmatter dates it to 2020 (its age, not its file's time:
    # core/ages.py).
    write_file(
        vault_dir,
        "notes/deploy-freeze.md",
        "---\nid: deploy-freeze\ntitle: Deploy freeze\nstatus: open\n---\nNo deploy on Fridays.\n",
    )
    search_for(browser, "deploy")
    browser.wait_for("document.querySelectorAll('#results li').length === 2", WAIT)
    relevance = browser.run("[...document.querySelectorAll('#results meter')].map(m => m.value)")
    assert relevance and all(0 < value <= 1 for value in relevance)
    browser.run(
        "{ const since = document.querySelector('#f-since'); since.value = '30d';"
        "since.dispatchEvent(new Event('change')) }"
    )
    browser.wait_for("document.querySelectorAll('#results li').length === 1")
    assert browser.text("#results li .title") == "Deploy freeze"
    browser.run(
        "{ const since = document.querySelector('#f-since'); since.value = 'typed';"
        "since.dispatchEvent(new Event('change')) }"
    )
    assert browser.run("document.querySelector('#since-typed').hidden") is False
    browser.run("document.querySelector('#f-where').focus()")
    browser.type("status=open")
    browser.wait_for(
        "document.querySelector('#results li .title')?.innerText === 'Deploy freeze'", WAIT
    )


def test_a_superseded_memory_links_to_what_replaced_it_and_waits_in_review(
    page: str, browser: Browser, vault_dir: Path, shots: Path
) -> None:
    write_file(
        vault_dir,
        "notes/deploy-with-ci.md",
        "---\nid: deploy-with-ci\ntitle: Deploy with CI\ncreated_by: claude-code\n"
        'supersedes: "[[old-deploy]]"\n---\nThe CI pipeline deploys on merge.\n',
    )
    note = vault_dir / "notes" / "old-deploy.md"
    write_file(
        vault_dir,
        "notes/old-deploy.md",
        note.read_text().replace("---\nDeploy", 'superseded_by: "[[deploy-with-ci]]"\n---\nDeploy'),
    )
    browser.wait_for(
        "document.querySelector('#results').innerText.includes('Deploy with CI')", WAIT
    )
    open_memory(browser, page, "old-deploy-steps-id")
    browser.wait_for("document.querySelector('#superseded')", WAIT)
    assert "replaced by Deploy with CI" in browser.text("#superseded")
    browser.screenshot(shots / "memory-superseded.png")
    browser.click("#superseded a")
    browser.wait_for("document.querySelector('#memory h2')?.innerText === 'Deploy with CI'")
    facts = browser.text("#memory .facts")
    assert "by claude-code" in facts and "Old deploy steps" in facts
    browser.open(f"{page}/#/review")
    browser.wait_for("document.querySelector('.queue li')")
    assert "Superseded (1)" in browser.text("#page-review")
    assert "replaced by deploy-with-ci" in browser.text("#page-review")
    browser.screenshot(shots / "review-superseded.png")


@contextmanager
def another_local_server() -> Iterator[tuple[str, list[str]]]:
    """Some other HTTP server on 127.0.0.1, as a person runs many: its address, and the headers
    of every request it got, each as `name: value`."""
    seen: list[str] = []

    class Recorder(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            """Keep the request's headers; answer a small page."""
            seen.extend(f"{name}: {value}" for name, value in self.headers.items())
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<title>elsewhere</title>")

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: the test reads what was sent, not a log."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_the_page_opened_by_memvault_ui_gives_other_local_servers_no_credential(
    vault_dir: Path, browser: Browser
) -> None:
    vault = VaultService.open(Settings(vault=vault_dir))
    vault.create(Draft("Payment retries", "Retries back off exponentially.\n", category="decision"))
    vault.close()
    with memvault_ui(vault_dir) as url, another_local_server() as (elsewhere, seen):
        base, credential = re.split(r"/[?#](?:key|token)=", url)
        browser.errors.clear()
        browser.open(url)
        browser.wait_for("document.querySelectorAll('#results li').length === 1")
        assert "key=" not in browser.run("location.href")
        browser.open(elsewhere)
        browser.wait_for("document.title === 'elsewhere'")
        assert seen and not [h for h in seen if h.lower().startswith("cookie")]
        assert not [h for h in seen if "memvault" in h.lower() or credential in h]
        assert browser.cookies() == []
        browser.open(f"{base}/#/m/payment-retries")
        browser.wait_for("document.querySelector('#memory h2')?.innerText === 'Payment retries'")
        assert browser.run("document.cookie") == ""
        search_for(browser, "exponentially")
        browser.click("#memory .actions button")
        browser.wait_for("document.activeElement.id === 'editor'")
        browser.type("Capped at one minute. ")
        browser.click("#save")
        browser.wait_for("document.querySelector('#memory .body')?.innerText.includes('Capped')")
        assert browser.errors == []
    assert "Capped at one minute." in (vault_dir / "decision" / "payment-retries.md").read_text()


def test_the_pages_key_opens_its_api_and_never_mcp(vault_dir: Path, browser: Browser) -> None:
    vault = VaultService.open(Settings(vault=vault_dir))
    vault.create(Draft("Payment retries", "Retries back off exponentially.\n", category="decision"))
    vault.close()
    with http_server(vault_dir, "--token", TOKEN) as (url, _process):
        base = url.removesuffix("/mcp")
        browser.open(f"{base}/?token={TOKEN}")
        browser.wait_for("document.querySelectorAll('#results li').length === 1")
        stored = browser.run("JSON.stringify({...localStorage})")
        assert TOKEN not in stored and "token" not in browser.run("location.href")
        key = browser.run("Object.values(localStorage)[0]")
        assert key and key in stored
        delete = {"name": "delete_mem", "arguments": {"id": "payment-retries"}}
        assert mcp_call(base, key, "tools/call", delete).status_code == 401
        assert (vault_dir / "decision" / "payment-retries.md").exists()
        assert mcp_call(base, TOKEN, "tools/list", {}).status_code == 200


def test_a_page_without_its_key_or_with_a_stale_one_says_which_url_to_open(
    vault_dir: Path, browser: Browser
) -> None:
    with http_server(vault_dir, "--token", TOKEN) as (url, _process):
        base = url.removesuffix("/mcp")
        browser.open(f"{base}/")
        browser.wait_for("!document.querySelector('#locked').hidden")
        assert "the URL memvault ui or memvault serve printed" in browser.text("#locked")
        browser.open(f"{base}/?token={TOKEN}")
        browser.wait_for("document.querySelector('#count').innerText")
        assert browser.run("document.querySelector('#locked').hidden") is True
        browser.run("Object.keys(localStorage).forEach(k => localStorage.setItem(k, 'stale'))")
        browser.open(f"{base}/")
        browser.wait_for("!document.querySelector('#locked').hidden")
        browser.open("about:blank")


def test_a_memorys_properties_show_their_names_and_values(
    page: str, browser: Browser, vault_dir: Path
) -> None:
    write_file(
        vault_dir,
        "notes/checkout-bug.md",
        "---\nid: checkout-bug\ntitle: Checkout bug\nstatus: open\n"
        "owners:\n  - ana\n  - bo\n---\nThe checkout fails on Sundays.\n",
    )
    browser.wait_for("document.querySelector('#results').innerText.includes('Checkout bug')", WAIT)
    open_memory(browser, page, "checkout-bug")
    facts = browser.text("#memory .facts")
    assert "status\nopen" in facts and "owners\nana, bo" in facts
    assert "[object" not in browser.text("#memory")


def test_a_link_with_a_bare_percent_sign_opens_what_it_names(
    page: str, browser: Browser, vault_dir: Path
) -> None:
    write_file(vault_dir, "promo-50%-off.md", "# Half price promo\n\nEverything at half price.\n")
    write_file(
        vault_dir,
        "notes/spring-sale.md",
        "---\nid: spring-sale\ntitle: Spring sale\n---\n"
        "The [discount](promo-50%-off.md) runs in April; [spaced](promo%2050.md) is a typo.\n",
    )
    browser.wait_for("document.querySelector('#results').innerText.includes('Spring sale')", WAIT)
    open_memory(browser, page, "spring-sale")
    assert "The discount runs in April" in browser.text("#memory .body")
    browser.click("#memory .body a.wikilink")
    browser.wait_for("document.querySelector('#memory h2')?.innerText === 'Half price promo'")
    browser.open(f"{page}/#/m/promo-50%-off")
    browser.wait_for("document.querySelector('#memory h2')?.innerText === 'Half price promo'")


CALLOUTS = (
    "> [!note]\n> Deploys run at **noon**.\n\n"
    "> [!WARNING] Mind the <img src=x onerror=window.injected=1> gap\n> Never on Fridays.\n\n"
    "> [!tip]- Folded tip\n> Hidden until opened.\n\n"
    "> [!faq]+\n> Open until folded.\n\n"
    "> [!whatever]\n> An unknown kind.\n\n"
    "> A plain quote.\n"
)


def test_obsidian_callouts_show_as_boxes_with_their_label_and_body(
    page: str, browser: Browser, vault_dir: Path, shots: Path
) -> None:
    write_file(
        vault_dir, "notes/callouts.md", "---\nid: callouts\ntitle: Callouts\n---\n" + CALLOUTS
    )
    browser.wait_for("document.querySelector('#results').innerText.includes('Callouts')", WAIT)
    open_memory(browser, page, "callouts")
    boxes = browser.run(
        "[...document.querySelectorAll('#memory .body .callout')].map(c => [c.tagName,"
        " c.className, c.querySelector('.callout-title').textContent,"
        " c.querySelector('.callout-body').textContent.trim(), c.open ?? null])"
    )
    assert boxes == [
        ["DIV", "callout callout-note", "Note", "Deploys run at noon.", None],
        [
            "DIV",
            "callout callout-warning",
            "Mind the <img src=x onerror=window.injected=1> gap",
            "Never on Fridays.",
            None,
        ],
        ["DETAILS", "callout callout-tip", "Folded tip", "Hidden until opened.", False],
        ["DETAILS", "callout callout-question", "Faq", "Open until folded.", True],
        ["DIV", "callout", "Whatever", "An unknown kind.", None],
    ]
    assert browser.text("#memory .body blockquote") == "A plain quote."
    assert browser.run("document.querySelector('#memory .callout strong').textContent") == "noon"
    assert browser.run("document.querySelector('#memory img') === null") is True
    assert browser.run("window.injected === undefined") is True
    browser.click("#memory details.callout summary")
    browser.wait_for("document.querySelector('#memory details.callout').open")
    browser.screenshot(shots / "memory-callouts.png")


BLOCK_IDS = (
    "Deploys need a green build. ^b15695\n"
    "A second line of it. ^para-2\n\n"
    "- first step\n- second step ^step-two\n\n^list-id\n\n"
    "> Quoted advice.\n\n^quote-id\n\n"
    "Powers: 2^10 is 1024, x ^ y and a^b stay, as does ^this in a line.\n\n"
    "```\necho keep ^code-id\n```\n"
)


def test_obsidian_block_ids_are_not_shown_and_other_carets_are(
    page: str, browser: Browser, vault_dir: Path
) -> None:
    write_file(vault_dir, "notes/ids.md", "---\nid: ids\ntitle: Block ids\n---\n" + BLOCK_IDS)
    browser.wait_for("document.querySelector('#results').innerText.includes('Block ids')", WAIT)
    open_memory(browser, page, "ids")
    body = browser.text("#memory .body")
    assert "Deploys need a green build.\nA second line of it." in body
    for block_id in ("b15695", "para-2", "step-two", "list-id", "quote-id"):
        assert block_id not in body
    assert browser.run(
        "[...document.querySelectorAll('#memory .body li')].map(li => li.innerText)"
    ) == [
        "first step",
        "second step",
    ]
    assert "Powers: 2^10 is 1024, x ^ y and a^b stay, as does ^this in a line." in body
    assert browser.text("#memory .body pre") == "echo keep ^code-id"


def test_a_long_review_queue_shows_a_page_and_loads_the_rest_on_asking(
    page: str, browser: Browser, vault_dir: Path, shots: Path
) -> None:
    ids = stale_notes(vault_dir, 300)
    browser.open(f"{page}/#/review")
    queue = "document.querySelector('#queue-stale')"
    browser.wait_for(f"{queue}?.querySelector('h3').innerText.includes('(301)')", WAIT)
    assert browser.run(f"{queue}.querySelectorAll('li').length") == 50
    assert browser.text("#queue-stale button.more") == "Show 50 more (251 left)"
    browser.screenshot(shots / "review-long-queue.png")
    for shown in (100, 150, 200, 250, 300, 301):
        browser.click("#queue-stale button.more")
        browser.wait_for(f"{queue}.querySelectorAll('li').length === {shown}")
    assert browser.run(f"{queue}.querySelector('button.more').hidden") is True
    titles = browser.run(f"[...{queue}.querySelectorAll('li > a')].map(a => a.innerText)")
    expected = [f"Old note {n}" for n in range(len(ids))] + ["Old deploy steps"]
    assert sorted(titles) == sorted(expected)


def test_the_pages_search_runs_as_search_mem_does_and_says_how(
    vault_dir: Path, browser: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedded_vault(vault_dir, monkeypatch)
    with http_server(vault_dir, "--token", TOKEN) as (url, _process):
        base = url.removesuffix("/mcp")
        browser.errors.clear()
        browser.open(f"{base}/?token={TOKEN}")
        browser.wait_for("document.querySelectorAll('#results li').length === 3")
        assert browser.run("document.querySelector('#f-mode').value") == ""
        vectors_loaded(base, TOKEN)
        browser.run("document.querySelector('#q').focus()")
        browser.type(PARAPHRASE)
        browser.wait_for("document.querySelector('#count').innerText.includes('meaning')", WAIT)
        assert browser.text("#count").endswith("found by words and meaning")
        assert browser.text("#results li .title") == ROLLBACK[0]
        browser.run(
            "{ const mode = document.querySelector('#f-mode'); mode.value = 'keyword';"
            "mode.dispatchEvent(new Event('change')) }"
        )
        browser.wait_for("document.querySelector('#count').innerText === 'No memories match.'")
        browser.run("document.querySelector('#q').select()")
        browser.type("ficus")
        browser.wait_for("document.querySelector('#count').innerText === '1 found by words'")
        assert browser.errors == []
        browser.open("about:blank")


def test_a_captured_session_shows_without_its_capture_marks(
    page: str, browser: Browser, vault_dir: Path, tmp_path: Path, shots: Path
) -> None:
    from memvault.features.session_capture import capture_transcript
    from tests.transcript_fixtures import flaky_login_session

    transcript = flaky_login_session(tmp_path / "t.jsonl", str(tmp_path / "shop")).write()
    vault = VaultService.open(Settings(vault=vault_dir))
    captured = capture_transcript(vault, transcript, "claude-code").memory
    vault.close()
    assert captured is not None
    browser.wait_for("document.querySelector('#results').innerText.includes('Session 2026')", WAIT)
    open_memory(browser, page, captured.id)
    body = browser.text("#memory .body")
    assert "memvault:session" not in body and "<!--" not in body
    assert body.startswith("Session in shop")
    assert "The login test fails about one run in five" in body
    assert browser.run(
        "[...document.querySelectorAll('#memory .body h3')].map(h => h.textContent)"
    ) == ["Requests", "What happened", "Dialogue"]
    browser.screenshot(shots / "memory-captured-session.png")
