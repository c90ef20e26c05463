"""memvault's hooks in a Claude Code settings file (`.claude/settings.json` of a project, or
`~/.claude/settings.json`): merged in beside the person's own hooks and keys, which are kept
as they are; found again by their command (`memvault hook EVENT`), so a second install
changes nothing and an uninstall removes only memvault's."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault.errors import Invalid
from memvault.hooks.json_text import (
    add_member,
    dumped,
    indent_unit,
    items,
    members,
    remove_member,
    replace_array,
    skip_space,
)
from memvault.storage.atomic_writes import atomic_write

# The events memvault hooks into, with the matcher each gets (SessionStart: every source).
EVENTS: dict[str, str | None] = {
    "SessionStart": "startup|resume|clear|compact",
    "PreCompact": None,
    "Stop": None,
    "SessionEnd": None,
}
# Seconds Claude Code gives a hook before it stops waiting.
TIMEOUT = 10
# A memvault hook's command: `memvault [options] hook EVENT`, run as a script or `-m memvault`.
MARK = re.compile(r"(?:^|[\s/\"'])memvault(?:\s+\S+)*?\s+hook\s+\w")


@dataclass(frozen=True)
class Installed:
    """A memvault hook found in a settings file: its event and command."""

    event: str
    command: str


def install(path: Path, commands: dict[str, str]) -> bool:
    """Merge `commands` (event: command line) into the settings file at `path`, replacing any
    memvault hook of the same event; whether the file changed."""
    before, text = _read(path)
    new = text if text.strip() else "{}"
    top = skip_space(new, 0)
    for event, command in commands.items():
        if "hooks" not in members(new, top):
            new = add_member(new, top, "hooks", {}, 1)
        hooks_at = _object_at(path, new, members(new, top)["hooks"].value_start, "hooks")
        group: dict[str, Any] = {
            "hooks": [{"type": "command", "command": command, "timeout": TIMEOUT}]
        }
        if EVENTS.get(event):
            group = {"matcher": EVENTS[event], **group}
        found = members(new, hooks_at)
        if event not in found:
            new = add_member(new, hooks_at, event, [group], 2)
            continue
        array = _array_at(path, new, found[event].value_start, event)
        kept, _ = _others(new, array)
        new = replace_array(new, array, [*kept, dumped(group, indent_unit(new), 3)], 2)
    return _write(path, before, new if text.strip() else new + "\n")


def uninstall(path: Path) -> bool:
    """Remove every memvault hook from the settings file at `path` (events and the `hooks`
    key left empty go too); whether the file changed."""
    before, text = _read(path)
    if not text.strip():
        return False
    top = skip_space(text, 0)
    if "hooks" not in members(text, top):
        return False
    new = text
    hooks_at = _object_at(path, new, members(new, top)["hooks"].value_start, "hooks")
    for event, member in sorted(members(new, hooks_at).items(), key=lambda kv: -kv[1].start):
        array = _array_at(path, new, member.value_start, event)
        kept, changed = _others(new, array)
        if changed:
            new = (
                replace_array(new, array, kept, 2) if kept else remove_member(new, hooks_at, event)
            )
    if not members(new, hooks_at):
        new = remove_member(new, top, "hooks")
    return _write(path, before, new)


def installed(path: Path) -> list[Installed]:
    """The memvault hooks in the settings file at `path`."""
    settings, _ = _read(path)
    hooks = settings.get("hooks")
    found: list[Installed] = []
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            for hook in group.get("hooks", []) if isinstance(group, dict) else ():
                if _is_memvault(hook):
                    found.append(Installed(event, hook["command"]))
    return found


def _others(text: str, array: int) -> tuple[list[str], bool]:
    """The texts of an event's matcher groups without memvault's hooks (a group that held
    only memvault's goes; a mixed one is rewritten without them), and whether any went."""
    kept: list[str] = []
    changed = False
    for start, end in items(text, array):
        group = json.loads(text[start:end])
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(hooks, list) or not any(_is_memvault(h) for h in hooks):
            kept.append(text[start:end])
            continue
        changed = True
        others = [hook for hook in hooks if not _is_memvault(hook)]
        if others:
            kept.append(dumped({**group, "hooks": others}, indent_unit(text), 3))
    return kept, changed


def _object_at(path: Path, text: str, at: int, name: str) -> int:
    if text[at] != "{":
        raise Invalid(f"{path}: {name!r} is not an object; fix the file first")
    return at


def _array_at(path: Path, text: str, at: int, event: str) -> int:
    if text[at] != "[":
        raise Invalid(f"{path}: hooks.{event} is not a list; fix the file first")
    return at


def _is_memvault(hook: Any) -> bool:
    return (
        isinstance(hook, dict)
        and isinstance(hook.get("command"), str)
        and bool(MARK.search(hook["command"]))
    )


def _read(path: Path) -> tuple[dict[str, Any], str]:
    """The settings as a dict, and the file's text ('' when there is no file yet)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, ""
    except OSError as exc:
        raise Invalid(f"cannot read {path}: {exc.strerror}") from exc
    if not text.strip():
        return {}, text
    try:
        settings = json.loads(text)
    except ValueError as exc:
        raise Invalid(
            f"{path} is not valid JSON ({exc}); fix it first, nothing was changed"
        ) from exc
    if not isinstance(settings, dict):
        raise Invalid(f"{path} does not hold a JSON object; fix it first, nothing was changed")
    return settings, text


def _write(path: Path, before: dict[str, Any], text: str) -> bool:
    """Write the new text if it changes the settings; whether it did."""
    if json.loads(text) == before and path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)
    return True
