"""The saved BM25 index of the local search documents (Document rows), and its readers.

`save_search_index()` writes it into SEARCH_INDEX_DIR after documents are added
(`index_documents`, the demo seed): only the documents added since the last save are
tokenised, unless documents were deleted, which makes it start over. The local backend
asks `current_index()` per search; each process maps the saved arrays once and maps them
again only when a newer generation is saved. `current_index()` answers None, with the
reason, when the ranking must fall back to the database: no saved index, or one that does
not cover the newest documents.

What the index holds per document: its title (twice, so a word in the title counts more,
as the SQLite ranking weights titles) and text, analysed by pipeline.retrieval.fast_analyse;
its key, the Document id; its day, the publication date when that date restricts the
search (given, search engine's or estimated), none otherwise (unknown date, or a
web-archive capture, which is only an upper bound and never hides a page, as in the
database ranking).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from django.conf import settings
from django.db.models import Max

from pipeline.retrieval import BM25Index, fast_analyse
from pipeline.saved_index import SavedIndex, current_generation, save_index
from search_proxy.dates import DateSource
from search_proxy.models import Document

logger = logging.getLogger(__name__)

READ_CHUNK = 5_000
# Dates that only bound a page's publication from above hide nothing (see the local backend).
UNRESTRICTING_SOURCES = frozenset({DateSource.UNKNOWN.value, DateSource.ARCHIVE_TIMESTAMP.value})


def search_index_dir() -> Path:
    return Path(settings.SEARCH_INDEX_DIR)


def indexed_text(title: str, text: str) -> str:
    return f"{title}\n{title}\n{text}" if title else text


def restricting_day(published: date | None, date_source: str) -> date | None:
    return None if published is None or date_source in UNRESTRICTING_SOURCES else published


@dataclass(frozen=True)
class SaveReport:
    documents: int  # in the saved index
    tokenised: int  # documents analysed by this save
    started_over: bool


def save_search_index(
    folder: Path | None = None, *, progress: Callable[[int], object] | None = None
) -> SaveReport:
    """Save the BM25 index of every Document; returns what was done."""
    folder = folder or search_index_dir()
    saved = _load(folder)
    index: BM25Index | None = None
    after_id = 0
    if saved is not None and _still_valid(saved):
        index = saved.to_index()
        after_id = int(saved.meta["last_document_id"])
    started_over = index is None
    if index is None:
        index = BM25Index(analyser=fast_analyse)
    before = len(index)
    rows = (
        Document.objects.filter(pk__gt=after_id)
        .order_by("pk")
        .values_list("pk", "title", "text", "published", "date_source")
    )
    index.add_batches(_batches(rows.iterator(chunk_size=READ_CHUNK), progress))
    last_id = int(index.keys[-1]) if len(index) else 0
    save_index(index, folder, meta={"last_document_id": last_id, "analyser": "fast_analyse"})
    return SaveReport(len(index), len(index) - before, started_over)


def _batches(rows: Iterator[tuple], progress: Callable[[int], object] | None) -> Iterator[tuple]:
    batch: list[tuple] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= READ_CHUNK:
            yield _batch(batch, progress)
            batch = []
    if batch:
        yield _batch(batch, progress)


def _batch(rows: list[tuple], progress: Callable[[int], object] | None) -> tuple:
    if progress is not None:
        progress(len(rows))
    return (
        [indexed_text(title, text) for _pk, title, text, _published, _source in rows],
        [pk for pk, *_ in rows],
        [restricting_day(published, source) for _pk, _t, _x, published, source in rows],
    )


def _still_valid(saved: SavedIndex) -> bool:
    """Whether the saved documents are all still there (then only newer ones are added)."""
    last = saved.meta.get("last_document_id")
    if saved.meta.get("analyser") != "fast_analyse" or last is None:
        return False
    return Document.objects.filter(pk__lte=last).count() == len(saved)


def _load(folder: Path) -> SavedIndex | None:
    try:
        return SavedIndex.load(folder, analyser=fast_analyse)
    except (OSError, ValueError, KeyError) as exc:
        logger.warning("The saved search index in %s cannot be read (%s).", folder, exc)
        return None


# --- Reading, per process -----------------------------------------------------------------

_lock = threading.Lock()
_loaded: dict[Path, SavedIndex] = {}
_last_reason: dict[Path, str] = {}


def current_index() -> tuple[SavedIndex | None, str]:
    """(the saved index to rank with, "") or (None, why the database must rank instead).

    Reading CURRENT is one small file read; the arrays are mapped again only when it names
    a newer generation. The index must cover the newest Document: a document added
    without saving the index (an admin edit, a test) sends searches to the database.
    """
    folder = search_index_dir()
    generation = current_generation(folder)
    if generation is None:
        return _fallback(folder, f"no saved search index in {folder}")
    with _lock:
        index = _loaded.get(folder)
        if index is None or index.generation != generation:
            index = _load(folder)
            if index is None:
                return _fallback(folder, f"the saved search index in {folder} cannot be read")
            _loaded[folder] = index
    newest = Document.objects.aggregate(newest=Max("pk"))["newest"] or 0
    if newest != index.meta.get("last_document_id"):
        return _fallback(
            folder,
            f"the saved search index covers documents up to id "
            f"{index.meta.get('last_document_id')}, the newest is {newest}",
        )
    _last_reason.pop(folder, None)
    return index, ""


def _fallback(folder: Path, reason: str) -> tuple[None, str]:
    # Once per change of reason, not once per search.
    if _last_reason.get(folder) != reason:
        _last_reason[folder] = reason
        logger.warning("Local search ranks in the database: %s.", reason)
    return None, reason
