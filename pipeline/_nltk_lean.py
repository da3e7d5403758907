"""Import NLTK without SciPy's statistics package: scoring's start-up, halved.

``import nltk`` runs ``nltk.collocations``, whose association measures import
``scipy.stats`` for one function (``fisher_exact``); that import alone took 0.7-0.9 s of a
scoring run's 1.6 s, and scoring never uses it. Importing this module first imports NLTK with
``scipy.stats`` held back, then gives NLTK a ``fisher_exact`` that imports the real one when
first called, so nothing NLTK can do is lost. When NLTK or ``scipy.stats`` is already
imported there is nothing to save and nothing is changed.
"""

from __future__ import annotations

import sys


def _import_nltk_lean() -> None:
    if "nltk" in sys.modules or "scipy.stats" in sys.modules:
        return
    sys.modules["scipy.stats"] = None  # type: ignore[assignment]  # "import" raises ImportError
    try:
        import nltk  # noqa: F401
    finally:
        del sys.modules["scipy.stats"]
    from nltk.metrics import association

    def fisher_exact(*args: object, **kwargs: object) -> object:
        from scipy.stats import fisher_exact as real

        return real(*args, **kwargs)

    association.fisher_exact = fisher_exact


_import_nltk_lean()
