"""Times as people write them in `since`/`until` filters, turned into UTC timestamps.

A time is an ISO date (`2024-05-01`), month (`2024-05`) or datetime (`2024-05-01T10:00:00Z`),
or a relative form: `7d`, `2w`, `3 months`, `12h`, `30 min`, `1y`, `2 weeks ago`, `last 10
days` (that long before now), or a calendar period: `today`, `yesterday`, `this week`, `last
week` (weeks start on Monday), `this month`, `last month`, `this year`, `last year`. Each names
a span: a moment, or a period in the clock's timezone (the machine's, as get_current_date
says). `since` takes its start and `until` its end, so `since=yesterday, until=yesterday` is all
of yesterday and `until=2024-05-01` takes in that whole day. Pure: the caller passes the time.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass, replace
from typing import Literal

from memvault.core.clock import iso
from memvault.core.records import Filter
from memvault.errors import Invalid

FORMS = (
    "an ISO date or datetime (2024-05-01, 2024-05-01T10:00:00Z), or 7d, 2w, 3 months, 12h, "
    "today, yesterday, this week, last week, this month, last month, this year, last year"
)
_UNITS = {
    "min": "minutes",
    "mins": "minutes",
    "minute": "minutes",
    "minutes": "minutes",
    "h": "hours",
    "hr": "hours",
    "hrs": "hours",
    "hour": "hours",
    "hours": "hours",
    "d": "days",
    "day": "days",
    "days": "days",
    "w": "weeks",
    "wk": "weeks",
    "week": "weeks",
    "weeks": "weeks",
    "mo": "months",
    "month": "months",
    "months": "months",
    "y": "years",
    "yr": "years",
    "year": "years",
    "years": "years",
}
_AMOUNT = re.compile(r"(?:last\s+)?(\d+)\s*([a-z]+)(?:\s+ago)?")
_MONTH = re.compile(r"(\d{4})-(\d{2})")
_PERIOD = re.compile(r"(this|last)\s+(week|month|year)")
# The years a timestamp may name: four digits, so that timestamps compare as text.
_YEARS = range(1000, 10_000)


@dataclass(frozen=True)
class Span:
    """The time a filter value names: [start, end); a moment has start == end."""

    start: dt.datetime
    end: dt.datetime


def span(text: str, now: dt.datetime) -> Span:
    """The span `text` names, relative to `now` (an aware datetime, in the timezone that
    calendar periods follow); Invalid, listing the forms, for anything else."""
    wanted = " ".join(text.strip().lower().split())
    found = _relative(wanted, now) or _calendar(wanted, now) or _iso(text.strip(), now)
    if found is None:
        raise Invalid(f"cannot read the time {text!r}; use {FORMS}")
    return found


def resolved(where: Filter, now: dt.datetime) -> Filter:
    """The filter with `since` and `until` as UTC timestamps (the start of since's span, the
    end of until's); Invalid when either cannot be read or since is not before until."""
    since = _edge(where.since, now, "start")
    until = _edge(where.until, now, "end")
    if since is not None and until is not None and since >= until:
        raise Invalid(
            f"since ({where.since}, {since}) is not before until ({where.until}, {until}): "
            "no time is left between them"
        )
    return replace(where, since=since, until=until)


def _edge(text: str | None, now: dt.datetime, edge: Literal["start", "end"]) -> str | None:
    """The UTC timestamp of the start or end of the span `text` names (None for no text)."""
    if text is None or not text.strip():
        return None
    found = span(text, now)
    moment = found.start if edge == "start" else found.end
    if moment.year not in _YEARS or moment.astimezone(dt.UTC).year not in _YEARS:
        raise Invalid(f"the time {text!r} is out of range (years {_YEARS[0]} to {_YEARS[-1]})")
    return iso(moment)


def _relative(text: str, now: dt.datetime) -> Span | None:
    """`7d`, `3 months`, `2 weeks ago`, `last 10 days`: the moment that long before now."""
    match = _AMOUNT.fullmatch(text)
    unit = _UNITS.get(match.group(2)) if match else None
    if match is None or unit is None:
        return None
    amount = int(match.group(1))
    try:
        if unit in ("months", "years"):
            moment = _months_before(now, amount * (12 if unit == "years" else 1))
        else:
            moment = now - dt.timedelta(**{unit: amount})
    except OverflowError as exc:
        raise Invalid(f"{text!r} reaches back further than any date") from exc
    return Span(moment, moment)


def _calendar(text: str, now: dt.datetime) -> Span | None:
    """`today`, `yesterday`, `this|last week|month|year`: that period of the calendar."""
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if text in ("today", "yesterday"):
        start = midnight - dt.timedelta(days=0 if text == "today" else 1)
        return Span(start, start + dt.timedelta(days=1))
    match = _PERIOD.fullmatch(text)
    if match is None:
        return None
    which, unit = match.groups()
    if unit == "week":
        start = midnight - dt.timedelta(days=midnight.weekday())
        if which == "last":
            start -= dt.timedelta(weeks=1)
        return Span(start, start + dt.timedelta(weeks=1))
    months = 1 if unit == "month" else 12
    first = midnight.replace(day=1) if unit == "month" else midnight.replace(month=1, day=1)
    start = _months_before(first, months) if which == "last" else first
    return Span(start, _months_before(start, -months))


def _iso(text: str, now: dt.datetime) -> Span | None:
    """An ISO month or date (the whole period, in now's timezone) or datetime (a moment;
    in now's timezone when it names none)."""
    month = _MONTH.fullmatch(text)
    try:
        if month is not None:
            start = now.replace(
                year=int(month.group(1)),
                month=int(month.group(2)),
                day=1,
                hour=0,
                minute=0,
                second=0,
                microsecond=0,
            )
            return Span(start, _months_before(start, -1))
        if len(text) == 10:
            day = dt.date.fromisoformat(text)
            start = dt.datetime.combine(day, dt.time(), now.tzinfo)
            return Span(start, start + dt.timedelta(days=1))
        moment = dt.datetime.fromisoformat(text)
    except (ValueError, OverflowError):
        return None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=now.tzinfo)
    return Span(moment, moment)


def _months_before(moment: dt.datetime, months: int) -> dt.datetime:
    """The same day and time `months` calendar months earlier (later when negative), on the
    month's last day when it has no such day (31 March - 1 month = 28 or 29 February)."""
    year, month = divmod(moment.year * 12 + moment.month - 1 - months, 12)
    if not dt.MINYEAR <= year <= dt.MAXYEAR:
        raise OverflowError("year out of range")
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)
