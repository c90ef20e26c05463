"""A vault's own policies, in `VAULT/.memvault/policies.toml` (a dot-folder: never a memory,
and Obsidian ignores it): default TTLs by category, the opt-in archiving of memories unused for
a while, and what the briefing surfaces. A flag or environment variable still wins over it."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memvault.errors import Invalid

POLICY_FILE = "policies.toml"


@dataclass(frozen=True)
class Policies:
    """What `policies.toml` sets; None where it says nothing (the defaults apply)."""

    ttl_days: dict[str, float] = field(default_factory=dict)
    archive_unused_days: float | None = None
    always: tuple[str, ...] | None = None
    stale_days: float | None = None
    recent_days: float | None = None

    def ttl_for(self, category: str | None) -> float | None:
        """The default TTL of a new memory in `category` (its top folder's, if it has one)."""
        if not category:
            return None
        return self.ttl_days.get(category, self.ttl_days.get(category.split("/")[0]))


def load_policies(state_dir: Path) -> Policies:
    """The policies in the vault's state folder (none when the file is missing); Invalid,
    naming the file and the key, when it is not TOML or a value is not what the key takes."""
    path = state_dir / POLICY_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):  # no policies (or no vault: opening says so)
        return Policies()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise Invalid(f"{path}: cannot read the policies ({exc}); fix or remove it") from exc
    unknown = sorted(set(data) - {*Policies.__dataclass_fields__})
    if unknown:
        raise Invalid(f"{path}: unknown key {unknown[0]!r}; the keys are " + _KEYS)
    ttl = data.get("ttl_days", {})
    if not isinstance(ttl, dict):
        raise Invalid(f"{path}: ttl_days must be a table of category = days")
    always = data.get("always")
    if always is not None and not (
        isinstance(always, list) and all(isinstance(c, str) for c in always)
    ):
        raise Invalid(f"{path}: always must be a list of category names")
    return Policies(
        ttl_days={str(k): _days(path, f"ttl_days.{k}", v) for k, v in ttl.items()},
        archive_unused_days=_optional_days(
            path, "archive_unused_days", data.get("archive_unused_days")
        ),
        always=tuple(always) if always is not None else None,
        stale_days=_optional_days(path, "stale_days", data.get("stale_days")),
        recent_days=_optional_days(path, "recent_days", data.get("recent_days")),
    )


_KEYS = ", ".join(Policies.__dataclass_fields__)


def _optional_days(path: Path, key: str, value: Any) -> float | None:
    """A number of days above zero, or None when not given."""
    return None if value is None else _days(path, key, value)


def _days(path: Path, key: str, value: Any) -> float:
    """A number of days above zero; Invalid naming the key for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise Invalid(f"{path}: {key} must be a number of days above 0, not {value!r}")
    return float(value)
