"""Evidence-processing pipeline: pure Python, no Django imports.

``tokenize`` and ``meteor`` (from :mod:`pipeline.text`) are re-exported lazily, so that
``import pipeline`` stays cheap and ``python -m scripts.nltk_data`` does not import NLTK
data users before it has provisioned the data.
"""

from __future__ import annotations

from typing import Any

__all__ = ["meteor", "tokenize"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from pipeline import text

        return getattr(text, name)
    raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
