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
