"""The knowledge store: per claim, the pages its annotators searched, opened and cited.

The 2024 and 2025 shared tasks give systems, instead of the web, one file per claim
(``<claim_id>.json``, claim ids being positions in the dataset file) of JSON lines, each a
page: ``url`` and ``url2text`` (its text as a list of sentences), with the ``query`` that
found it. This module writes that from what the platform already holds, and fetches nothing:

* **cited**: the source of each answer of the claim's dataset evidence (the snapshot the
  answer was selected from when there is one);
* **opened**: the pages annotators opened from their searches for the claim (page viewer);
* **searched**: the results their searches for the claim showed.

A page comes with the text of a stored snapshot (``search_proxy.FetchedPage``): the newest
one dated before the claim date or, failing that, the newest of unknown date, which is marked
(``"date_unknown": true``). Pages whose every snapshot is dated on or after the claim date are
left out, and so are pages never stored; the report counts both, claim by claim. A page is
listed once per claim, under the strongest way it was met (cited, opened, searched), with
the first query that found it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path

from annotation.models import Claim, EvidenceRound
from exports.dataset import claims_for_export
from search_proxy.models import FetchedPage, SearchClick, SearchLog
from search_proxy.webaddress import normalize_url

Progress = Callable[[int], None]
KINDS = ("cited", "opened", "searched")


def _no_progress(_: int) -> None:
    pass


@dataclass
class ClaimCount:
    """What the knowledge store of one claim holds, and what it had to leave out."""

    claim_id: int
    claim: str
    pages: int = 0
    cited: int = 0
    opened: int = 0
    searched: int = 0
    date_unknown: int = 0
    left_out_after_claim_date: int = 0
    left_out_not_stored: int = 0


@dataclass
class KnowledgeStoreReport:
    claims: list[ClaimCount] = field(default_factory=list)

    @property
    def pages(self) -> int:
        return sum(c.pages for c in self.claims)

    def totals(self) -> dict[str, int]:
        keys = [k for k in asdict(ClaimCount(0, "")) if k not in ("claim_id", "claim")]
        return {k: sum(getattr(c, k) for c in self.claims) for k in keys}

    def as_dict(self) -> dict:
        return {
            "claims": len(self.claims),
            "totals": self.totals(),
            "per_claim": [asdict(c) for c in self.claims],
        }


@dataclass
class _Met:
    url: str
    kind: str
    query: str | None
    snapshot: FetchedPage | None = None  # the answer's own snapshot, for cited pages


def pages_met(claim: Claim) -> list[_Met]:
    """Every page met for the claim, once each (by normalised address), strongest kind first."""
    met: dict[str, _Met] = {}

    def add(url: str, kind: str, query: str | None, snapshot: FetchedPage | None = None):
        if not url or "://" not in url:  # "Metadata", "" and other non-pages of the release
            return
        key = normalize_url(url)
        if key not in met:
            met[key] = _Met(url, kind, query, snapshot)
        elif met[key].query is None and query:
            met[key].query = query

    # claims_for_export() prefetches the dataset's evidence round as `rounds`.
    rounds = getattr(claim, "rounds", None)
    evidence: EvidenceRound | None = (
        claim.dataset_evidence() if rounds is None else next(iter(rounds), None)
    )
    if evidence is not None:
        for question in evidence.questions.all():
            for answer in question.answers.all():
                add(answer.source_url, "cited", None, answer.passage_snapshot)
    clicks = (
        SearchClick.objects.filter(
            task_id__in=claim.tasks.values("pk"), outcome=SearchClick.Outcome.SHOWN
        )
        .select_related("search")
        .order_by("created_at", "pk")
    )
    for click in clicks:
        add(click.url, "opened", click.search.query if click.search else None)
    for search in SearchLog.objects.filter(claim_id=claim.pk, error="").order_by(
        "created_at", "pk"
    ):
        for url in search.result_urls or ():
            if isinstance(url, str):
                add(url, "searched", search.query)
    # A cited page found by a search takes that search's query.
    queries: dict[str, str] = {}
    for search in SearchLog.objects.filter(claim_id=claim.pk).order_by("created_at", "pk"):
        for url in search.result_urls or ():
            if isinstance(url, str):
                queries.setdefault(normalize_url(url), search.query)
    for key, page in met.items():
        if page.query is None:
            page.query = queries.get(key)
    order = {kind: i for i, kind in enumerate(KINDS)}
    return sorted(met.values(), key=lambda page: order[page.kind])


def snapshot_for(url: str, claim_date: date | None) -> tuple[FetchedPage | None, str]:
    """The stored snapshot to give for a page, and why none when there is none.

    Newest dated before the claim date; else newest of unknown date; "after" when all are
    dated on or after it, "not stored" when there is none.
    """
    snapshots = list(FetchedPage.objects.of_url(url))
    if not snapshots:
        return None, "not stored"
    before = [
        s for s in snapshots if s.published and (claim_date is None or s.published < claim_date)
    ]
    if before:
        return before[0], ""
    undated = [s for s in snapshots if s.published is None]
    if undated:
        return undated[0], ""
    return None, "after"


def store_lines(claim: Claim, claim_id: int, count: ClaimCount) -> list[dict]:
    """The JSON lines of one claim's knowledge store, counted into ``count``."""
    lines = []
    for page in pages_met(claim):
        snapshot = page.snapshot
        usable = snapshot is not None and (
            snapshot.published is None
            or claim.claim_date is None
            or snapshot.published < claim.claim_date
        )
        reason = ""
        if not usable:
            snapshot, reason = snapshot_for(page.url, claim.claim_date)
        if snapshot is None:
            if reason == "after":
                count.left_out_after_claim_date += 1
            else:
                count.left_out_not_stored += 1
            continue
        unknown = snapshot.published is None
        lines.append(
            {
                "claim_id": claim_id,
                "type": page.kind,
                "query": page.query,
                "url": page.url,
                "url2text": list(snapshot.sentences),
                "published": snapshot.published.isoformat() if snapshot.published else None,
                "date_unknown": unknown,
                "fetched_at": snapshot.fetched_at.isoformat(),
            }
        )
        count.pages += 1
        count.date_unknown += unknown
        setattr(count, page.kind, getattr(count, page.kind) + 1)
    return lines


def write_knowledge_store(
    folder: Path, claims: Iterable[Claim] | None = None, progress: Progress = _no_progress
) -> KnowledgeStoreReport:
    """One ``<claim_id>.json`` per claim (dataset order; the ids of the gold export of the
    same selection) and ``report.json`` with the counts. Each file is written beside and
    renamed, so it is whole or absent."""
    folder.mkdir(parents=True, exist_ok=True)
    report = KnowledgeStoreReport()
    claims = claims if claims is not None else claims_for_export()
    for claim_id, claim in enumerate(claims):
        count = ClaimCount(claim_id, claim.text)
        lines = store_lines(claim, claim_id, count)
        _write_whole(
            folder / f"{claim_id}.json",
            "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines),
        )
        report.claims.append(count)
        progress(1)
    _write_whole(folder / "report.json", json.dumps(report.as_dict(), indent=2) + "\n")
    return report


def _write_whole(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
