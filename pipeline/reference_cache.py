"""The prepared text of a reference file, kept between scoring runs.

Most runs score against the same references (dev.json, a test set); tokenising and stemming
their strings was most of a run's compute. The tokens and Porter stems of every reference
string (as :class:`pipeline.meteor_engine.Meteor` prepares them) are saved once, under a name
made of the reference file's content hash and the digest of the NLTK code the exactness guard
checks, so a changed file or another NLTK never reads a stale entry. A rerun loads them
(marshal: plain data, no code) and prepares only the predictions' new strings.

Entries are written beside and renamed, so readers never see half a file; a read-only or
full disk only costs the speed-up. Used by the command line, ``manage.py score`` and the
scoring jobs of the web app alike (they share the cache folder, ``SCORING_CACHE_DIR``).
No Django here.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from pipeline.meteor_engine import Meteor, default_cache_dir, nltk_source_digest

__all__ = ["content_key", "load_into", "save_from"]

FORMAT = 1


def content_key(data: bytes) -> str:
    """The cache key of a reference file: the SHA-256 of its bytes."""
    return hashlib.sha256(data).hexdigest()


def _path(key: str, cache_dir: Path | None) -> Path | None:
    digest = nltk_source_digest()
    if digest is None:
        return None  # no NLTK source to check against: never trust a saved entry
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return folder / f"references-{key[:32]}-{digest[:16]}.marshal"


def load_into(meteor: Meteor, key: str, cache_dir: Path | None = None) -> int:
    """Prime ``meteor`` with the saved reference strings of ``key``; how many (0: none)."""
    if not meteor.fast:
        return 0
    path = _path(key, cache_dir)
    if path is None:
        return 0
    try:
        fmt, strings, words, stems = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return 0
    if fmt != FORMAT:
        return 0
    meteor.prime(zip(strings, words, stems, strict=True))
    return len(strings)


def save_from(
    meteor: Meteor, key: str, strings: Iterable[str], cache_dir: Path | None = None
) -> bool:
    """Save the prepared form of ``strings`` (the references') under ``key``."""
    if not meteor.fast:
        return False
    path = _path(key, cache_dir)
    if path is None:
        return False
    # Called when load_into found nothing usable: a damaged entry is replaced.
    distinct = list(dict.fromkeys(strings))
    prepared = [meteor.prepared(s) for s in distinct]
    data = marshal.dumps(
        (FORMAT, tuple(distinct), tuple(p[0] for p in prepared), tuple(p[1] for p in prepared))
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(dir=path.parent, prefix=".references-", suffix=".tmp")
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.replace(partial, path)
    except OSError:
        return False
    return True
