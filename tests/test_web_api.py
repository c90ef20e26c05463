"""The web page's server side through a real `memvault serve --transport http` process: the
token, the same-origin check on writes, the Host check, the CSP, the edit guarded by version,
and `memvault ui`."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

from memvault.config import Settings
from memvault.vault import VaultService

from .conftest import write_file
from .mcp_helpers import MEMVAULT, http_server, server_env

TOKEN = "s3cret-token"


@pytest.fixture
def base(vault_dir: Path) -> Iterator[str]:
    """A served vault with one memory, its page's address (no trailing slash)."""
    vault = VaultService.open(Settings(vault=vault_dir))
    vault.create("Payment retries", "Retries back off exponentially.\n", category="decision")
    vault.close()
    with http_server(vault_dir, "--token", TOKEN) as (url, _process):
        yield url.removesuffix("/mcp")


@contextmanager
def signed_in(base: str) -> Iterator[httpx2.Client]:
    """A client holding the page's cookie, as a browser does after the first URL."""
    with httpx2.Client(base_url=base, timeout=30) as client:
        assert client.get("/", params={"token": TOKEN}).status_code == 303
        yield client


def writes_from(base: str) -> dict[str, str]:
    """The headers the page itself sends with a write."""
    return {"Origin": base, "X-Memvault": "1"}


def test_the_page_and_its_api_need_the_token(base: str) -> None:
    with httpx2.Client(base_url=base, timeout=30) as client:
        assert client.get("/").status_code == 401
        assert client.get("/api/search").status_code == 401
        assert client.get("/", params={"token": "wrong"}).status_code == 401
        welcome = client.get("/", params={"token": TOKEN})
        cookie = welcome.headers["set-cookie"].lower()
        assert welcome.status_code == 303 and welcome.headers["location"] == "/"
        assert "httponly" in cookie and "samesite=strict" in cookie
        page = client.get("/")
        assert page.status_code == 200 and "<title>memvault</title>" in page.text
        bearer = httpx2.get(
            f"{base}/api/search", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
        )
        assert bearer.json()["total"] == 1


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
        assert "linearly" in answer.json()["memory"]["body"]
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


def test_memvault_ui_serves_the_page_at_a_url_with_a_fresh_token(vault_dir: Path) -> None:
    process = subprocess.Popen(
        [*MEMVAULT, "--vault", str(vault_dir), "ui", "--no-browser"],
        env=server_env(),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        url = first.split(" at ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:") and "?token=" in url
        page = None
        deadline = time.monotonic() + 30
        while page is None and time.monotonic() < deadline:
            try:
                page = httpx2.get(url, follow_redirects=True, timeout=30)
            except httpx2.ConnectError:
                time.sleep(0.1)
        assert page is not None and page.status_code == 200
        assert "<title>memvault</title>" in page.text
    finally:
        process.terminate()
        process.wait(timeout=10)


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
