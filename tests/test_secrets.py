"""Secrets never land in plain files by accident: writes, edits, session notes and imports
refuse them (or redact them when asked), `check --secrets` finds them in files already there,
and the briefing never shows one; through the service, the CLI and a real MCP session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memvault.cli import main
from memvault.config import Settings
from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.core.secrets import find_secrets, found_under
from memvault.errors import Invalid
from memvault.features.briefing import build_briefing
from memvault.features.export_import import import_records
from memvault.features.session_notes import SessionFields, save_session_notes
from memvault.service.vault import VaultService

from .conftest import write_file
from .mcp_helpers import stdio_session, structured, tool_error

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
OPENAI_KEY = "sk-proj-Xq7fT2vL9mK4pR8sW1nB6cY3dH5gJ0aZuE2iO7tQ"
RSA_BODY = (
    "MIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnH\n"
    "lWu2/a1gB9JW5TBQ+AVpum9Okx7KfqkfBKL9mcHgSVhwvmdRK3zCDm3N0XOBbkNC\n"
)
RSA_KEY = f"-----BEGIN RSA PRIVATE KEY-----\n{RSA_BODY}-----END RSA PRIVATE KEY-----"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
GITHUB_TOKEN = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngXy9Zq8Wv7U"
STRIPE_KEY = "sk_live_51HqLyjWDarjtT1zdp7dcXYZab"
PASSWORD = "Tr0ub4dor&3"

# (text holding a secret, the secret, the kind named, its line)
SECRETS = [
    (f"Deploy user\naws_access_key_id = {AWS_KEY}\n", AWS_KEY, "AWS access key", 2),
    (f"aws_secret_access_key: {AWS_SECRET}\n", AWS_SECRET, "AWS secret key", 1),
    (f"The bot uses {OPENAI_KEY} for summaries.\n", OPENAI_KEY, "OpenAI API key", 1),
    (f"Server key:\n\n{RSA_KEY}\n", RSA_BODY.split()[0], "private key", 3),
    (f"curl -H 'Authorization: Bearer {JWT}'\n", JWT, "JWT", 1),
    (f"CI pushes with {GITHUB_TOKEN}\n", GITHUB_TOKEN, "GitHub token", 1),
    (f"Billing: {STRIPE_KEY}\n", STRIPE_KEY, "Stripe key", 1),
    (f"Staging DB\n- user: app\n- password: {PASSWORD}\n", PASSWORD, "password", 3),
    (
        "DATABASE_URL=postgres://shop:s3cr3t-Pa55@db.internal:5432/shop\n",
        "s3cr3t-Pa55",
        "password in a connection string",
        1,
    ),
]

NEAR_MISSES = [
    "Fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b (see git log).",
    "The order id is 550e8400-e29b-41d4-a716-446655440000 in the support ticket.",
    "Logo: ![logo](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
    "2mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    "password: ${DB_PASSWORD} from the environment; token = os.environ['GH_TOKEN']",
    "The password is in 1Password under 'staging db'; password: see the team vault.",
    "max_tokens = 2000, token_count: 12345678, secret: true, api_key: <your key>",
    "postgres://app:${PGPASSWORD}@db.internal/shop and the sk-learn-tutorial-for-beginners page",
]


@pytest.mark.parametrize(("text", "secret", "kind", "line"), SECRETS)
def test_a_secret_is_refused_naming_its_kind_and_line(
    vault: VaultService, vault_dir: Path, text: str, secret: str, kind: str, line: int
) -> None:
    with pytest.raises(Invalid) as refused:
        vault.create(Draft("Staging access", text))
    message = str(refused.value)
    assert f"{kind} on line {line}" in message
    assert secret not in message and 'secrets="redact"' in message
    assert not list(vault_dir.rglob("*.md"))


@pytest.mark.parametrize(("text", "secret", "kind", "line"), SECRETS)
def test_redact_stores_the_memory_with_each_secret_replaced(
    vault: VaultService, vault_dir: Path, text: str, secret: str, kind: str, line: int
) -> None:
    memory = vault.create(Draft("Staging access", text), WriteOptions(secrets="redact"))
    stored = (vault_dir / memory.path).read_text()
    assert secret not in stored
    assert f"[redacted: {kind}]" in memory.body.splitlines()[line - 1]
    assert vault.search("redacted").total == 1


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_stored_as_they_are(vault: VaultService, text: str) -> None:
    assert vault.create(Draft("Near miss", text)).body == text + "\n"


def test_edits_titles_session_notes_and_properties_are_screened_too(
    vault: VaultService, vault_dir: Path
) -> None:
    memory = vault.create(Draft("Staging", "The staging box."))
    with pytest.raises(Invalid, match="append holds a secret"):
        vault.update(memory.id, Revision(edit=BodyEdit(append=f"key {AWS_KEY}")))
    with pytest.raises(Invalid, match="the title holds a secret"):
        vault.update(memory.id, Revision(title=f"Key {GITHUB_TOKEN}"))
    with pytest.raises(Invalid, match="replace holds a secret"):
        vault.update(memory.id, Revision(edit=BodyEdit(find="box", replace=f"box {JWT}")))
    assert vault.get(memory.id).body == "The staging box.\n"
    edited = vault.update(
        memory.id, Revision(edit=BodyEdit(append=f"key {AWS_KEY}")), WriteOptions(secrets="redact")
    )
    assert edited.body == "The staging box.\n\nkey [redacted: AWS access key]\n"
    with pytest.raises(Invalid, match="password on line 1"):
        save_session_notes(vault, SessionFields(f"Rotated it; password={PASSWORD}"))
    with pytest.raises(Invalid, match="property token holds a secret"):
        save_session_notes(vault, SessionFields("Rotated keys.", properties={"token": JWT}))
    assert [p.name for p in vault_dir.rglob("*.md")] == ["staging.md"]


def test_an_import_refuses_a_record_with_a_secret_unless_redacted(vault: VaultService) -> None:
    record = {
        "id": "11111111-1111-4111-8111-111111111111",
        "title": "Old staging notes",
        "content": f"ssh in with\n{RSA_KEY}\n",
        "frontmatter": {"aws": AWS_KEY},
    }
    report = import_records(vault, [record])
    assert report.created == []
    assert "private key on line 2" in report.conflicts[0]["reason"]
    assert RSA_BODY.split()[0] not in report.conflicts[0]["reason"]
    report = import_records(vault, [record], "redact")
    text = vault.file_text(record["id"])
    assert report.created and AWS_KEY not in text and RSA_BODY.split()[0] not in text
    assert "[redacted: private key]" in text and "aws: '[redacted: AWS access key]'" in text


def test_check_secrets_reports_files_without_printing_them(vault_dir: Path) -> None:
    write_file(vault_dir, "ops/staging.md", f"# Staging\n\nThe key is {AWS_KEY}.\n")
    write_file(vault_dir, "ops/clean.md", "# Clean\n\nNothing to hide.\n")
    runner = CliRunner()
    plain = runner.invoke(main, ["--vault", str(vault_dir), "check"])
    assert plain.exit_code == 0, plain.output
    found = runner.invoke(main, ["--vault", str(vault_dir), "check", "--secrets"])
    assert found.exit_code == 1
    assert "secret: ops/staging.md:3: AWS access key" in found.output
    assert AWS_KEY not in found.output
    as_json = runner.invoke(main, ["--vault", str(vault_dir), "check", "--secrets", "--json"])
    assert json.loads(as_json.output)["secrets"] == [
        {"path": "ops/staging.md", "kind": "AWS access key", "line": 3}
    ]


# Frontmatter properties that only their key makes secrets of: (key, value, kind).
KEYED = [
    ("password", PASSWORD, "password"),
    ("aws_secret_access_key", AWS_SECRET, "AWS secret key"),
    ("api_key", "Zq9x-Long42value", "secret"),
]


def test_a_property_read_with_its_key_holds_the_secrets_check_finds_on_its_line(
    vault: VaultService, vault_dir: Path
) -> None:
    lines = "".join(f"{key}: {value}\n" for key, value, _kind in KEYED)
    write_file(vault_dir, "ops/keys.md", f"---\ntitle: Keys\n{lines}---\nIn the properties.\n")
    checked = vault.upkeep.check(secrets=True).secrets
    assert [(s.kind, s.line) for s in checked] == [(k, n + 3) for n, (*_, k) in enumerate(KEYED)]
    for key, value, kind in KEYED:
        assert find_secrets(value) == []
        assert [(s.kind, value[s.start : s.end]) for s in found_under(key, value)] == [
            (kind, value)
        ]
        assert found_under("note", value) == []


def test_the_briefing_never_prints_a_secret_a_file_holds(vault_dir: Path) -> None:
    write_file(vault_dir, "gotcha/deploy.md", f"password: {PASSWORD} for the deploy user\n")
    write_file(vault_dir, "ops/ci.md", f"CI token {GITHUB_TOKEN} lives here\n")
    write_file(vault_dir, "ops/bot.md", f"---\ntitle: Bot key {OPENAI_KEY}\n---\nThe bot.\n")
    vault = VaultService.open(Settings(vault=vault_dir))
    try:
        briefing = build_briefing(vault)
    finally:
        vault.close()
    text = briefing.text
    assert "Bot key [redacted: OpenAI API key]" in [item.title for item in briefing.items]
    assert not any(OPENAI_KEY in item.line for item in briefing.items)
    assert "- deploy (gotcha/deploy, " in text and "- ci (ops/ci, " in text
    assert PASSWORD not in text and GITHUB_TOKEN not in text
    assert "[redacted: password]" in text and "[redacted: GitHub token]" in text


def test_the_cli_refuses_then_redacts(vault_dir: Path) -> None:
    runner = CliRunner()
    args = ["--vault", str(vault_dir), "write", "--title", "Bot key", f"key {OPENAI_KEY}"]
    refused = runner.invoke(main, args)
    assert refused.exit_code == 1
    assert "OpenAI API key on line 1" in refused.output and OPENAI_KEY not in refused.output
    # in the CLI's words only (the tools' say secrets="redact")
    assert "or pass --secrets redact to store it" in refused.output
    assert "secrets=" not in refused.output
    saved = runner.invoke(main, [*args[:3], "--secrets", "redact", *args[3:]])
    assert saved.exit_code == 0, saved.output
    assert "[redacted: OpenAI API key]" in (vault_dir / "bot-key.md").read_text()


def test_cli_edit_session_notes_and_import_take_secrets(vault_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str]:
        """A memvault command on the vault: its exit code and output (stderr included)."""
        result = runner.invoke(main, ["--vault", str(vault_dir), *args])
        return result.exit_code, result.output

    assert run("write", "--title", "Staging", "The staging box.")[0] == 0
    code, out = run("edit", "staging", "--append", f"key {AWS_KEY}")
    assert code == 1 and "--append holds a secret (AWS access key on line 1)" in out
    assert run("edit", "staging", "--append", f"key {AWS_KEY}", "--secrets", "redact")[0] == 0
    assert "key [redacted: AWS access key]" in (vault_dir / "staging.md").read_text()
    notes = ["session-notes", "--summary", "Rotated keys.", "--decision", f"use {JWT}"]
    code, out = run(*notes)
    assert code == 1 and "decisions item 1 holds a secret (JWT on line 1)" in out
    code, out = run(*notes, "--secrets", "redact", "--json")
    assert code == 0, out
    assert "use [redacted: JWT]" in (vault_dir / json.loads(out)["path"]).read_text()
    record = {"id": "22222222-2222-4222-8222-222222222222", "title": "Old", "content": JWT}
    export = tmp_path / "export.jsonl"
    export.write_text(json.dumps(record) + "\n")
    code, out = run("import", str(export))
    assert code == 1 and "JWT on line 1" in out and JWT not in out
    assert "--secrets redact" in out and "secrets=" not in out
    code, out = run("import", str(export), "--secrets", "redact")
    assert code == 0 and out.startswith("created 1")
    assert JWT not in "".join(p.read_text() for p in vault_dir.rglob("*.md"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.processes
@pytest.mark.anyio
async def test_d_a_secret_is_refused_then_redacted_through_mcp(vault_dir: Path) -> None:
    content = f"Deploy user for staging.\naws_access_key_id = {AWS_KEY}\npassword: {PASSWORD}\n"
    async with stdio_session(vault_dir) as session:
        args = {"title": "Staging deploy user", "content": content, "category": "account-info"}
        refused = await tool_error(session, "write_mem", args)
        assert "AWS access key on line 2, password on line 3" in refused
        assert AWS_KEY not in refused and PASSWORD not in refused
        assert 'or pass secrets="redact" to store it' in refused and "--secrets" not in refused
        written = structured(await session.call_tool("write_mem", {**args, "secrets": "redact"}))
        read = structured(await session.call_tool("read_mem", {"identifier": written["id"]}))
        assert read["content"] == (
            "Deploy user for staging.\naws_access_key_id = [redacted: AWS access key]\n"
            "password: [redacted: password]\n"
        )
        edit = {"id": written["id"], "append": f"Bot: {OPENAI_KEY}"}
        assert "OpenAI API key" in await tool_error(session, "edit_mem", edit)
        structured(await session.call_tool("edit_mem", {**edit, "secrets": "redact"}))
        notes = {"summary": f"Set up the bot with {OPENAI_KEY}."}
        assert "OpenAI API key" in await tool_error(session, "save_session_notes", notes)
        saved = structured(
            await session.call_tool("save_session_notes", {**notes, "secrets": "redact"})
        )
        briefing = structured(await session.call_tool("get_context", {}))["briefing"]
        assert OPENAI_KEY not in briefing and AWS_KEY not in briefing
    stored = "".join(p.read_text() for p in vault_dir.rglob("*.md"))
    assert saved["path"] and AWS_KEY not in stored and OPENAI_KEY not in stored
    assert PASSWORD not in stored
