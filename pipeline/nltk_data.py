"""Where the pipeline finds its NLTK data: the folder, put first on NLTK's search path.

Reading only: provisioning the folder (downloads, Debian packages, the offline Punkt model)
is done outside the pure layer by ``python -m scripts.nltk_data``.

The folder is ``$NLTK_DATA`` (its first entry) if set, else ``<repo>/var/nltk_data``. This
module must not import Django; NLTK itself is imported lazily.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TARGET = REPO_ROOT / "var" / "nltk_data"


def default_target() -> Path:
    """``$NLTK_DATA`` (first entry of the path list) if set, else ``<repo>/var/nltk_data``."""
    env = os.environ.get("NLTK_DATA", "")
    first = next((p for p in env.split(os.pathsep) if p.strip()), None)
    return Path(first).expanduser() if first else DEFAULT_TARGET


def configure(target: str | os.PathLike[str] | None = None) -> Path:
    """Put ``target`` (default: :func:`default_target`) first on ``nltk.data.path``.

    Idempotent: an existing entry is moved to the front rather than duplicated. It does
    not check that the data is there, so importing the pipeline never fails; NLTK raises
    ``LookupError`` at first use instead (see ``pipeline.text``).
    """
    import nltk.data

    path = Path(target).expanduser() if target is not None else default_target()
    path = path.resolve()
    entry = str(path)
    # Remove every spelling of the same folder so the list does not grow on re-imports.
    nltk.data.path[:] = [p for p in nltk.data.path if not _same_path(p, path)]
    nltk.data.path.insert(0, entry)
    return path


def _same_path(entry: object, path: Path) -> bool:
    try:
        return Path(str(entry)).expanduser().resolve() == path
    except (OSError, RuntimeError, ValueError):
        return False
