"""The file names memvault makes from titles: within the file system's byte limit whatever the
script, never a name Windows keeps for a device, written on real files."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault.cli import main
from memvault.core.drafts import Draft, Revision, WriteOptions
from memvault.core.memory import MAX_NAME_BYTES
from memvault.service.vault import VaultService

# Windows refuses these as a file's name before its first dot, in any case (an independent
# list: the test must not borrow the code's).
DEVICES = {"con", "prn", "aux", "nul", *(f"{p}{n}" for p in ("com", "lpt") for n in range(10))}
# Letters of two to four UTF-8 bytes, which a cut in characters let past the byte limit.
WIDE = "éж支付重试策略한국어𠀀𠀁"
# Those with ASCII, accents typed as their own code points, and separators.
MIXED = WIDE + "ab🙂 -.\u0301\u0308"
TITLES = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cf", "Cs")), max_size=200),
    st.text(st.sampled_from(WIDE), min_size=60, max_size=200),
    st.text(st.sampled_from(MIXED), max_size=200),
    st.tuples(st.sampled_from(sorted(DEVICES)), st.sampled_from(["", ".md", ".txt", " x"])).map(
        lambda parts: parts[0].upper() + parts[1]
    ),
).filter(str.strip)
COUNTER = itertools.count()


def _name(memory_path: str) -> str:
    """The file name of a vault-relative path."""
    return memory_path.rpartition("/")[2]


@settings(
    deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(title=TITLES)
def test_every_file_name_a_title_makes_fits_and_is_written(vault: VaultService, title: str) -> None:
    """Given any title, when it is written twice (the second takes a numbered name), renamed
    to and archived, then each file exists under a name of at most MAX_NAME_BYTES of whole
    UTF-8 characters (room left for the write's temp name) that names no Windows device."""
    n = next(COUNTER)
    first = vault.create(Draft(title, f"first {n}"), WriteOptions(allow_duplicate=True))
    second = vault.create(Draft(title, f"second {n}"), WriteOptions(allow_duplicate=True))
    renamed = vault.update(
        vault.create(Draft(f"other {n}", f"third {n}"), WriteOptions(allow_duplicate=True)).id,
        Revision(title=title),
        WriteOptions(allow_duplicate=True),
    )
    archived = vault.archive(second.id)
    for memory in (first, renamed, archived):
        name = _name(memory.path).encode("utf-8")
        assert len(name) <= MAX_NAME_BYTES
        folder = os.fsencode(vault.root / memory.path).rpartition(b"/")[0]
        assert name in os.listdir(folder)
        assert name.split(b".")[0].decode("utf-8").lower() not in DEVICES
        assert vault.get(memory.id).body.startswith(("first", "second", "third"))
    assert _name(second.path) != _name(first.path)


def test_a_title_of_200_cjk_characters_is_written_and_cut_between_characters(
    vault: VaultService,
) -> None:
    """Sixty CJK characters (180 bytes) fit; two hundred are cut to whole characters."""
    short = vault.create(Draft("支" * 60, "short"))
    assert short.path == "支" * 60 + ".md"
    long = vault.create(Draft("支" * 200, "long"))
    again = vault.create(Draft("支" * 200, "again"), WriteOptions(allow_duplicate=True))
    stem = _name(long.path).removesuffix(".md")
    assert set(stem) == {"支"} and 3 * len(stem) + 3 <= MAX_NAME_BYTES
    assert again.path == f"{stem}-2.md"
    assert (vault.root / again.path).read_text().endswith("again\n")


def test_a_cut_keeps_whole_words(vault: VaultService) -> None:
    """A title in words too long for a file name is cut after its last whole word that fits
    (four of these fit the 80 characters a slug may have, but not the bytes)."""
    word = "支付重试策略" * 3 + "表"
    memory = vault.create(Draft(" ".join([word] * 10), "words"))
    assert _name(memory.path) == "-".join([word] * 3) + ".md"


def test_a_device_name_title_is_written_under_a_name_windows_accepts(
    vault: VaultService,
) -> None:
    """A title is a person's words, so one that is a device name is kept and its file name
    gets `-memory`, the word memvault names a file by when a title alone cannot."""
    assert vault.create(Draft("CON", "console notes")).path == "con-memory.md"
    assert vault.create(Draft("ＮＵＬ", "null notes")).path == "nul-memory.md"
    assert vault.create(Draft("lpt¹", "printer notes", category="ops")).path == "ops/lpt1-memory.md"
    assert (
        vault.create(Draft("con", "again"), WriteOptions(allow_duplicate=True)).path
        == "con-memory-2.md"
    )
    renamed = vault.update(vault.create(Draft("Serial port", "setup")).id, Revision(title="COM3"))
    assert (renamed.path, renamed.title) == ("com3-memory.md", "COM3")
    assert vault.create(Draft("Con.txt", "a name with a dot")).path == "con-txt.md"


def test_the_cli_writes_a_device_name_title(vault_dir: Path) -> None:
    result = CliRunner().invoke(main, ["--vault", str(vault_dir), "write", "--title", "AUX", "x"])
    assert result.exit_code == 0, result.output
    assert "aux-memory.md" in result.output
    assert (vault_dir / "aux-memory.md").read_text().endswith("x\n")
