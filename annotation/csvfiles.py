"""CSV files people open in spreadsheets: every download writes its cells through here.

A cell that starts with = + - @, a tab or a carriage return is read by Excel, LibreOffice
and Google Sheets as a formula ("=cmd|' /C calc'!A0", "=HYPERLINK(...)"), so text typed by
annotators or imported with articles could run on a manager's machine. Such a cell gets a
leading apostrophe, which spreadsheets show as text and do not evaluate (OWASP's advice).
Numbers stay numbers: -0.25 is written as it is, being a number and no formula.

One kind of file is written exactly instead: a data file whose reader is a program, where a
changed cell changes the result (the 2025 AVeriTeC shared task's CSV, read by its official
scorer; an apostrophe before a claim would change its METEOR and its Ev2R prompt). Those go
through :func:`data_csv_writer`, are offered as files for the scorer, never as a table to
open, and say so where they are offered.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# A plain number (a negative kappa, "-3", "+1.5e-3") is data, not a formula.
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def neutralise(cell: Any) -> Any:
    """`cell` safe for a spreadsheet: text that would start a formula gets a leading '."""
    formula = isinstance(cell, str) and cell.startswith(FORMULA_STARTS)
    if formula and not _PLAIN_NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


class SafeWriter:
    """csv.writer's interface, with every cell neutralised."""

    def __init__(self, stream: Any, **options: Any):
        self._writer = csv.writer(stream, **options)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([neutralise(cell) for cell in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def csv_writer(stream: Any, **options: Any) -> SafeWriter:
    """The one way to write a CSV file for people: like csv.writer, cells neutralised."""
    return SafeWriter(stream, **options)


def data_csv_writer(stream: Any, **options: Any) -> Any:
    """csv.writer for files read by programs (the shared task's scorer): cells exactly as given.

    The one exception to neutralise(): see the module's docstring.
    """
    return csv.writer(stream, **options)
