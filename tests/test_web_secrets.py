"""The page never shows a secret the vault holds, through a real `memvault serve --transport
http` process: not in frontmatter properties, not in a snippet whose highlight marks split a
token or whose cut left out a secret's context, not in a name (id, path, link end, graph node),
and a memory whose name holds one still opens (the API hands out a handle for it)."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from .conftest import write_file
from .test_web_api import serving, signed_in, writes_from

pytestmark = pytest.mark.processes

GITHUB = "ghp_" + "Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9b"
NAMED = "ghp_" + "M4nB6vC8xZ0lK2jH4gF6dS8aP0oI2uY4tR6e"
# Its signature holds a word a search finds: the highlight marks fall inside the token.
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZXBsb3kifQ.Xq3vN8bKz2-osprey_LmP5wRt7YcJd4HsF9gUe6Ao"
AWS_IN_BODY = "wJa1rXUtnFEMI/K7MDENG/bPxRfiCYzq8Xk3Lm9Q"
AWS_IN_FRONTMATTER = "Ab3dEf6hIj9kLm2oPq5sTu8wXy1zAb4dEf7hIj0k"
PASSWORD = "Vx7#pLm2Qr9!zT"
STRIPE = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
SECRETS = (GITHUB, NAMED, JWT, AWS_IN_BODY, AWS_IN_FRONTMATTER, PASSWORD, STRIPE)
PIECE = 8


def words(stem: str, count: int) -> str:
    """`stem0 stem1 ...`: filler that puts a secret where a snippet cuts it."""
    return " ".join(f"{stem}{n}" for n in range(count))


def hand_made_notes(vault_dir: Path) -> None:
    """Notes written by hand in Obsidian holding secrets the service would have refused: in
    frontmatter, in bodies where snippets cut them, in a file name, in an id and in links."""
    write_file(
        vault_dir,
        "notes/deploy-keys.md",
        f'---\nid: deploy-keys\ntitle: Deploy keys\npassword: "{PASSWORD}"\n'
        f"aws_secret_access_key: {AWS_IN_FRONTMATTER}\n---\n"
        f"{words('word', 30)} The bot pushes with {GITHUB} as its token for the mirror.\n\n"
        f"Its credentials are kept in [[{NAMED}]].\n\n"
        f"{words('wren', 30)} aws_secret_access_key = {AWS_IN_BODY} {words('bird', 11)} kestrel.\n",
    )
    write_file(
        vault_dir,
        "notes/session.md",
        f"# Session\n\n{words('lark', 30)} The session carries {JWT} {words('owl', 30)}.\n",
    )
    write_file(vault_dir, f"notes/{NAMED}.md", "The mirror's credentials, kept by hand. heron.\n")
    write_file(
        vault_dir,
        "notes/billing.md",
        f"---\nid: billing-{STRIPE}\ntitle: Billing webhook\nsuperseded_by: '[[{NAMED}]]'\n---\n"
        "Billing retries the webhook. See [[deploy-keys]].\n",
    )


def pieces_shown(text: str) -> list[str]:
    """Every secret of which `text` shows a piece of PIECE characters or more."""
    return [
        secret
        for secret in SECRETS
        if any(secret[n : n + PIECE] in text for n in range(len(secret) - PIECE + 1))
    ]


def test_no_answer_shows_a_secret_or_a_piece_of_one_and_each_memory_still_opens(
    vault_dir: Path,
) -> None:
    hand_made_notes(vault_dir)
    with serving(vault_dir) as base, signed_in(base) as client:

        def read(path: str, **params: str) -> httpx2.Response:
            """A GET of the API, answered 200 and showing no piece of any secret."""
            answer = client.get(path, params=params)
            assert answer.status_code == 200, answer.text
            assert pieces_shown(answer.text) == [], (path, params, answer.text)
            return answer

        snippets: dict[str, str] = {}
        ids: dict[str, str] = {}
        for query in ("ghp", "mirror", "osprey", "kestrel", "heron", "credentials"):
            for hit in read("/api/search", q=query).json()["results"]:
                snippets[query] = snippets.get(query) or hit["snippet"]
                ids[hit["title"]] = hit["id"]
        read("/api/search")
        assert snippets["ghp"] == "[redacted: GitHub token]"
        assert snippets["kestrel"].startswith("…key = [redacted: AWS secret key] bird0")
        assert snippets["kestrel"].endswith("**kestrel**.")
        assert "The session carries [redacted: JWT] owl0" in snippets["osprey"]

        review = read("/api/review").json()
        [superseded] = review["superseded"]["items"]
        ids[superseded["title"]] = superseded["id"]
        named = "[redacted: GitHub token]"
        assert set(ids) == {"Deploy keys", "Session", named, "Billing webhook"}
        assert ids["Billing webhook"].startswith("redacted-")
        for title, identifier in ids.items():
            opened = read("/api/memory", id=identifier).json()["memory"]
            assert (opened["id"], opened["title"]) == (identifier, title)
            read("/api/graph", id=identifier, depth="2")
        deploy = read("/api/memory", id="deploy-keys").json()
        assert deploy["memory"]["properties"]["password"] == "[redacted: password]"
        assert deploy["memory"]["properties"]["aws_secret_access_key"] == (
            "[redacted: AWS secret key]"
        )
        [link] = deploy["outgoing"]
        assert link["target_id"] == ids[named] and link["target"] == f"notes/{named}.md"
        assert read("/api/memory", id=link["target_id"]).json()["memory"]["title"] == named

        replacement = superseded["superseded_by"].removeprefix("[[").removesuffix("]]")
        assert read("/api/memory", id=replacement).json()["memory"]["title"] == named
        read("/api/overview")
        read("/api/graph")
        read("/api/changes")

        verified = client.post(
            "/api/verify", json={"id": ids["Billing webhook"]}, headers=writes_from(base)
        )
        assert verified.status_code == 200, verified.text
        assert pieces_shown(verified.text) == []
        missing = client.get("/api/memory", params={"id": NAMED + "7"})
        assert missing.status_code == 404 and "did you mean" in missing.text
        assert pieces_shown(missing.text) == []
    assert "last_reviewed" in (vault_dir / "notes" / "billing.md").read_text()
