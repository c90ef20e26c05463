"""The web page's server side through a real `memvault serve --transport http` process: the
token, the same-origin check on writes, the Host check, the CSP, the edit guarded by version,
and `memvault ui`."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from memvault.config import Settings
from memvault.core.drafts import Draft, WriteOptions
from memvault.service.vault import VaultService

from .conftest import patience, write_file
from .mcp_helpers import MEMVAULT, http_server, server_env

pytestmark = pytest.mark.processes

TOKEN = "s3cret-token"
OLD_FILE = 1577836800  # 2020-01-01: a note edited by hand then (its file's time)


@pytest.fixture
def base(vault_dir: Path) -> Iterator[str]:
    """A served vault with one memory, its page's address (no trailing slash)."""
    vault = VaultService.open(Settings(vault=vault_dir))
    vault.create(Draft("Payment retries", "Retries back off exponentially.\n", category="decision"))
    vault.close()
    with http_server(vault_dir, "--token", TOKEN) as (url, _process):
        yield url.removesuffix("/mcp")


@contextmanager
def signed_in(base: str) -> Iterator[httpx2.Client]:
    """A client sending the page's key, as the page does once its first URL gave it one."""
    with httpx2.Client(base_url=base, timeout=patience(30)) as client:
        client.headers["Authorization"] = f"Bearer {page_key_of(client)}"
        yield client


def page_key_of(client: httpx2.Client) -> str:
    """The page's key: where the first URL a person opens (`/?token=`) sends the browser."""
    welcome = client.get("/", params={"token": TOKEN})
    assert welcome.status_code == 303, welcome.text
    return welcome.headers["location"].removeprefix("/#key=")


def mcp_call(base: str, credential: str, method: str, params: dict[str, Any]) -> httpx2.Response:
    """One JSON-RPC request to /mcp over real HTTP with `credential` as its bearer token."""
    return httpx2.post(
        f"{base}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers={
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {credential}",
        },
        timeout=patience(30),
    )


@contextmanager
def memvault_ui(vault_dir: Path) -> Iterator[str]:
    """`memvault ui --no-browser` running; the URL it printed, once the page answers there."""
    process = subprocess.Popen(
        [*MEMVAULT, "--vault", str(vault_dir), "ui", "--no-browser"],
        env=server_env(),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        url = process.stderr.readline().split(" at ", 1)[1].strip()
        deadline = time.monotonic() + patience(30)
        while True:
            try:
                httpx2.get(url, timeout=patience(30))
                break
            except httpx2.ConnectError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=patience(10))
        if process.stderr:
            process.stderr.close()


def writes_from(base: str) -> dict[str, str]:
    """The headers the page itself sends with a write."""
    return {"Origin": base, "X-Memvault": "1"}


def test_the_api_needs_the_pages_key_or_the_token_and_the_page_itself_neither(
    base: str, vault_dir: Path
) -> None:
    with httpx2.Client(base_url=base, timeout=patience(30)) as client:
        page = client.get("/")
        assert page.status_code == 200 and "<title>memvault</title>" in page.text
        assert client.get("/assets/app.js").status_code == 200
        assert client.get("/api/search").status_code == 401
        wrong = {"Authorization": "Bearer nope"}
        assert client.get("/api/search", headers=wrong).status_code == 401
        assert client.get("/", params={"token": "wrong"}).status_code == 401
        welcome = client.get("/", params={"token": TOKEN})
        assert welcome.status_code == 303 and "set-cookie" not in welcome.headers
        assert TOKEN not in welcome.headers["location"]
        key = page_key_of(client)
        assert len(key) >= 32
        for credential in (key, TOKEN):
            answer = client.get("/api/search", headers={"Authorization": f"Bearer {credential}"})
            assert answer.json()["total"] == 1
    delete = {"name": "delete_mem", "arguments": {"id": "payment-retries"}}
    assert mcp_call(base, key, "tools/call", delete).status_code == 401
    assert (vault_dir / "decision" / "payment-retries.md").exists()
    assert mcp_call(base, TOKEN, "tools/list", {}).status_code == 200


def test_every_answer_carries_a_strict_content_security_policy(base: str) -> None:
    with signed_in(base) as client:
        for path in ("/", "/assets/app.js", "/api/search", "/assets/nothing.js"):
            policy = client.get(path).headers["content-security-policy"]
            assert "default-src 'none'" in policy and "script-src 'self'" in policy
            assert "unsafe-inline" not in policy and "http" not in policy


def test_a_write_from_another_site_is_refused_and_changes_nothing(
    base: str, vault_dir: Path
) -> None:
    note = vault_dir / "decision" / "payment-retries.md"
    before = note.read_bytes()
    with signed_in(base) as client:
        body = {"id": "payment-retries"}
        assert client.post("/api/verify", json=body).status_code == 403
        evil = {"Origin": "http://evil.example", "X-Memvault": "1"}
        assert client.post("/api/verify", json=body, headers=evil).status_code == 403
        no_header = {"Origin": base}
        assert client.post("/api/verify", json=body, headers=no_header).status_code == 403
        form = client.post("/api/verify", content="id=payment-retries", headers=writes_from(base))
        assert form.status_code == 400
        assert note.read_bytes() == before
        done = client.post("/api/verify", json=body, headers=writes_from(base))
        assert done.status_code == 200, done.text
    assert note.read_bytes() != before


def test_a_request_for_another_host_name_is_refused(base: str) -> None:
    with signed_in(base) as client:
        assert client.get("/api/search", headers={"Host": "attacker.example"}).status_code == 421


def test_an_edit_of_a_changed_file_is_refused_with_the_file_as_it_is(
    base: str, vault_dir: Path
) -> None:
    with signed_in(base) as client:
        opened = client.get("/api/memory", params={"id": "payment-retries"}).json()["memory"]
        note = vault_dir / "decision" / "payment-retries.md"
        theirs = note.read_text().replace("exponentially", "linearly")
        write_file(vault_dir, "decision/payment-retries.md", theirs)
        mine = {"id": opened["id"], "version": opened["version"], "content": "Mine.\n"}
        answer = client.post("/api/save", json=mine, headers=writes_from(base))
        assert answer.status_code == 200 and "changed since version" in answer.json()["conflict"]
        assert "linearly" in answer.json()["memory"]["content"]
        assert note.read_text() == theirs
        mine["version"] = answer.json()["memory"]["version"]
        saved = client.post("/api/save", json=mine, headers=writes_from(base))
        assert saved.status_code == 200, saved.text
    assert note.read_text().endswith("Mine.\n")


def test_bad_api_input_gets_a_one_line_error(base: str) -> None:
    with signed_in(base) as client:
        missing = client.get("/api/memory", params={"id": "no such memory"})
        assert missing.status_code == 404 and "\n" not in missing.json()["error"]
        assert client.get("/api/search", params={"limit": "many"}).status_code == 400
        wrong_mode = client.get("/api/search", params={"q": "retries", "mode": "fuzzy"})
        assert wrong_mode.json()["error"].startswith("mode must be one of hybrid, keyword")
        no_content = client.post(
            "/api/save", json={"id": "x", "version": "y"}, headers=writes_from(base)
        )
        assert no_content.json()["error"] == "content is required (text)"


def test_memvault_ui_opens_the_page_with_a_key_that_opens_the_api_and_not_mcp(
    vault_dir: Path,
) -> None:
    with memvault_ui(vault_dir) as url:
        base, _, fragment = url.partition("/#key=")
        assert base.startswith("http://127.0.0.1:") and fragment and "token" not in url
        page = httpx2.get(url, timeout=patience(30))
        assert page.status_code == 200 and "<title>memvault</title>" in page.text
        bearer = {"Authorization": f"Bearer {fragment}"}
        assert (
            httpx2.get(f"{base}/api/search", headers=bearer, timeout=patience(30)).status_code
            == 200
        )
        assert mcp_call(base, fragment, "tools/list", {}).status_code == 401


def test_searching_on_the_page_does_not_count_as_a_use(base: str) -> None:
    with signed_in(base) as client:
        for prefix in ("r", "re", "ret", "retries"):
            client.get("/api/search", params={"q": prefix})
        usage = client.get("/api/memory", params={"id": "payment-retries"}).json()["usage"]
        assert usage["access_count"] == 0


def test_link_archive_and_delete_through_the_api(base: str, vault_dir: Path) -> None:
    with signed_in(base) as client:
        post = {"headers": writes_from(base)}
        new = {"title": "Backoff numbers", "content": "Base 2 s, cap 60 s.\n"}
        write_file(vault_dir, "backoff-numbers.md", f"# {new['title']}\n\n{new['content']}")
        client.get("/api/search", params={"q": "backoff"})
        linked = client.post(
            "/api/link", json={"source": "payment-retries", "target": "backoff-numbers"}, **post
        )
        assert linked.json()["changed"] is True
        assert "[[backoff-numbers" in (vault_dir / "decision" / "payment-retries.md").read_text()
        archived = client.post("/api/archive", json={"id": "backoff-numbers"}, **post).json()
        assert archived["memory"]["path"] == "archive/backoff-numbers.md"
        assert client.get("/api/search", params={"q": "cap"}).json()["total"] == 0
        gone = client.post("/api/delete", json={"id": "payment-retries"}, **post).json()
        assert gone["deleted"] == "decision/payment-retries.md"
        assert gone["changed"] == ["archive/backoff-numbers.md"]
    assert not (vault_dir / "decision" / "payment-retries.md").exists()


SECRET = "Zq9xLongSecretValue42"
TOKEN_VALUE = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def hand_made_secret_note(vault_dir: Path) -> Path:
    """A note written by hand in Obsidian that holds secrets (the service would refuse them)."""
    return write_file(
        vault_dir,
        "notes/staging-database.md",
        f"---\nid: staging-db\ntitle: Staging database\ndeploy_token: {TOKEN_VALUE}\n---\n"
        f"The staging database is reached with password = {SECRET} from the bastion host.\n",
    )


@contextmanager
def serving(vault_dir: Path) -> Iterator[str]:
    """The vault as it is served over HTTP, its page's address (files written before it
    starts are indexed when it opens)."""
    with http_server(vault_dir, "--token", TOKEN) as (url, _process):
        yield url.removesuffix("/mcp")


def test_no_answer_of_the_page_shows_a_detected_secret_unmasked(vault_dir: Path) -> None:
    hand_made_secret_note(vault_dir)
    with serving(vault_dir) as base, signed_in(base) as client:
        answers = [
            client.get("/api/search", params={"q": "staging bastion"}),
            client.get("/api/search"),
            client.get("/api/memory", params={"id": "staging-db"}),
            client.get("/api/review"),
            client.get("/api/graph", params={"id": "staging-db"}),
        ]
        for answer in answers:
            assert answer.status_code == 200, answer.text
            assert SECRET not in answer.text and TOKEN_VALUE not in answer.text
        read = answers[2].json()["memory"]
        assert "password = [redacted: password] from" in read["content"]
        assert read["properties"]["deploy_token"] == "[redacted: GitHub token]"
        assert read["secrets"] == "password on line 1"
        assert read["id"] == "staging-db" and read["path"] == "notes/staging-database.md"


def test_a_snippet_that_cuts_a_secret_shows_no_piece_of_it(vault_dir: Path) -> None:
    filler = " ".join(f"word{n}" for n in range(40))
    birds = " ".join(f"bird{n}" for n in range(13))
    write_file(
        vault_dir,
        "notes/cut.md",
        f"# Cut secret\n\n{filler} api_key = Zq9x-{SECRET} {birds} harrier.\n",
    )
    with serving(vault_dir) as base, signed_in(base) as client:
        hits = client.get("/api/search", params={"q": "harrier"}).json()["results"]
    snippet = hits[0]["snippet"]
    assert snippet.startswith("…[redacted: secret] bird0") and "**harrier**" in snippet
    assert "Zq9x" not in snippet


def test_a_save_keeping_the_redaction_marker_over_a_secret_is_refused(vault_dir: Path) -> None:
    note = hand_made_secret_note(vault_dir)
    before = note.read_bytes()
    with serving(vault_dir) as base, signed_in(base) as client:
        opened = client.get("/api/memory", params={"id": "staging-db"}).json()["memory"]
        typo_fixed = opened["content"].replace("bastion host", "bastion")
        body = {"id": "staging-db", "version": opened["version"], "content": typo_fixed}
        refused = client.post("/api/save", json=body, headers=writes_from(base))
        assert refused.status_code == 400
        error = refused.json()["error"]
        assert error.startswith(
            "Invalid: not saved: this memory holds a secret (password on line 1)"
        )
        assert "notes/staging-database.md" in error and "\n" not in error
        assert note.read_bytes() == before
        body["content"] = "The staging database password is in the team's password manager.\n"
        saved = client.post("/api/save", json=body, headers=writes_from(base))
        assert saved.status_code == 200, saved.text
    assert SECRET not in note.read_text() and "password manager" in note.read_text()


def test_search_takes_search_mems_time_and_property_filters(vault_dir: Path) -> None:
    vault = VaultService.open(Settings(vault=vault_dir))
    vault.create(Draft("Payment retries", "Retries back off exponentially.\n", category="decision"))
    vault.close()
    old = write_file(
        vault_dir,
        "notes/old-retries.md",
        "---\nid: old-retries\ntitle: Old retries\nstatus: open\n"
        "created_at: 2020-01-01T00:00:00Z\nupdated_at: 2020-01-01T00:00:00Z\n---\n"
        "Retries were linear once.\n",
    )
    os.utime(old, (OLD_FILE, OLD_FILE))
    with serving(vault_dir) as base, signed_in(base) as client:

        def found(**params: str) -> list[str]:
            """The ids a search with these parameters finds."""
            answer = client.get("/api/search", params={"q": "retries", **params})
            assert answer.status_code == 200, answer.text
            return sorted(hit["title"] for hit in answer.json()["results"])

        assert found() == ["Old retries", "Payment retries"]
        assert found(since="30d") == ["Payment retries"]
        assert found(until="2021-01-01") == ["Old retries"]
        assert found(where="status=open") == ["Old retries"]
        hits = client.get("/api/search", params={"q": "retries"}).json()["results"]
        assert all(0 < hit["relevance"] <= 1 for hit in hits)
        bad_where = client.get("/api/search", params={"q": "x", "where": "status"})
        assert bad_where.status_code == 400
        assert bad_where.json()["error"].startswith("where takes key=value pairs")
        bad_since = client.get("/api/search", params={"q": "x", "since": "the other day"})
        assert bad_since.status_code == 400 and "\n" not in bad_since.json()["error"]


def test_a_memory_shows_who_wrote_it_and_what_superseded_it(vault_dir: Path) -> None:
    vault = VaultService.open(Settings(vault=vault_dir))
    old = vault.create(
        Draft("Deploy with rsync", "Deploy by hand with rsync.\n"),
        WriteOptions(agent="claude-code"),
    )
    new = vault.create(Draft("Deploy with CI", "The CI pipeline deploys.\n", supersedes=old.id))
    vault.close()
    with serving(vault_dir) as base, signed_in(base) as client:
        read = client.get("/api/memory", params={"id": old.id}).json()
        review = client.get("/api/review").json()
        newer = client.get("/api/memory", params={"id": new.id}).json()
    assert read["memory"]["created_by"] == "claude-code"
    assert [end["id"] for end in read["superseded_by"]] == [new.id]
    assert [end["title"] for end in newer["supersedes"]] == ["Deploy with rsync"]
    assert "supersedes" not in newer["memory"]["properties"]
    assert review["superseded"]["count"] == 1
    assert review["superseded"]["items"][0]["id"] == old.id


def test_the_page_and_read_json_describe_a_memory_alike(vault_dir: Path) -> None:
    """One description of a memory: every field the page shows that read_mem shows too has
    the same value (properties and who wrote it included), as the CLI's --json prints it."""
    vault = VaultService.open(Settings(vault=vault_dir))
    vault.create(
        Draft(
            "Queue sizing",
            "Keep the queue under 500.\n",
            ["ops"],
            "decision",
            scope="shop",
            expires_at="2099-01-01",
            properties={"owner": "ana", "status": "open"},
        ),
        WriteOptions(agent="claude-code"),
    )
    vault.close()
    done = subprocess.run(
        [*MEMVAULT, "--vault", str(vault_dir), "read", "queue-sizing", "--json"],
        capture_output=True,
        text=True,
        env=server_env(),
        check=True,
    )
    read = json.loads(done.stdout)
    with serving(vault_dir) as base, signed_in(base) as client:
        page = client.get("/api/memory", params={"id": "queue-sizing"}).json()["memory"]
    shared = sorted(set(read) & set(page))
    assert {"content", "properties", "created_by", "scope", "version", "expires_at"} <= set(shared)
    assert {key: page[key] for key in shared} == {key: read[key] for key in shared}
    assert page["properties"] == {"owner": "ana", "status": "open"}


def test_the_review_takes_the_stale_threshold_from_the_vaults_policies(vault_dir: Path) -> None:
    write_file(vault_dir, ".memvault/policies.toml", "stale_days = 10\n")
    recent = "2026-01-01T00:00:00Z"
    write_file(
        vault_dir,
        "notes/checked.md",
        f"---\nid: checked\ntitle: Checked a while ago\nlast_reviewed: {recent}\n"
        f"created_at: {recent}\nupdated_at: {recent}\n---\nStill true.\n",
    )
    write_file(vault_dir, "notes/undated.md", "# Written today by hand\n\nNo dates in it.\n")
    with serving(vault_dir) as base, signed_in(base) as client:
        review = client.get("/api/review").json()
        asked = client.get("/api/review", params={"days": "100000"}).json()
    assert review["days"] == 10
    assert [item["id"] for item in review["stale"]["items"]] == ["checked"]
    assert asked["stale"]["count"] == 0


def stale_notes(vault_dir: Path, count: int) -> list[str]:
    """`count` hand-made notes last reviewed years ago, a minute apart, written straight into
    the vault; their ids, the longest unreviewed first."""
    ids = []
    for n in range(count):
        stamp = f"2020-01-{1 + n // 1440:02}T{n // 60 % 24:02}:{n % 60:02}:00Z"
        ids.append(f"old-{n:04}")
        write_file(
            vault_dir,
            f"old/note-{n:04}.md",
            f"---\nid: old-{n:04}\ntitle: Old note {n}\ncreated_at: {stamp}\nupdated_at: {stamp}\n"
            f"last_reviewed: {stamp}\n---\nChecked once, long ago.\n",
        )
    return ids


def test_the_review_comes_a_page_at_a_time_and_its_pages_hold_every_row_once(
    vault_dir: Path,
) -> None:
    ids = stale_notes(vault_dir, 120)
    broken = "".join(f"See [[missing-{n}]].\n" for n in range(60))
    write_file(vault_dir, "links.md", f"---\nid: links\ntitle: Links\n---\n{broken}")
    with serving(vault_dir) as base, signed_in(base) as client:
        first = client.get("/api/review").json()
        stale, problems = first["stale"], first["problems"]
        assert (stale["count"], stale["offset"], len(stale["items"])) == (120, 0, 50)
        assert (first["unused"]["count"], len(first["unused"]["items"])) == (121, 50)
        assert (problems["count"], len(problems["items"])) == (60, 50)
        seen = [item["id"] for item in stale["items"]]
        while len(seen) < len(ids):
            page = client.get("/api/review", params={"queue": "stale", "offset": len(seen)})
            assert page.status_code == 200, page.text
            rows = page.json()
            assert (rows["queue"], rows["count"], rows["offset"]) == ("stale", 120, len(seen))
            assert rows["items"], rows
            seen += [item["id"] for item in rows["items"]]
        assert seen == ids
        rest = client.get("/api/review", params={"queue": "problems", "offset": 50}).json()
        assert len(rest["items"]) == 10
        assert len(set(problems["items"] + rest["items"])) == 60
        assert all(line.startswith("broken link: links.md → missing-") for line in rest["items"])
        past = client.get("/api/review", params={"queue": "stale", "offset": 500}).json()
        assert (past["count"], past["items"]) == (120, [])
        wrong = client.get("/api/review", params={"queue": "everything"})
        assert wrong.status_code == 400 and "queue must be one of stale" in wrong.json()["error"]


ROLLBACK = (
    "Rolling back a deployment",
    "When a release breaks production, redeploy the previous build from the CI pipeline.\n",
)
# Shares no word with ROLLBACK: only its meaning finds it.
PARAPHRASE = "the site stopped working after we shipped; how to return to the older version"


def embedded_vault(vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A few memories, embedded with the default model, which the servers started next use."""
    monkeypatch.delenv("MEMVAULT_EMBED_MODEL", raising=False)
    vault = VaultService.open(Settings(vault=vault_dir, embed_model=None))
    vault.create(Draft(*ROLLBACK, category="ops"))
    vault.create(Draft("Office plants", "Water the ficus every Monday; the cactus monthly.\n"))
    vault.create(Draft("Team lunch", "Thursday lunch is at the Thai place near the station.\n"))
    vault.embed()
    vault.close()


def search_mem(base: str, query: str, token: str = TOKEN) -> dict[str, Any]:
    """search_mem's structured answer over the server's /mcp, as an assistant gets it."""
    call = {"name": "search_mem", "arguments": {"query": query, "limit": 20}}
    answer = mcp_call(base, token, "tools/call", call)
    assert answer.status_code == 200, answer.text
    return dict(answer.json()["result"]["structuredContent"])


def vectors_loaded(base: str, token: str = TOKEN) -> dict[str, Any]:
    """search_mem's answer to PARAPHRASE once the server has loaded its vectors (it loads them
    in the background as it starts; until then a search without a mode is by words)."""
    deadline = time.monotonic() + patience(60)
    while (answer := search_mem(base, PARAPHRASE, token))["mode"] != "hybrid":
        assert time.monotonic() < deadline, "the server never loaded its vectors"
        time.sleep(0.2)
    return answer


def test_a_search_without_a_mode_finds_what_search_mem_does_and_says_which_mode_ran(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedded_vault(vault_dir, monkeypatch)
    with serving(vault_dir) as base, signed_in(base) as client:
        assistant = vectors_loaded(base)
        page = client.get("/api/search", params={"q": PARAPHRASE, "limit": "20"}).json()
        words = client.get("/api/search", params={"q": "ficus", "mode": "keyword"}).json()
    assert page["mode"] == "hybrid" and page["results"]
    assert page["results"][0]["title"] == ROLLBACK[0]
    assert [hit["id"] for hit in page["results"]] == [hit["id"] for hit in assistant["results"]]
    assert page["total"] == assistant["total"]
    assert words["mode"] == "keyword" and [h["title"] for h in words["results"]] == [
        "Office plants"
    ]
