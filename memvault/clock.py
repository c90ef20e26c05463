"""The current time, in UTC for the files and in the formats the date tool offers."""

from __future__ import annotations

import datetime as dt


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def iso(moment: dt.datetime) -> str:
    """ISO 8601 in UTC to the second, as memvault writes timestamps: 2024-01-15T10:30:00Z."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_iso() -> str:
    return iso(now())
