"""The `memvault` command, through click's runner and as a real subprocess."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memvault.cli import main

from .conftest import write_file


def run(vault: Path, *args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--vault", str(vault), *args], input=input)
    return result.exit_code, result.stdout, result.stderr


def test_write_read_edit_link_list_search_rm(vault_dir: Path) -> None:
    code, out, _ = run(
        vault_dir,
        "write",
        "--title",
        "Deploy gotcha",
        "--category",
        "gotcha",
        "--tag",
        "deploy",
        "--json",
        "Migrations run before deploy.",
    )
    assert code == 0
    written = json.loads(out)
    assert written["path"] == "gotcha/deploy-gotcha.md"
    code, out, _ = run(vault_dir, "write", "--title", "Release process", input="Stdin body\n")
    assert code == 0 and out.endswith("release-process.md\n")

    code, out, _ = run(vault_dir, "read", written["id"], "--format", "json")
    assert json.loads(out)["content"] == "Migrations run before deploy.\n"
    assert run(vault_dir, "read", "deploy-gotcha", "--format", "plain")[1] == (
        "Deploy gotcha\n\nMigrations run before deploy.\n"
    )
    assert run(vault_dir, "read", "Deploy gotcha")[1].startswith("---\nid: ")

    code, out, _ = run(vault_dir, "link", "Deploy gotcha", "Release process", "--json")
    linked = json.loads(out)
    assert linked["markdown"] == "[[release-process|Release process]]"
    assert [end["path"] for end in linked["source"]["links"]] == ["release-process.md"]
    code, out, _ = run(vault_dir, "read", "release-process", "--format", "json")
    assert json.loads(out)["backlinks"] == [
        {"id": written["id"], "title": "Deploy gotcha", "path": "gotcha/deploy-gotcha.md"}
    ]

    code, out, _ = run(vault_dir, "edit", "Deploy gotcha", "--title", "Deploy order", "--json")
    assert json.loads(out)["path"] == "gotcha/deploy-order.md"
    assert "[[deploy-order|Deploy order]]" in (vault_dir / "release-process.md").read_text()

    code, out, _ = run(vault_dir, "search", "migrations deploy", "--json")
    result = json.loads(out)["results"][0]
    assert set(result) >= {
        "id",
        "title",
        "path",
        "category",
        "tags",
        "score",
        "snippet",
        "updated_at",
    }
    assert result["title"] == "Deploy order"
    code, out, _ = run(vault_dir, "list", "--category", "gotcha", "--json")
    assert [item["title"] for item in json.loads(out)["items"]] == ["Deploy order"]

    assert run(vault_dir, "unlink", "Deploy order", "release-process")[0] == 0
    code, out, _ = run(vault_dir, "rm", "Deploy order", "--json")
    assert json.loads(out)["path"] == "gotcha/deploy-order.md"
    assert run(vault_dir, "check")[1].splitlines() == [
        "vault is clean",
        "semantic search is off (MEMVAULT_EMBED_MODEL=off): full-text only",
    ]


def test_errors_are_one_line_on_stderr_with_a_non_zero_exit(vault_dir: Path) -> None:
    write_file(vault_dir, "note.md", "A note.\n")
    code, out, err = run(vault_dir, "read", "nothing-here")
    assert code == 1 and out == ""
    assert err.startswith("error: no memory 'nothing-here'") and "Traceback" not in err
    code, _, err = run(vault_dir, "write", "--title", "   ", "x")
    assert code == 1 and "title is empty" in err


def test_reindex_json_summary(vault_dir: Path) -> None:
    write_file(vault_dir, "a.md", "[[b]] [[missing]] ![[pic.png]]\n")
    write_file(vault_dir, "b.md", "---\ntitle: [broken\n---\n")
    code, out, _ = run(vault_dir, "reindex", "--json")
    summary = json.loads(out)
    assert code == 0
    assert {k: summary[k] for k in ("notes", "links", "unresolved_links")} == {
        "notes": 2,
        "links": 2,
        "unresolved_links": 1,
    }
    assert summary["skipped"][0]["path"] == "b.md"
    assert summary["seconds"] >= 0


def test_broken_frontmatter_is_said_at_its_line_by_check_read_and_reindex(
    vault_dir: Path,
) -> None:
    write_file(vault_dir, "bad.md", "---\ntitle: Bad\nsummary: a: b\n---\nBody.\n")
    problem = (
        "frontmatter line 3 is not valid YAML: a ':' is not allowed here (a ': ' inside a value"
        " that is not in quotes?)"
    )
    reindexed = json.loads(run(vault_dir, "reindex", "--json")[1])
    assert reindexed["skipped"] == [{"path": "bad.md", "reason": f"indexed read-only: {problem}"}]
    assert f"malformed: bad.md: {problem}\n" in run(vault_dir, "check")[1]
    assert json.loads(run(vault_dir, "read", "bad.md", "--json")[1])["problem"] == problem


def test_reindex_of_a_missing_vault_fails(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("not a folder")
    code, _, err = run(target, "reindex")
    assert code == 2 and "is a file" in err
    code, _, err = run(target / "sub", "--create", "reindex")
    assert code == 1 and err.startswith("error: cannot create the vault")


def test_check_reports_and_fixes(vault_dir: Path) -> None:
    run(vault_dir, "write", "--title", "A", "a")
    run(vault_dir, "write", "--title", "B", "b")
    run(vault_dir, "link", "A", "B")
    b = vault_dir / "b.md"
    b.write_text(b.read_text().replace("\n## Related\n- [[a|A]]\n", ""))
    run(vault_dir, "reindex")
    code, out, _ = run(vault_dir, "check", "--json")
    assert code == 1 and json.loads(out)["one_sided_links"] == [
        {"source": "a.md", "target": "b.md"}
    ]
    code, out, _ = run(vault_dir, "check", "--fix")
    assert code == 0 and "fixed: linked back" in out
    assert run(vault_dir, "check")[0] == 0


def test_check_names_each_broken_link_once_with_its_lines(vault_dir: Path) -> None:
    write_file(
        vault_dir,
        "notes/a.md",
        "---\ntitle: A\n---\n\nSee [[missing]] and [[gone#Part|there]].\n\n"
        "Again [[missing]], `[[missing]]` in code.\n[[Missing.md]] ![[pic.png]]\n"
        "\n## Related\n- [[missing]]\n",
    )
    write_file(vault_dir, "b.md", "Only [[gone]].\n")
    code, out, _ = run(vault_dir, "check")
    assert code == 1
    assert out.splitlines()[:3] == [
        "broken link: b.md:1: [[gone]]",
        "broken link: notes/a.md:5: [[missing]] (also on lines 7, 8, 11)",
        "broken link: notes/a.md:5: [[gone]]",
    ]
    code, out, _ = run(vault_dir, "check", "--json")
    assert json.loads(out)["broken_links"] == [
        {"source": "b.md", "target": "gone", "lines": [1]},
        {"source": "notes/a.md", "target": "missing", "lines": [5, 7, 8, 11]},
        {"source": "notes/a.md", "target": "gone", "lines": [5]},
    ]


def checksums(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memvault" not in p.parts
    }


def test_reindex_search_and_read_change_no_byte_of_hand_made_notes(vault_dir: Path) -> None:
    write_file(vault_dir, "plain.md", "# Plain\nNo frontmatter, [[other]] link\n")
    write_file(vault_dir, "crlf.md", "---\r\ntitle: CRLF\r\n---\r\nWindows\r\n")
    write_file(vault_dir, "bom.md", "\ufeff---\ntitle: BOM\nstatus: x # c\n---\nbody")
    write_file(vault_dir, "broken.md", "---\ntitle: [oops\n---\nbroken\n")
    write_file(vault_dir, "sub/other.md", "---\naliases: [O]\ntags: x, y\n---\n")
    write_file(vault_dir, ".obsidian/workspace.json", "{}")
    write_file(vault_dir, "pic.png", "\x89PNG")
    before = checksums(vault_dir)
    for args in (
        ["reindex"],
        ["search", "plain"],
        ["read", "crlf"],
        ["read", "bom", "--format", "json"],
        ["read", "broken", "--format", "plain"],
        ["list"],
        ["check"],
    ):
        run(vault_dir, *args)
    assert checksums(vault_dir) == before


def test_original_option_names_and_env_var(vault_dir: Path, tmp_path: Path) -> None:
    index = tmp_path / "idx.sqlite3"
    result = CliRunner().invoke(
        main,
        [
            "--notestore_path",
            str(vault_dir),
            "--index_path",
            str(index),
            "write",
            "--title",
            "Old names",
            "x",
        ],
    )
    assert result.exit_code == 0 and index.exists()
    result = CliRunner().invoke(main, ["list", "--json"], env={"MEMVAULT_VAULT": str(vault_dir)})
    assert json.loads(result.stdout)["total"] == 1


@pytest.mark.processes
def test_real_subprocess_round_trip(vault_dir: Path) -> None:
    exe = [sys.executable, "-m", "memvault.cli", "--vault", str(vault_dir)]
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    subprocess.run(
        [*exe, "write", "--title", "Subprocess note", "-"],
        input="Hello 世界\n",
        text=True,
        check=True,
        env=env,
        capture_output=True,
    )
    found = subprocess.run(
        [*exe, "search", "世界", "--json"], text=True, check=True, env=env, capture_output=True
    )
    assert json.loads(found.stdout)["results"][0]["title"] == "Subprocess note"
    failed = subprocess.run([*exe, "read", "nope"], text=True, env=env, capture_output=True)
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr.startswith("error: no memory 'nope'")
    assert "Traceback" not in failed.stderr
    progress = subprocess.run([*exe, "reindex"], text=True, env=env, capture_output=True)
    assert progress.stdout.startswith("indexed 1 note in") and progress.stderr == ""


def run_and_list_modules(
    vault: Path, commands: list[list[str]], package: str, env: dict[str, str] | None = None
) -> list[str]:
    """Run CLI commands in one fresh interpreter; its output, ending with the modules of
    `package` that got imported."""
    script = (
        "import sys\n"
        "from memvault.cli import main\n"
        f"for args in {commands!r}:\n"
        "    try:\n"
        "        main(['--vault', sys.argv[1], *args], standalone_mode=False)\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] == {package!r}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(vault)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return done.stdout.splitlines()


@pytest.mark.processes
def test_no_command_but_serve_imports_the_mcp_sdk(vault_dir: Path) -> None:
    """The SDK costs most of a second at start; only `serve` may load it."""
    commands = [["--help"], ["write", "--title", "T", "x"], ["search", "x", "--json"]]
    output = run_and_list_modules(vault_dir, commands, "mcp")
    assert output[-1] == "[]"
    assert '"total": 1' in "\n".join(output)


@pytest.mark.processes
def test_commands_without_json_of_a_tool_do_not_import_pydantic(vault_dir: Path) -> None:
    """pydantic costs about 0.1 s at start: only a tool's --json output (output.py) needs it,
    so text output and the upkeep commands' JSON (records printed as they are) go without."""
    commands = [
        ["write", "--title", "T", "x"],
        ["search", "x"],
        ["list"],
        ["sync", "--json"],
        ["check", "--json"],
        ["stats", "--json"],
        ["reindex", "--json"],
    ]
    output = run_and_list_modules(vault_dir, commands, "pydantic")
    assert output[-1] == "[]"
    assert '"added": 0' in "\n".join(output) and '"clean": true' in "\n".join(output)


@pytest.mark.processes
def test_a_vault_without_vectors_writes_without_loading_the_model(vault_dir: Path) -> None:
    """numpy and onnxruntime cost a command most of a second: with semantic search on but no
    note embedded yet, writing and listing go without them, and so does a search by words
    (a search by meaning first embeds the notes waiting, when that is quick)."""
    env = {k: v for k, v in os.environ.items() if k != "MEMVAULT_EMBED_MODEL"}
    commands = [["write", "--title", "T", "x"], ["search", "x", "--mode", "keyword"], ["list"]]
    for package in ("numpy", "onnxruntime"):
        output = run_and_list_modules(vault_dir, commands, package, env)
        assert output[-1] == "[]", package


def test_bare_memvault_prints_its_help_and_exits_0() -> None:
    result = CliRunner().invoke(main, [], prog_name="memvault")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.startswith("Usage: memvault [OPTIONS] COMMAND [ARGS]...")
    assert "Commands:" in result.stdout and "error:" not in result.stdout
