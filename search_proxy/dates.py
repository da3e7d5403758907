"""Publication dates of web pages and the rule that keeps evidence before the claim date.

AVeriTeC annotators may only use pages published *before* the claim date (the claim date
itself is already too late: the claim could be reacting to that day's news). A page's date
is known with different certainty depending on where it came from, recorded as its
`DateSource`:

- given / search_engine / estimated: a publication date; on or after the claim date means
  the page is dropped;
- archive_timestamp: the Wayback Machine captured the page then, so it was published *on or
  before* that day. An upper bound before the claim date proves the page is early enough;
  an upper bound on or after it proves nothing, and the page counts as "date unknown";
- unknown: kept, but shown as "date unknown".
"""

from __future__ import annotations

import re
from datetime import date, datetime
from enum import StrEnum

from django.db import models


class DateSource(models.TextChoices):
    GIVEN = "given", "given with the document"
    SEARCH_ENGINE = "search_engine", "dated by the search engine"
    ARCHIVE_TIMESTAMP = "archive_timestamp", "archived then (published on or before)"
    ESTIMATED = "estimated", "estimated from the page"
    UNKNOWN = "unknown", "unknown"


class Placement(StrEnum):
    """Where a page stands against a claim date."""

    BEFORE = "before"
    AFTER = "after"  # on or after the claim date: never shown, never evidence
    UNKNOWN = "unknown"


def placement(published: date | None, date_source: str, before: date) -> Placement:
    """Whether a page dated `published` (known through `date_source`) is before `before`."""
    if published is None or date_source == DateSource.UNKNOWN:
        return Placement.UNKNOWN
    if published < before:
        return Placement.BEFORE
    if date_source == DateSource.ARCHIVE_TIMESTAMP:
        return Placement.UNKNOWN
    return Placement.AFTER


_DAY_FIRST = re.compile(r"^(\d{1,2})-(\d{1,2})-(\d{4})$")  # dev.json's claim dates: 31-10-2020
_ISO_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})$")
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for name in names
}
# "Mar 3, 2020", "March 3, 2020", "3 Mar 2020", "3 March, 2020"
_MONTH_DAY_YEAR = re.compile(r"^([A-Za-z]{3,9})\.? (\d{1,2}),? (\d{4})\b")
_DAY_MONTH_YEAR = re.compile(r"^(\d{1,2}) ([A-Za-z]{3,9})\.?,? (\d{4})\b")


def parse_date(value: str | None) -> date | None:
    """A calendar date from the forms found in knowledge stores and search APIs, or None.

    Accepts 2020-10-31 (also as the start of an ISO timestamp), 31-10-2020, 20201031,
    "Oct 31, 2020" and "31 October 2020". Anything else, including relative dates such as
    "3 days ago", is None: a wrong date is worse than an unknown one.
    """
    if not value:
        return None
    text = value.strip()
    try:
        if match := _ISO_DAY.match(text):
            return date(*map(int, match.groups()))
        if match := _DAY_FIRST.match(text):
            day, month, year = map(int, match.groups())
            return date(year, month, day)
        if match := _COMPACT.match(text):
            return date(*map(int, match.groups()))
        if match := _MONTH_DAY_YEAR.match(text):
            named = _MONTHS.get(match.group(1).lower())
            return date(int(match.group(3)), named, int(match.group(2))) if named else None
        if match := _DAY_MONTH_YEAR.match(text):
            named = _MONTHS.get(match.group(2).lower())
            return date(int(match.group(3)), named, int(match.group(1))) if named else None
    except ValueError:  # 2020-02-30 and friends
        return None
    return None


def day_of(moment: datetime | None) -> date | None:
    return moment.date() if moment is not None else None
