"""Expiry and the archive: a memory true only for a while. `expires_at` (or `ttl_days`) is set
on a write or an edit; past it, the memory leaves searches, lists and the briefing at once (the
index's live filter), and upkeep moves it to `archive/<category>/` (vault.archive_expired),
where it stays readable. An edit archives a memory, or brings it back, by the same move.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from memvault.core import clock
from memvault.core.document import REMOVE
from memvault.core.memory import ARCHIVE, archived
from memvault.errors import Invalid
from memvault.words import param

# The longest ttl_days: a hundred years (a date past year 9999 cannot be written at all).
MAX_TTL_DAYS = 36_525
# The expires_at that takes an edited memory's expiry away, or gives a new one none where its
# category has a default TTL.
NEVER = "never"


def expiry_from(expires_at: str | None, ttl_days: float | None) -> str | None:
    """The `expires_at` to write, from an ISO date or a number of days from now (None for
    NEVER)."""
    if ttl_days is not None:
        if not 0 < ttl_days <= MAX_TTL_DAYS:
            raise Invalid(
                (
                    param("ttl_days"),
                    f" must be more than 0 and at most {MAX_TTL_DAYS} (100 years), not"
                    f" {ttl_days}; leave it out for a memory that does not expire",
                )
            )
        expires_at = clock.iso(clock.now() + dt.timedelta(days=ttl_days))
    if expires_at is not None and expires_at.strip().lower() == NEVER:
        return None
    return clean_expiry(expires_at)


def expiry_update(
    current: str | None, expires_at: str | None, ttl_days: float | None, reviving: bool
) -> dict[str, Any]:
    """The frontmatter update an edit makes of a memory's expiry (`current`): the one given
    (`expires_at`, NEVER or "" for none, or `ttl_days` from now), else, for a memory brought
    back from the archive (`reviving`), none instead of one already past (upkeep would archive
    it again at once); {} when it stays."""
    if expires_at is not None or ttl_days is not None:
        new = expiry_from(expires_at, ttl_days)
    elif reviving and current is not None and current <= clock.now_iso():
        new = None
    else:
        return {}
    if new == current:
        return {}
    return {"expires_at": REMOVE if new is None else new}


def clean_expiry(expires_at: str | None) -> str | None:
    """An expiry as memvault writes timestamps (UTC, to the second), or a clear error."""
    if expires_at is None or not str(expires_at).strip():
        return None
    text = str(expires_at).strip()
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError) as exc:
        raise Invalid(
            (
                param("expires_at"),
                f" {text!r} is not an ISO date memvault can store; use e.g. 2025-01-31"
                " or 2025-01-31T12:00:00Z",
            )
        ) from exc


def archive_folder(category: str | None) -> str:
    """Where an archived memory of `category` goes: the same folder under the archive (a folder
    there already stays)."""
    if category and archived(category):
        return category
    return f"{ARCHIVE}/{category}" if category else ARCHIVE


def live_folder(folder: str | None) -> str | None:
    """Where a memory in `folder` goes back to from the archive: its category, the folder
    without the archive's in front (None: the vault's root); a live folder stays."""
    if not folder or not archived(folder):
        return folder
    return folder[len(ARCHIVE) + 1 :] or None
