"""What a new username may be: one form, and never a look-alike of an existing one.

Sign-in on the site reads a username in Unicode's NFKC form (Django's UsernameField), so a
name stored in another form (full-width "wide1") could never sign in there: every new name is
stored in NFKC form, and the token endpoint reads names the same way. After that a name is
plain ASCII letters, digits and . _ @ + -, starting with a letter or digit, which leaves no
room for look-alikes from other scripts (a Cyrillic "a" in "annotator1") or for a name that
a spreadsheet would read as a formula. Within ASCII, a name whose skeleton (case folded,
0→o, 1/i→l, rn→m, vv→w) equals an existing name's is refused too: "Annotator1" or
"annotatorl" beside "annotator1" would fool a manager reading a list.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

MAX_LENGTH = 150
_ALLOWED = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]*")
_LOOK_ALIKE_LETTERS = str.maketrans({"0": "o", "1": "l", "i": "l"})


def normalised(name: str) -> str:
    """The form a username is stored and signed in with (NFKC, no outer spaces)."""
    return unicodedata.normalize("NFKC", name).strip()


def skeleton(name: str) -> str:
    """What a name looks like to a reader: equal skeletons are confusable names."""
    folded = normalised(name).casefold().replace("rn", "m").replace("vv", "w")
    return folded.translate(_LOOK_ALIKE_LETTERS)


def by_skeleton(names: Iterable[str]) -> dict[str, str]:
    """Existing names by their skeleton, to look new ones up in."""
    return {skeleton(name): name for name in names}


def username_problem(name: str, taken: dict[str, str]) -> str | None:
    """Why `name` (already normalised) cannot be a new username beside the names `taken`
    (by_skeleton of the existing ones), or None."""
    if not name:
        return "a username cannot be empty"
    if len(name) > MAX_LENGTH:
        return f"a username has at most {MAX_LENGTH} characters"
    if not _ALLOWED.fullmatch(name):
        return (
            f"{name!a} is not a valid username: use the letters a-z and A-Z, digits and "
            ". _ @ + - (starting with a letter or digit)"
        )
    other = taken.get(skeleton(name))
    if other == name:
        return f"{name!r} already has an account"
    if other is not None:
        return f"{name!r} looks like the existing account {other!r}; choose another name"
    return None
