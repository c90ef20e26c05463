"""Times in since/until filters: each form as a table of examples, and properties of all."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.core.records import Filter
from memvault.core.timespec import Span, resolved, span
from memvault.errors import Invalid

PARIS = dt.timezone(dt.timedelta(hours=2))
# Sunday 31 March 2024, 15:00 in UTC+2.
NOW = dt.datetime(2024, 3, 31, 15, 0, tzinfo=PARIS)


def at(*parts: int) -> dt.datetime:
    return dt.datetime(*parts, tzinfo=PARIS)  # type: ignore[misc]


def moment(value: dt.datetime) -> Span:
    return Span(value, value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7d", moment(at(2024, 3, 24, 15))),
        ("7 days", moment(at(2024, 3, 24, 15))),
        ("2w", moment(at(2024, 3, 17, 15))),
        ("2 weeks ago", moment(at(2024, 3, 17, 15))),
        ("last 10 days", moment(at(2024, 3, 21, 15))),
        ("12h", moment(at(2024, 3, 31, 3))),
        ("30 min", moment(at(2024, 3, 31, 14, 30))),
        ("1 month", moment(at(2024, 2, 29, 15))),
        ("3 months", moment(at(2023, 12, 31, 15))),
        ("1y", moment(at(2023, 3, 31, 15))),
        ("  3   Months ", moment(at(2023, 12, 31, 15))),
        ("today", Span(at(2024, 3, 31), at(2024, 4, 1))),
        ("yesterday", Span(at(2024, 3, 30), at(2024, 3, 31))),
        ("this week", Span(at(2024, 3, 25), at(2024, 4, 1))),
        ("last week", Span(at(2024, 3, 18), at(2024, 3, 25))),
        ("this month", Span(at(2024, 3, 1), at(2024, 4, 1))),
        ("last month", Span(at(2024, 2, 1), at(2024, 3, 1))),
        ("this year", Span(at(2024, 1, 1), at(2025, 1, 1))),
        ("last year", Span(at(2023, 1, 1), at(2024, 1, 1))),
        ("2024-05-01", Span(at(2024, 5, 1), at(2024, 5, 2))),
        ("2024-02", Span(at(2024, 2, 1), at(2024, 3, 1))),
        ("2024-05-01T10:00:00Z", moment(dt.datetime(2024, 5, 1, 10, tzinfo=dt.UTC))),
        ("2024-05-01T10:00:00", moment(at(2024, 5, 1, 10))),
    ],
)
def test_each_form_names_its_span(text: str, expected: Span) -> None:
    assert span(text, NOW) == expected


@pytest.mark.parametrize(
    "text", ["soon", "3 m", "7 fortnights", "2024-13-01", "", "last decade", "-7d", "1e3d"]
)
def test_anything_else_is_a_clear_error_listing_the_forms(text: str) -> None:
    with pytest.raises(Invalid, match=r"cannot read the time .* use an ISO date"):
        span(text, NOW)


def test_since_takes_a_span_start_and_until_its_end_in_utc() -> None:
    window = resolved(Filter(since="yesterday", until="yesterday"), NOW)
    assert (window.since, window.until) == ("2024-03-29T22:00:00Z", "2024-03-30T22:00:00Z")
    assert resolved(Filter(), NOW) == Filter()


def test_an_empty_window_and_an_out_of_range_time_are_errors() -> None:
    with pytest.raises(Invalid, match="is not before until"):
        resolved(Filter(since="today", until="yesterday"), NOW)
    with pytest.raises(Invalid, match="out of range"):
        resolved(Filter(since="0100-01-01"), NOW)
    with pytest.raises(Invalid, match="further than any date"):
        resolved(Filter(since="99999999999999d"), NOW)


nows = st.datetimes(
    min_value=dt.datetime(1990, 1, 1),
    max_value=dt.datetime(2100, 1, 1),
    timezones=st.sampled_from([dt.UTC, PARIS, dt.timezone(dt.timedelta(hours=-8))]),
)
relative = st.builds(
    lambda amount, unit: f"{amount}{unit}",
    st.integers(0, 500),
    st.sampled_from(["d", " days", "w", " weeks", "h", " months", "y", " min"]),
)
periods = st.sampled_from(
    ["today", "yesterday", "this week", "last week", "this month", "last month", "this year"]
)


@given(relative, nows)
def test_a_relative_time_is_a_moment_never_after_now(text: str, now: dt.datetime) -> None:
    found = span(text, now)
    assert found.start == found.end <= now


@given(periods, nows)
def test_a_period_starts_at_midnight_and_holds_or_precedes_now(text: str, now: dt.datetime) -> None:
    found = span(text, now)
    assert found.start < found.end
    assert (found.start.hour, found.start.minute, found.start.second) == (0, 0, 0)
    assert found.start <= now
    assert found.end > now if text.startswith(("this", "today")) else found.end <= now


@given(st.one_of(relative, periods), nows)
def test_resolving_twice_gives_the_same_window(text: str, now: dt.datetime) -> None:
    once = resolved(Filter(since=text), now)
    assert resolved(once, now) == once
