"""Search by meaning is ready when it should be (issue 35): what the CLI writes is embedded
as it writes it, a CLI search embeds the few notes waiting first (or says how many wait and
which command embeds them), and a search that ran by words only says so and why."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memvault.cli import browse, main

from .conftest import patience, write_file
from .mcp_helpers import MEMVAULT, server_env, stdio_session, structured
from .test_semantic import PARAPHRASE, ROLLBACK

# The default model, whatever the environment says.
DEFAULT_MODEL: dict[str, str | None] = {"MEMVAULT_EMBED_MODEL": None}
PLANTS = ("Office plants", "Water the ficus every Monday; the cactus once a month.")
LUNCH = ("Team lunch", "Thursday lunch is at the Thai place near the station.")


def cli(vault: Path, *args: str, env: dict[str, str | None] | None = None) -> Result:
    result = CliRunner().invoke(main, ["--vault", str(vault), *args], env=env or DEFAULT_MODEL)
    assert result.exit_code == 0, result.output
    return result


def hand_made(vault: Path, *notes: tuple[str, str]) -> None:
    """Notes as a person saves them: files only, nothing embedded."""
    for title, body in notes:
        write_file(vault, f"{title.lower().replace(' ', '-')}.md", f"# {title}\n\n{body}\n")


def test_what_the_cli_writes_the_next_cli_search_finds_by_meaning(vault_dir: Path) -> None:
    cli(vault_dir, "write", "--title", PLANTS[0], PLANTS[1])
    # Nothing is embedded yet: the write did not load the model for that alone, the search
    # embeds what waits first.
    assert json.loads(cli(vault_dir, "stats", "--json").stdout)["semantic"]["pending"] == 1
    assert cli(vault_dir, "search", "ficus", "--json").stderr == ""
    # Now the vault has vectors: a write runs the model (its duplicate guard) and embeds itself.
    cli(vault_dir, "write", "--title", ROLLBACK[0], ROLLBACK[1])
    assert json.loads(cli(vault_dir, "stats", "--json").stdout)["semantic"]["pending"] == 0
    found = cli(vault_dir, "search", PARAPHRASE, "--mode", "semantic", "--json")
    page = json.loads(found.stdout)
    assert page["results"][0]["title"] == ROLLBACK[0]
    assert (page["mode"], page["caveat"]) == ("semantic", "")
    assert "not embedded" not in found.stderr


def test_an_edit_from_the_cli_is_embedded_again(vault_dir: Path) -> None:
    cli(vault_dir, "write", "--title", "Release notes", "Nothing yet.")
    cli(vault_dir, "edit", "release-notes", "--content", ROLLBACK[1])
    found = json.loads(cli(vault_dir, "search", PARAPHRASE, "--mode", "semantic", "--json").stdout)
    assert found["results"][0]["title"] == "Release notes"


def test_a_cli_search_embeds_the_few_notes_waiting_first(vault_dir: Path) -> None:
    hand_made(vault_dir, ROLLBACK, PLANTS, LUNCH)
    found = cli(vault_dir, "search", PARAPHRASE, "--json")
    page = json.loads(found.stdout)
    assert page["mode"] == "hybrid" and page["caveat"] == ""
    assert page["results"][0]["title"] == ROLLBACK[0]
    assert json.loads(cli(vault_dir, "stats", "--json").stdout)["semantic"]["pending"] == 0


def test_too_many_waiting_a_search_says_how_many_and_runs_by_words(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, `mode: semantic` on a vault nothing had embedded gave an empty page, and a
    default search said nothing of meaning at all."""
    hand_made(vault_dir, ROLLBACK, PLANTS, LUNCH)
    monkeypatch.setattr(browse, "QUICK_EMBED_SECONDS", 0.0)
    found = cli(vault_dir, "search", "production build", "--mode", "semantic")
    assert "3 memories not embedded yet" in found.stderr
    assert "`memvault embed` embeds them" in found.stderr
    assert ROLLBACK[0] in found.stdout
    assert "(by words only: no memory is embedded yet" in found.stderr
    page = json.loads(cli(vault_dir, "search", "production build", "--json").stdout)
    assert page["mode"] == "keyword"
    assert page["caveat"].startswith("by words only: no memory is embedded yet")
    stats = cli(vault_dir, "stats").stdout
    assert "0 of 3 notes embedded" in stats and "`memvault embed` embeds the rest" in stats


def test_with_the_model_turned_off_searches_are_by_words_and_say_nothing_of_it(
    vault_dir: Path,
) -> None:
    hand_made(vault_dir, ROLLBACK)
    off = {"MEMVAULT_EMBED_MODEL": "off"}
    found = cli(vault_dir, "search", "production build", "--json", env=off)
    page = json.loads(found.stdout)
    assert (page["mode"], page["caveat"]) == ("keyword", "")
    assert found.stderr == ""
    asked = CliRunner().invoke(
        main, ["--vault", str(vault_dir), "search", PARAPHRASE, "--mode", "semantic"], env=off
    )
    assert asked.exit_code != 0 and "semantic search is off" in asked.output


@pytest.mark.processes
def test_a_cli_write_is_found_by_meaning_through_a_running_server(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memory the CLI writes while a server runs: the server finds it by meaning within 2 s
    on an idle machine (the limit here widens with MEMVAULT_TEST_PATIENCE)."""
    monkeypatch.delenv("MEMVAULT_EMBED_MODEL", raising=False)
    hand_made(vault_dir, PLANTS)

    async def scenario() -> None:
        async with stdio_session(vault_dir) as session:
            wrote = await asyncio.create_subprocess_exec(
                *MEMVAULT, "--vault", str(vault_dir), "write", "--title", ROLLBACK[0], ROLLBACK[1],
                env=server_env(),
            )  # fmt: skip
            assert await wrote.wait() == 0
            ask = {"query": PARAPHRASE, "mode": "semantic", "limit": 1}
            deadline = asyncio.get_running_loop().time() + patience(2.0)
            while True:
                page = structured(await session.call_tool("search_mem", ask))
                if page["results"] and page["results"][0]["title"] == ROLLBACK[0]:
                    return
                if asyncio.get_running_loop().time() > deadline:
                    pytest.fail(f"not found by meaning within {patience(2.0):.0f} s: {page}")
                await asyncio.sleep(0.05)

    asyncio.run(scenario())
