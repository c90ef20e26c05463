"""The MCP server end to end: SDK clients over stdio and HTTP against a real server process."""

from __future__ import annotations

import json
import re
import socket
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

import httpx2
import jsonschema
import pytest
from click.testing import CliRunner
from mcp.shared.exceptions import MCPError

from memvault.cli import main

from .conftest import patience
from .mcp_helpers import (
    MEMVAULT,
    http_server,
    http_session,
    raw_call,
    server_env,
    stdio_session,
    structured,
    text_of,
    tool_error,
)
from .test_sync import eventually

pytestmark = [pytest.mark.processes, pytest.mark.anyio]

TOOLS = {
    "write_mem",
    "read_mem",
    "edit_mem",
    "delete_mem",
    "search_mem",
    "similar_mem",
    "list_mem",
    "link_mem",
    "unlink_mem",
    "get_current_date",
    "verify_mem",
    "get_context",
    "export_mem",
    "save_session_notes",
    "get_stats",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_tools_are_listed_with_schemas_and_annotations(vault_dir: Path) -> None:
    async with stdio_session(vault_dir, serving=["--output-schemas"]) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool.output_schema is not None, name
        assert tool.annotations is not None and tool.annotations.open_world_hint is False
        assert 40 <= len(tool.description or "") <= 200, name
    for name in (
        "read_mem",
        "search_mem",
        "similar_mem",
        "list_mem",
        "get_current_date",
        "get_context",
        "export_mem",
        "get_stats",
    ):
        assert tools[name].annotations.read_only_hint is True  # type: ignore[union-attr]
    for name in ("delete_mem", "edit_mem"):
        assert tools[name].annotations.destructive_hint is True  # type: ignore[union-attr]
    for name in ("link_mem", "unlink_mem", "verify_mem"):
        assert tools[name].annotations.idempotent_hint is True  # type: ignore[union-attr]
    write = tools["write_mem"].input_schema
    assert write["required"] == ["title", "content"]
    assert write["properties"]["tags"]["default"] == []
    # Optional fields are typed [X, "null"], never anyOf (which the SDK client checks slowly).
    for name, tool in tools.items():
        assert "anyOf" not in json.dumps(tool.output_schema), name
    search = tools["search_mem"].output_schema
    assert search is not None
    hit = {
        "id": "i",
        "title": "t",
        "path": "p.md",
        "version": "v",
        "category": None,
        "tags": [],
        "score": 1.0,
    }
    hit |= {"snippet": "", "updated_at": None, "last_reviewed": None, "scope": None, "age": ""}
    page = {"total": 1, "offset": 0, "has_more": False, "mode": "keyword"}
    jsonschema.validate({"results": [hit | {"relevance": 0.5}], **page}, search)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"results": [hit | {"category": 3}], **page}, search)


async def test_every_tool_over_stdio(vault_dir: Path) -> None:
    async with stdio_session(vault_dir) as session:
        a = structured(
            await session.call_tool(
                "write_mem",
                {
                    "title": "Payment retry decision",
                    "content": "Retry failed payments 3 times.",
                    "tags": ["payments"],
                    "category": "decision",
                },
            )
        )
        assert a["path"] == "decision/payment-retry-decision.md"
        b = structured(
            await session.call_tool(
                "write_mem", {"title": "Stripe webhooks", "content": "Webhooks must be idempotent."}
            )
        )
        assert set(a) == {"id", "title", "path", "version", "created_at", "replaced"}

        found = structured(
            await session.call_tool(
                "search_mem",
                {"query": "what did we decide about payment retries?", "category": "decision"},
            )
        )
        assert found["total"] == 1 and found["results"][0]["id"] == a["id"]

        linked = await session.call_tool(
            "link_mem",
            {"source_id": a["id"], "target_id": "stripe-webhooks", "link_text": "webhooks"},
        )
        out = structured(linked)
        assert out["markdown"] == "[[stripe-webhooks|webhooks]]"
        assert [link["id"] for link in out["source"]["links"]] == [b["id"]]
        assert [link["id"] for link in out["target"]["links"]] == [a["id"]]

        read = structured(await session.call_tool("read_mem", {"identifier": "stripe webhooks"}))
        assert read["backlinks"] == [
            {"id": a["id"], "title": "Payment retry decision", "path": a["path"]}
        ]
        assert read["content"].startswith("Webhooks must be idempotent.\n")
        plain = await session.call_tool("read_mem", {"identifier": a["id"], "format": "plain"})
        assert "[[" not in text_of(plain) and "webhooks" in text_of(plain)
        full = structured(
            await session.call_tool("read_mem", {"identifier": a["id"], "format": "json"})
        )
        assert full["frontmatter"]["id"] == a["id"] and full["aliases"] == []

        edited = structured(
            await session.call_tool(
                "edit_mem",
                {
                    "id": a["id"],
                    "append": "- 2024-05: raised to 5 retries",
                    "find": "3 times",
                    "replace": "5 times",
                },
            )
        )
        body = structured(await session.call_tool("read_mem", {"identifier": a["id"]}))["content"]
        assert body == (
            "Retry failed payments 5 times.\n\n- 2024-05: raised to 5 retries\n\n"
            "## Related\n- [[stripe-webhooks|webhooks]]\n"
        )
        assert edited["id"] == a["id"]
        section = await session.call_tool(
            "edit_mem",
            {"id": a["id"], "replace_section": {"heading": "Related", "content": "- none"}},
        )
        assert not section.is_error

        listed = structured(await session.call_tool("list_mem", {"sort": "title"}))
        assert [item["title"] for item in listed["items"]] == [
            "Payment retry decision",
            "Stripe webhooks",
        ]
        unlinked = structured(
            await session.call_tool("unlink_mem", {"source_id": a["id"], "target_id": b["id"]})
        )
        assert unlinked["target"]["links"] == []

        removed = structured(await session.call_tool("delete_mem", {"id": b["id"]}))
        assert removed["path"] == "stripe-webhooks.md"
        date = structured(await session.call_tool("get_current_date", {"format": "date_only"}))
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", date["date"]) and date["utc_offset"]

        recent = await session.read_resource("memvault://recent")
        assert "Payment retry decision" in recent.contents[0].text  # type: ignore[union-attr]
        one = await session.read_resource(f"memvault://memory/{a['id']}")
        assert one.contents[0].text.startswith("---\nid: " + a["id"])  # type: ignore[union-attr]


async def test_cli_json_is_the_tools_structured_content(vault_dir: Path) -> None:
    """`memvault X --json` prints what the matching tool returns as structured content (but
    the use counts: a server saves its reads' uses in batches, so the CLI sees them later)."""

    def cli(*args: str) -> Any:
        result = CliRunner().invoke(main, ["--vault", str(vault_dir), *args])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    cli("write", "--title", "Deploy order", "--category", "gotcha", "--json", "Migrate first.")
    cli("write", "--title", "Release steps", "--tag", "ops", "--json", "Build, then migrate.")
    cases: list[tuple[list[str], str, dict[str, Any]]] = [
        (
            ["read", "deploy ordr", "--format", "json"],
            "read_mem",
            {"identifier": "deploy ordr", "format": "json"},
        ),
        (
            ["read", "release-steps", "--format", "json"],
            "read_mem",
            {"identifier": "release-steps", "format": "json"},
        ),
        (["search", "migrate", "--json"], "search_mem", {"query": "migrate"}),
        (
            ["search", "build", "--tag", "ops", "--json"],
            "search_mem",
            {"query": "build", "tags": ["ops"]},
        ),
        (["list", "--sort", "title", "--json"], "list_mem", {"sort": "title"}),
        (["context", "--json"], "get_context", {}),
    ]
    async with stdio_session(vault_dir) as session:
        # The CLI's link is undone, so link_mem makes the same change again.
        linked = cli("link", "Deploy order", "release-steps", "--text", "release", "--json")
        cli("unlink", "Deploy order", "release-steps", "--json")
        link = {"source_id": "Deploy order", "target_id": "release-steps", "link_text": "release"}
        assert linked == structured(await session.call_tool("link_mem", link))
        assert linked["changed"] is True and linked["markdown"] == "[[release-steps|release]]"
        for command, tool, arguments in cases:
            answer = structured(await session.call_tool(tool, arguments))
            assert without_usage(cli(*command)) == without_usage(answer), command
        # Without --json both faces print the same line for each hit and each listed memory.
        for command, tool, arguments in cases[2:5]:
            lines = CliRunner().invoke(main, ["--vault", str(vault_dir), *command[:-1]]).stdout
            text = text_of(await session.call_tool(tool, arguments))
            assert uncounted(text).splitlines()[1:] == [
                f"- {line}" for line in uncounted(lines).splitlines()
            ]
            assert lines and all(len(line) <= 160 for line in lines.splitlines())
    fuzzy = cli("read", "deploy ordr", "--format", "json")
    assert fuzzy["title"] == "Deploy order" and 0 < fuzzy["confidence"] < 1
    assert [end["path"] for end in fuzzy["links"]] == ["release-steps.md"]
    assert [hit["title"] for hit in cli("search", "migrate", "--json")["results"]] == [
        "Deploy order",
        "Release steps",
    ]


async def test_error_paths_are_tool_errors_that_say_what_to_do(vault_dir: Path) -> None:
    async with stdio_session(vault_dir) as session:
        await session.call_tool("write_mem", {"title": "Payment retry policy", "content": "x"})

        error = partial(tool_error, session)

        assert "no memory 'nothing'" in await error("read_mem", {"identifier": "nothing"})
        await session.call_tool("write_mem", {"title": "Payment retry policies", "content": "y"})
        near = await error("read_mem", {"identifier": "Payment retry"})
        assert re.search(r"did you mean 'Payment retry polic\w+' \(0\.\d\d\), 'Payment", near)
        assert "no memory" in await error("delete_mem", {"id": "Payment retry polcy"})
        assert "no memory" in await error("edit_mem", {"id": "Payment retry polcy", "content": "x"})
        assert "invalid arguments: limit: Input should be greater than or equal to 1" in (
            await error("search_mem", {"query": "x", "limit": 0})
        )
        assert "invalid arguments: content: Field required" in await error(
            "write_mem", {"title": "no content"}
        )
        big = await error("write_mem", {"title": "Big", "content": "x" * (1024 * 1024 + 200_000)})
        assert "content is 1.2 MiB; the limit is 1 MiB" in big
        assert "title is empty" in await error("write_mem", {"title": " ", "content": "x"})
        assert "no memory 'ghost'" in await error(
            "link_mem", {"source_id": "payment-retry-policy", "target_id": "ghost"}
        )
        assert "itself" in await error(
            "link_mem", {"source_id": "payment-retry-policy", "target_id": "Payment retry policy"}
        )
        assert "nothing to change" in await error("edit_mem", {"id": "payment-retry-policy"})
        assert "occurs" not in await error(
            "edit_mem", {"id": "payment-retry-policy", "find": "absent", "replace": "y"}
        )
        safe = structured(
            await session.call_tool("write_mem", {"title": "../../etc/passwd", "content": "x"})
        )
        assert safe["path"] == "etc-passwd.md"
        with pytest.raises(MCPError):
            await session.read_resource("memvault://memory/ghost")
    assert sorted(p.name for p in vault_dir.iterdir()) == [
        ".memvault",
        "etc-passwd.md",
        "payment-retry-policies.md",
        "payment-retry-policy.md",
    ]


async def test_http_session_with_token(vault_dir: Path) -> None:
    with http_server(vault_dir, "--token", "s3cret") as (url, _process):
        async with http_session(url, "s3cret") as session:
            written = structured(
                await session.call_tool(
                    "write_mem", {"title": "Over HTTP", "content": "Sent through streamable HTTP."}
                )
            )
            found = structured(await session.call_tool("search_mem", {"query": "streamable"}))
            assert found["results"][0]["id"] == written["id"]
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        refused = httpx2.post(url, json=body, headers=headers)
        assert refused.status_code == 401
        wrong = httpx2.post(url, json=body, headers={**headers, "Authorization": "Bearer nope"})
        assert wrong.status_code == 401


def without_usage(data: Any) -> Any:
    """`data` without its use counts (access_count, last_access), at any depth."""
    if isinstance(data, dict):
        usage = ("access_count", "last_access")
        return {k: without_usage(v) for k, v in data.items() if k not in usage}
    if isinstance(data, list):
        return [without_usage(v) for v in data]
    return data


def uncounted(text: str) -> str:
    """Lines of hits and listed memories without their use counts ("used 3 times")."""
    return re.sub(r"never used|used once|used [\d,]+ times", "used N times", text)


def curl_example(url: str) -> list[str]:
    payload = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "write_mem",
            "arguments": {
                "title": "Project Ideas",
                "content": "# My Project Ideas\n\n1. AI-powered note-taking",
                "tags": ["ideas", "projects"],
                "category": "personal",
            },
        },
    }
    return [
        "curl",
        "-s",
        "-X",
        "POST",
        url,
        "-H",
        "Content-Type: application/json",
        "-H",
        "Accept: application/json, text/event-stream",
        "-d",
        json.dumps(payload),
    ]


def test_the_readme_curl_example_and_origin_checks(vault_dir: Path) -> None:
    with http_server(vault_dir) as (url, _process):
        reply = json.loads(
            subprocess.run(curl_example(url), capture_output=True, text=True, check=True).stdout
        )
        assert reply["result"]["isError"] is False
        assert reply["result"]["structuredContent"]["path"] == "personal/project-ideas.md"
        assert (
            (vault_dir / "personal/project-ideas.md")
            .read_text()
            .endswith("# My Project Ideas\n\n1. AI-powered note-taking\n")
        )
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        assert (
            httpx2.post(
                url, json=body, headers={**headers, "Origin": "http://evil.example"}
            ).status_code
            == 403
        )
        assert httpx2.post(
            url, json=body, headers={**headers, "Host": "evil.example"}
        ).status_code in (403, 421)
        local = httpx2.post(url, json=body, headers={**headers, "Origin": "http://localhost:5173"})
        assert local.status_code == 200


def test_server_survives_a_client_that_disconnects_mid_call(vault_dir: Path) -> None:
    with http_server(vault_dir) as (url, process):
        port = int(url.split(":")[2].split("/")[0])
        content = "y" * 500_000
        request = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "name": "write_mem",
                    "arguments": {"title": "Cut off", "content": content},
                },
            }
        )
        raw = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {len(request)}\r\n\r\n"
        ).encode() + request.encode()
        for cut in (len(raw) // 2, len(raw)):
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(raw[:cut])
        after = subprocess.run(curl_example(url), capture_output=True, text=True, check=True)
        assert json.loads(after.stdout)["result"]["isError"] is False
        assert process.poll() is None
        # The cut-off client's write goes on in a worker thread after it left (tool calls run
        # side by side): wait for it to finish, then no temp file may be left behind.
        eventually(lambda: not list(vault_dir.rglob("*.memvault-tmp")), 10)
        for path in vault_dir.rglob("*.md"):
            text = path.read_text()
            assert text.startswith("---\n") and text.count("---\n") >= 2


def test_a_busy_port_is_a_one_line_error(vault_dir: Path) -> None:
    with http_server(vault_dir) as (url, _process):
        port = url.split(":")[2].split("/")[0]
        clash = subprocess.run(
            [*MEMVAULT, "--vault", str(vault_dir), "serve", "--transport", "http", "--port", port],
            capture_output=True,
            text=True,
            env=server_env(),
            timeout=patience(30),
        )
    assert clash.returncode == 1
    assert clash.stderr.strip().splitlines()[-1] == (
        f"error: port {port} on 127.0.0.1 is already in use; stop the other server or pass --port"
    )


def test_stdio_keeps_stdout_for_protocol_only(vault_dir: Path) -> None:
    """Even at the debug level (given in any case), whose logs go to stderr."""
    messages = raw_call("read_mem", {"identifier": "missing"})
    process = subprocess.Popen(
        [*MEMVAULT, "--vault", str(vault_dir), "serve", "--log-level", "debug"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=server_env(),
    )
    assert process.stdin and process.stdout
    for message in messages:
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
    lines = [process.stdout.readline(), process.stdout.readline()]
    process.stdin.close()
    process.wait(timeout=patience(20))
    replies = [json.loads(line) for line in lines]
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[1]["result"]["isError"] is True
    assert process.stdout.read() == ""
    process.stdout.close()
    assert process.stderr is not None
    assert any(line.startswith("DEBUG ") for line in process.stderr.read().splitlines())
    process.stderr.close()


def test_serve_on_a_terminal_says_what_it_is_waiting_for(vault_dir: Path) -> None:
    import os
    import pty

    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [*MEMVAULT, "--vault", str(vault_dir), "serve"],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=server_env(),
    )
    try:
        assert process.stderr is not None
        hint = process.stderr.readline()
    finally:
        process.kill()
        process.wait(timeout=patience(10))
        os.close(controller)
        os.close(terminal)
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()
    assert hint.startswith("memvault: speaking MCP on stdin/stdout")
    assert "memvault serve --transport http" in hint


async def test_a_server_starts_on_what_changed_while_it_was_down(vault_dir: Path) -> None:
    """Edits, a new file and a deletion made with no server running are all in the first
    answer of the next server (it looks for them in a child process while it imports)."""
    async with stdio_session(vault_dir) as session:
        for title, content in (("Kept", "alpha"), ("Edited", "beta"), ("Deleted", "gamma")):
            await session.call_tool("write_mem", {"title": title, "content": content})
    (vault_dir / "edited.md").write_text(
        (vault_dir / "edited.md").read_text(encoding="utf-8").replace("beta", "delta"),
        encoding="utf-8",
    )
    (vault_dir / "added.md").write_text("# Added\nepsilon\n", encoding="utf-8")
    (vault_dir / "deleted.md").unlink()

    async with stdio_session(vault_dir) as session:
        for word, titles in (
            ("alpha", ["Kept"]),
            ("delta", ["Edited"]),
            ("beta", []),
            ("epsilon", ["Added"]),
            ("gamma", []),
        ):
            found = structured(await session.call_tool("search_mem", {"query": word}))
            assert [hit["title"] for hit in found["results"]] == titles, word
