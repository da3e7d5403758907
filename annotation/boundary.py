"""The input boundary: what text the platform takes in, from any surface.

Every way in passes here before the rules or the database see a value: the site's forms and
query strings (config.middleware.InputBoundary), the API's JSON bodies
(config.parsers.LimitedJSONParser), and uploaded or imported files (annotation/intake.py,
annotation/accounts.py, exports/averitec_json.py, exports/scoring.py). A refusal names where
the value was (a field, a JSON path, a line and column) and what is wrong with it.

Refused, with the reason:

- NUL (U+0000): PostgreSQL cannot store it in text or JSON;
- half of a surrogate pair (U+D800-U+DFFF, "\\ud800" in JSON): not text, no database stores it;
- control characters other than tab, line feed and carriage return (C0, DEL, C1): invisible,
  they break exports, terminals and spreadsheets;
- the bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): they
  reorder the text around them on screen ("Trojan Source"); the plain direction marks
  (U+200E, U+200F, U+061C) that right-to-left writing needs stay allowed, and so do
  zero-width spaces and joiners (emoji, AVeriTeC's own data);
- text longer than MAX_TEXT_LENGTH characters, values nested deeper than MAX_DEPTH levels,
  and numbers that are not finite (JSON's 1e400 reads as infinity, which PostgreSQL refuses).

Field-specific lengths are the rules' business (annotation/submissions.py TEXT_LIMITS) and
the model's (max_length); this module only stops what no field can take.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

# No field of the platform takes more than this in one value: the longest answers and
# justifications are limited to a few thousand characters, a pasted list of 500 usernames
# stays well under it.
MAX_TEXT_LENGTH = 100_000
# No payload nests deeper than a handful of levels (an evidence round: round, questions,
# answers, fields); Python's own JSON reader gives up around a thousand with a RecursionError.
MAX_DEPTH = 32
# A key of a JSON object names a field: a short text.
MAX_KEY_LENGTH = 1_000

# The refused characters as a regular expression class, spelled with escapes so that it reads
# the same in Python and in ECMA regular expressions (the OpenAPI schema, config/api.py).
# Half surrogate pairs are apart: a JSON schema cannot name them (a pattern is matched against
# whole characters), so the schema's pattern leaves them out and its text says so.
_SCHEMA_CLASS = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
_REFUSED_CHARACTER = re.compile(f"[{_SCHEMA_CLASS}\ud800-\udfff]")
# A whole text without any of them: the schema's pattern for every text a request carries,
# and for the keys of its objects (which are short).
TEXT_PATTERN = f"^[^{_SCHEMA_CLASS}]*$"
KEY_PATTERN = f"^[^{_SCHEMA_CLASS}]{{0,{MAX_KEY_LENGTH}}}$"
_DIRECTION_CONTROLS = {
    "\u202a": "left-to-right embedding",
    "\u202b": "right-to-left embedding",
    "\u202c": "pop directional formatting",
    "\u202d": "left-to-right override",
    "\u202e": "right-to-left override",
    "\u2066": "left-to-right isolate",
    "\u2067": "right-to-left isolate",
    "\u2068": "first strong isolate",
    "\u2069": "pop directional isolate",
}


@dataclass(frozen=True)
class Refusal:
    """Why a value is refused: where (a dotted path inside the value, "" for the value
    itself), what, and a code screens and tests can match on."""

    path: str
    message: str
    code: str

    def at(self, where: str) -> str:
        """The refusal in words, placed: "line 3, column 'title': holds a NUL character"."""
        inside = f"'{self.path}'" if self.path else ""
        if where and inside:
            return f"{where}, {inside}: {self.message}"
        return f"{where or inside or 'the value'}: {self.message}"

    def __str__(self) -> str:
        return self.at("")


class InputRefused(ValueError):
    """A value refused at the boundary; `where` names the field, line or record."""

    def __init__(self, refusal: Refusal, where: str = ""):
        self.refusal, self.where = refusal, where
        super().__init__(refusal.at(where))


def code_point(character: str) -> str:
    return f"U+{ord(character):04X}"


def text_refusal(text: str, *, limit: int = MAX_TEXT_LENGTH) -> Refusal | None:
    """Why `text` cannot come in, or None."""
    if len(text) > limit:
        return Refusal("", f"is {len(text):,} characters long; at most {limit:,}", "too_long")
    found = _REFUSED_CHARACTER.search(text)
    if found is None:
        return None
    character = found.group()
    if character == "\x00":
        return Refusal("", "holds a NUL character (U+0000)", "nul")
    if "\ud800" <= character <= "\udfff":
        message = f"holds half of a surrogate pair ({code_point(character)}), which is not text"
        return Refusal("", message, "surrogate")
    if character in _DIRECTION_CONTROLS:
        name = _DIRECTION_CONTROLS[character]
        return Refusal(
            "",
            f"holds a {name} character ({code_point(character)}), which shows text reversed "
            "or out of order; remove it",
            "direction_control",
        )
    return Refusal("", f"holds the control character {code_point(character)}; remove it", "control")


def value_refusal(
    value: Any, *, limit: int = MAX_TEXT_LENGTH, max_depth: int = MAX_DEPTH
) -> Refusal | None:
    """The first refusal anywhere in decoded JSON `value` (keys included), with its path.

    Iterative, so that a value nested deeper than Python's recursion limit is judged too.
    """
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if len(path) > max_depth:
            message = f"nests deeper than {max_depth} levels"
            return Refusal(_dotted(path[:max_depth]), message, "too_deep")
        if isinstance(item, str):
            found = text_refusal(item, limit=limit)
        elif isinstance(item, float) and not math.isfinite(item):
            found = Refusal("", "is a number too large to store", "number")
        elif isinstance(item, dict):
            found = None
            children = []
            for key, child in item.items():
                key_text = str(key)
                if refusal := text_refusal(key_text, limit=MAX_KEY_LENGTH):
                    return Refusal(_dotted(path), f"has a key that {refusal.message}", refusal.code)
                children.append((child, (*path, key_text)))
            stack.extend(reversed(children))
        elif isinstance(item, list | tuple):
            found = None
            stack.extend((child, (*path, str(i))) for i, child in reversed(list(enumerate(item))))
        else:
            found = None
        if found is not None:
            return Refusal(_dotted(path), found.message, found.code)
    return None


def _dotted(path: tuple[str, ...]) -> str:
    return ".".join(shown(part) for part in path)


def shown(text: str, limit: int = 80) -> str:
    """`text` safe to put in a message, a log or the database: refused characters are
    written as escapes (\\x00, \\u202e), and long text is cut."""
    if len(text) > limit:
        text = text[:limit] + "…"
    return _REFUSED_CHARACTER.sub(lambda m: m.group().encode("unicode_escape").decode(), text)


def check_text(text: str, where: str, *, limit: int = MAX_TEXT_LENGTH) -> str:
    """`text`, or InputRefused naming `where`."""
    if refusal := text_refusal(text, limit=limit):
        raise InputRefused(refusal, where)
    return text


def check_value(value: Any, where: str = "") -> Any:
    """Decoded JSON `value`, or InputRefused naming `where` and the path inside it."""
    if refusal := value_refusal(value):
        raise InputRefused(refusal, where)
    return value


def read_json(text: str | bytes, where: str = "", *, check: bool = True) -> Any:
    """Decode JSON whatever its nesting: too deep is InputRefused, never a RecursionError.

    A JSON syntax error is left to the caller as json.JSONDecodeError (it has the line and
    column to report). The decoded value is checked like any other input, unless the caller
    checks it piece by piece to name each record (check=False).
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise InputRefused(
            Refusal("", f"nests deeper than {MAX_DEPTH} levels", "too_deep"), where
        ) from None
    return check_value(value, where) if check else value
