"""The current time, in UTC for the files and in the formats the date tool offers."""

from __future__ import annotations

import datetime as dt
import os


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def iso(moment: dt.datetime) -> str:
    """ISO 8601 in UTC to the second, as memvault writes timestamps: 2024-01-15T10:30:00Z."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_iso() -> str:
    return iso(now())


DATE_FORMATS = ("iso", "locale", "timestamp", "date_only")


def current_date(fmt: str = "iso") -> tuple[str, str, str]:
    """(date in `fmt`, timezone name, UTC offset like +02:00) in this machine's local time."""
    local = now().astimezone()
    offset = local.strftime("%z")
    utc_offset = f"{offset[:3]}:{offset[3:]}" if offset else "+00:00"
    rendered = {
        "iso": local.isoformat(timespec="seconds"),
        "locale": local.strftime("%c"),
        "timestamp": str(int(local.timestamp())),
        "date_only": local.date().isoformat(),
    }.get(fmt)
    if rendered is None:
        raise ValueError(f"format must be one of {', '.join(DATE_FORMATS)}, not {fmt!r}")
    return rendered, zone_name(local), utc_offset


def zone_name(local: dt.datetime) -> str:
    """The IANA zone (Europe/Paris) when the system says which, else the abbreviation."""
    configured = os.environ.get("TZ", "").lstrip(":")
    if configured and "/" in configured and not configured.startswith("/"):
        return configured
    try:
        link = os.readlink("/etc/localtime")
    except OSError:
        return local.tzname() or "UTC"
    return link.split("zoneinfo/", 1)[1] if "zoneinfo/" in link else local.tzname() or "UTC"


def parse(stamp: str | None) -> dt.datetime | None:
    """An ISO 8601 timestamp or date as an aware UTC datetime; None if absent or unreadable."""
    if not stamp:
        return None
    try:
        moment = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def age(stamp: str | None, since: dt.datetime | None = None) -> str:
    """How long ago, as a person says it: 'just now', '5 minutes ago', '3 days ago'."""
    moment = parse(stamp)
    if moment is None:
        return "unknown"
    seconds = max(0, int(((since or now()) - moment).total_seconds()))
    for unit, size in (
        ("year", 365 * 86400),
        ("month", 30 * 86400),
        ("week", 7 * 86400),
        ("day", 86400),
        ("hour", 3600),
        ("minute", 60),
    ):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count > 1 else ''} ago"
    return "just now"


def days_since(stamp: str | None, since: dt.datetime | None = None) -> float | None:
    moment = parse(stamp)
    return None if moment is None else ((since or now()) - moment).total_seconds() / 86400
