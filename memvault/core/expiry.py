"""Expiry: a memory true only for a while. `expires_at` (or `ttl_days`) is set on write; past
it, the memory leaves searches, lists and the briefing at once (the index's live filter), and
upkeep moves it to `archive/<category>/` (vault.archive_expired), where it stays readable.
"""

from __future__ import annotations

import datetime as dt

from memvault.core import clock
from memvault.core.memory import ARCHIVE
from memvault.errors import Invalid
from memvault.words import param

# The longest ttl_days: a hundred years (a date past year 9999 cannot be written at all).
MAX_TTL_DAYS = 36_525


def expiry_from(expires_at: str | None, ttl_days: float | None) -> str | None:
    """The `expires_at` to write, from an ISO date or a number of days from now."""
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
    return clean_expiry(expires_at)


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
    """Where an expired memory of `category` goes: the same folder under the archive."""
    return f"{ARCHIVE}/{category}" if category else ARCHIVE
