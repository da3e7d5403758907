"""Reading claim dates as fact-checkers write them, taking the earliest possible day.

The guidelines ask for the earliest reading of an imprecise date: "February 2017" is
1 February 2017, "2016" is 1 January 2016, "the 1990s" is 1 January 1990.
"""

from __future__ import annotations

import re
from datetime import date

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_QUALIFIERS = re.compile(r"\b(early|mid|late|around|about|circa|c\.|in|on|the|of|since|before)\b")
_RANGE = re.compile(r"\s+(?:to|until|-|\u2013)\s+|(?<=[a-z])[-\u2013](?=[a-z])")
_ORDINAL = re.compile(r"(\d+)(st|nd|rd|th)\b")


class DateNotUnderstood(ValueError):
    pass


def earliest_date(text: str) -> date:
    """The earliest day a written date can mean. Raises DateNotUnderstood otherwise."""
    raw = text.strip()
    cleaned = _ORDINAL.sub(r"\1", raw.lower())
    cleaned = cleaned.replace(",", " ")
    # A range ("March to April 2020", "March-April 2020") starts with its first part; the
    # year may only be written at its end.
    parts = _RANGE.split(cleaned)
    if len(parts) > 1:
        years = re.findall(r"\d{4}", cleaned)
        cleaned = parts[0]
        if years and not re.search(r"\d{4}", cleaned):
            cleaned += " " + years[-1]
    cleaned = _QUALIFIERS.sub(" ", cleaned)
    words = cleaned.split()
    try:
        return _parse_words(words, raw)
    except ValueError as exc:
        raise DateNotUnderstood(f"could not read {raw!r} as a date") from exc


def _parse_words(words: list[str], raw: str) -> date:
    # ISO and numeric day-first forms: 2017-02-03, 3/2/2017, 3-2-2017, 3.2.2017
    joined = " ".join(words)
    if m := re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})(?: \d{4})?", joined):
        return date(int(m[1]), int(m[2]), int(m[3]))
    if m := re.fullmatch(r"(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})(?: \d{4})?", joined):
        return date(int(m[3]), int(m[2]), int(m[1]))
    if m := re.fullmatch(r"(\d{4})s(?: \d{4})?", joined):  # the 1990s
        return date(int(m[1]), 1, 1)
    years = [w for w in words if re.fullmatch(r"\d{4}", w)]
    if not years:
        raise ValueError("no year")
    year = int(years[0])
    month = day = None
    for word in words:
        if word in _MONTHS and month is None:
            month = _MONTHS[word]
        elif word in _SEASON_START and month is None:
            month = _SEASON_START[word]
        elif re.fullmatch(r"\d{1,2}", word) and day is None:
            day = int(word)
    if month is None:
        if day is not None:
            raise ValueError("a day without a month")
        return date(year, 1, 1)
    return date(year, month, day or 1)
