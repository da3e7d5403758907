"""Pre-suggestions: which task may see which kind, the pool behind them, and their log.

The rules live here once, and the P1 and P2/P4 screens, the log endpoint, the manager page,
the Celery job and the command all call them:

* **Which kinds a task may see** (:func:`kinds_for`): P1 gets likely duplicates and claim
  types/strategies; P2 and P4 get question templates, a search query and ranked sentences;
  the blind phases P3 and P5 get nothing, ever. A manager can switch kinds off per batch,
  and while a batch runs an A/B split, each new task draws its arm once, at creation
  (``Task.suggestion_arm``); the "without" arm gets no suggestions at all.
* **Only the past** (:func:`claim_context`): every suggestion for a claim reads only claims
  dated before it and never a claim of its article (the pipeline's one mask); the benchmark
  builds the same context from dev.json and calls the same methods.
* **No verdict outside P1**: only the duplicate list carries verdicts (a P1 annotator reads
  the fact-check's verdict in the article anyway); P2/P4 suggestions are question texts,
  words and sentence numbers. Even there, a duplicate shows its verdict only when the
  annotator can never be asked to judge it blind (annotation/visibility.py).
* **Anchoring log**: every suggestion shown is a :class:`Suggestion` row, once per task
  however often it is asked for (a unique constraint on its fingerprint); accepting,
  editing or ignoring it stamps that row (:func:`record_outcome`).

The pool (BM25 indexes and classifiers of :mod:`pipeline.suggest`) is built from accepted
claims by :func:`build_pool` into ``settings.SUGGESTION_POOL_DIR`` and read by the web
process once, again only when a newer build is written (:func:`current_pool`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from django.conf import settings
from django.db.models import Avg, Count, F, Q, QuerySet
from django.utils import timezone

from annotation.models import (
    Claim,
    EvidenceRound,
    Suggestion,
    SuggestionPoolBuild,
    SuggestionSettings,
    Task,
)
from annotation.visibility import claims_with_visible_verdict
from annotation.vocabulary import Phase, SuggestionKind
from pipeline.suggest import ClaimContext, ClaimPool, PoolClaim, rank_sentences

PHASE_KINDS: dict[int, tuple[str, ...]] = {
    Phase.NORMALISATION: (SuggestionKind.DUPLICATES, SuggestionKind.CLAIM_LABELS),
    Phase.QUESTIONS: (
        SuggestionKind.QUESTIONS,
        SuggestionKind.SEARCH_QUERY,
        SuggestionKind.SENTENCES,
    ),
    Phase.DISPUTE: (
        SuggestionKind.QUESTIONS,
        SuggestionKind.SEARCH_QUERY,
        SuggestionKind.SENTENCES,
    ),
    # P3 and P5 are blind: no entry, so no suggestion of any kind.
}


class SuggestionsUnavailable(Exception):
    """The pool has not been built yet, or the kind is off for this task."""


# --- Who may see what ---------------------------------------------------------------------


def batch_settings(task: Task) -> SuggestionSettings | None:
    batch_id = task.article.batch_id
    if batch_id is None:
        return None
    return SuggestionSettings.objects.filter(batch_id=batch_id).first()


def kinds_for(task: Task) -> tuple[str, ...]:
    """The suggestion kinds this task may be shown; empty for blind phases and for tasks
    drawn into the A/B split's arm without suggestions."""
    kinds = PHASE_KINDS.get(task.phase, ())
    if not kinds or task.suggestion_arm == Task.SuggestionArm.WITHOUT:
        return ()
    switches = batch_settings(task)
    off = set(switches.kinds_off) if switches else set()
    return tuple(k for k in kinds if k not in off)


def require_kind(task: Task, kind: str) -> None:
    if kind not in kinds_for(task):
        raise SuggestionsUnavailable(f"no {kind} suggestions for this task")


# --- The pool -----------------------------------------------------------------------------


def pool_folder() -> Path:
    return Path(settings.SUGGESTION_POOL_DIR)


_loaded: dict[str, tuple[float, ClaimPool]] = {}
_lock = threading.Lock()


def current_pool() -> ClaimPool:
    """The built pool, loaded once per process and again only after a newer build."""
    marker = pool_folder() / "pool.json"
    try:
        stamp = marker.stat().st_mtime
    except FileNotFoundError as exc:
        raise SuggestionsUnavailable(
            "suggestions are not ready yet: a manager has to build them first"
        ) from exc
    key = str(marker)
    with _lock:
        cached = _loaded.get(key)
        if cached is None or cached[0] != stamp:
            _loaded[key] = (stamp, ClaimPool.load(pool_folder()))
        return _loaded[key][1]


def _questions(claim: Claim) -> tuple[str, ...]:
    evidence: EvidenceRound | None = claim.dataset_evidence()
    if evidence is None:
        return ()
    return tuple(q.text for q in evidence.questions.order_by("position"))


def pool_claim(claim: Claim) -> PoolClaim:
    article = claim.article
    return PoolClaim(
        id=claim.pk,
        text=claim.text,
        claim_date=claim.claim_date,
        speaker=claim.speaker or "",
        label=claim.label or "",
        claim_types=tuple(claim.claim_types or ()),
        strategies=tuple(claim.fact_checking_strategies or ()),
        questions=_questions(claim),
        fact_check_text=" ".join(
            part
            for part in (
                article.title,
                article.claimreview_claim,
                _url_words(article.url),
                claim.justification or "",
            )
            if part
        ),
        article=article.normalized_url,
        reporting_source=claim.reporting_source or "",
        article_url=article.url,
    )


def claim_context(claim: Claim) -> ClaimContext:
    """What the suggestions for a P2/P4 claim know of it (the benchmark's context_of())."""
    return ClaimContext(
        text=claim.text,
        claim_date=claim.claim_date,
        article=claim.article.normalized_url,
        speaker=claim.speaker or "",
        reporting_source=claim.reporting_source or "",
        article_url=claim.article.url,
    )


class ClaimDateMissing(SuggestionsUnavailable):
    """P1 suggestions need the claim's date: they may only use claims made before it."""


def draft_claim_context(
    task: Task,
    text: str,
    *,
    claim_date: date | None = None,
    speaker: str = "",
    reporting_source: str = "",
) -> ClaimContext:
    """What the suggestions for a claim being written in P1 know of it. Its date is the one
    typed on its card, else the ClaimReview's claim date, else the fact-check's publication
    date (a claim is older than its fact-check); without any, nothing can be suggested."""
    article = task.article
    day = claim_date or article.claimreview_date or article.published_on
    if day is None:
        raise ClaimDateMissing(
            "type the claim date first: suggestions only use claims made before it"
        )
    return ClaimContext(
        text=text,
        claim_date=day,
        article=article.normalized_url,
        speaker=speaker or article.claimreview_claimant,
        reporting_source=reporting_source,
        article_url=article.url,
    )


def _url_words(url: str) -> str:
    # Fact-checkers put the story in the address ("fact-check-sean-connery-letter-...").
    tail = url.rstrip("/").rsplit("/", 1)[-1]
    return tail.replace("-", " ").replace("_", " ").rsplit(".", 1)[0]


def build_pool(progress: Callable[[int, int], None] | None = None) -> int:
    """Build the pool from every accepted claim and write it; returns the claim count."""
    claims = Claim.objects.accepted().select_related("article").order_by("id")
    total = claims.count()
    records: list[PoolClaim] = []
    for claim in claims.iterator(chunk_size=500):
        records.append(pool_claim(claim))
        if progress and len(records) % 100 == 0:
            progress(len(records), total)
    pool = ClaimPool.build(records)
    pool.save(pool_folder())
    if progress:
        progress(total, total)
    return total


def run_build(build_id: int) -> None:
    """The Celery job's body: claim the build row, build, record the outcome."""
    # Claim first: a redelivered message finds the row no longer pending and does nothing.
    if not SuggestionPoolBuild.objects.filter(
        pk=build_id, status=SuggestionPoolBuild.Status.PENDING
    ).update(status=SuggestionPoolBuild.Status.RUNNING):
        return

    def progress(done: int, total: int) -> None:
        SuggestionPoolBuild.objects.filter(pk=build_id).update(claims_done=done, claims_total=total)

    try:
        build_pool(progress)
    except Exception as exc:
        SuggestionPoolBuild.objects.filter(pk=build_id).update(
            status=SuggestionPoolBuild.Status.FAILED, error=str(exc), finished_at=timezone.now()
        )
        raise
    SuggestionPoolBuild.objects.filter(pk=build_id).update(
        status=SuggestionPoolBuild.Status.DONE, finished_at=timezone.now()
    )


# --- Suggesting (each call logs what it shows, once per task) ------------------------------


def _show(task: Task, kind: str, items: Iterable[tuple[str, dict]]) -> list[Suggestion]:
    """The suggestion rows of these items, in order: made the first time the task is shown
    each one, the same rows (with what became of them) every later time."""
    items = list(items)
    rows = [
        Suggestion(
            task=task,
            annotator=task.annotator,
            kind=kind,
            position=position,
            text=text,
            fingerprint=Suggestion.fingerprint_of(text),
            details=details,
        )
        for position, (text, details) in enumerate(items)
    ]
    # The unique constraint makes a repeat (or a second request racing this one) a no-op.
    Suggestion.objects.bulk_create(rows, ignore_conflicts=True)
    stored = {
        s.fingerprint: s
        for s in Suggestion.objects.filter(
            task=task, kind=kind, fingerprint__in=[r.fingerprint for r in rows]
        )
    }
    unique = {r.fingerprint: None for r in rows if r.fingerprint in stored}
    return [stored[fingerprint] for fingerprint in unique]


def suggest_for_evidence(task: Task) -> dict[str, list[Suggestion]]:
    """P2/P4: question templates and a search query for this task's claim."""
    kinds = kinds_for(task)
    assert task.claim is not None  # P2 and P4 tasks are always of a claim
    context = claim_context(task.claim)
    shown: dict[str, list[Suggestion]] = {}
    if SuggestionKind.QUESTIONS in kinds:
        candidates = current_pool().candidate_questions(context)
        shown[SuggestionKind.QUESTIONS] = _show(
            task,
            SuggestionKind.QUESTIONS,
            ((c.text, {"from_claim": c.from_claim_id}) for c in candidates),
        )
    if SuggestionKind.SEARCH_QUERY in kinds:
        query = current_pool().search_query(context)
        shown[SuggestionKind.SEARCH_QUERY] = _show(
            task, SuggestionKind.SEARCH_QUERY, [(query, {})] if query else []
        )
    return shown


def suggest_sentences(task: Task, question: str, sentences: list[str]) -> list[Suggestion]:
    """P2/P4: the sentences of an opened page likeliest to answer ``question``."""
    require_kind(task, SuggestionKind.SENTENCES)
    assert task.claim is not None  # P2 and P4 tasks are always of a claim
    ranked = rank_sentences(question, sentences, claim=task.claim.text, k=5)
    return _show(
        task,
        SuggestionKind.SENTENCES,
        ((sentences[i], {"sentence": i, "question": question}) for i in ranked),
    )


@dataclass(frozen=True)
class ClaimLabelHint:
    field: str  # "claim_types" or "fact_checking_strategies"
    label: str
    probability: float


def suggest_for_normalisation(task: Task, context: ClaimContext) -> dict[str, list[Suggestion]]:
    """P1: likely duplicates (with verdicts) and claim types/strategies for the claim being
    written (see draft_claim_context())."""
    kinds = kinds_for(task)
    shown: dict[str, list[Suggestion]] = {}
    if not context.text.strip():
        return shown
    pool = current_pool()
    if SuggestionKind.DUPLICATES in kinds:
        hits = pool.duplicates(context)
        assert task.annotator is not None  # suggestions are shown on a task someone holds
        # A verdict only for claims this annotator can never be asked to judge blind
        # (annotation/visibility.py): not an open agreement sample, not a gold claim their
        # training may still test them on, not a claim they may check.
        judged = set(
            claims_with_visible_verdict(
                task.annotator, Claim.objects.filter(pk__in=[h.claim_id for h in hits])
            ).values_list("pk", flat=True)
        )
        shown[SuggestionKind.DUPLICATES] = _show(
            task,
            SuggestionKind.DUPLICATES,
            (
                (
                    h.text,
                    {
                        "claim": h.claim_id,
                        "verdict": h.label if h.claim_id in judged else "",
                        "claim_date": h.claim_date.isoformat() if h.claim_date else "",
                    },
                )
                for h in hits
            ),
        )
    if SuggestionKind.CLAIM_LABELS in kinds:
        labels = pool.claim_labels(context)
        items = [
            (label, {"field": "claim_types", "probability": round(p, 2)})
            for label, p in labels["claim_types"]
        ] + [
            (label, {"field": "fact_checking_strategies", "probability": round(p, 2)})
            for label, p in labels["strategies"]
        ]
        shown[SuggestionKind.CLAIM_LABELS] = _show(task, SuggestionKind.CLAIM_LABELS, items)
    return shown


# --- The log ------------------------------------------------------------------------------

# Keyed by the stored values (str): outcomes arrive as text from the screen and the API.
_STAMPS: dict[str, str] = {
    Suggestion.Outcome.ACCEPTED: "accepted_at",
    Suggestion.Outcome.EDITED: "edited_at",
    Suggestion.Outcome.IGNORED: "ignored_at",
}
# An outcome never goes back: edited implies accepted; an accepted one is not "ignored".
_RANK: dict[str, int] = {
    Suggestion.Outcome.SHOWN: 0,
    Suggestion.Outcome.IGNORED: 1,
    Suggestion.Outcome.ACCEPTED: 2,
    Suggestion.Outcome.EDITED: 3,
}


def record_outcome(suggestion: Suggestion, outcome: str, final_text: str = "") -> Suggestion:
    """Stamp what the annotator did with a suggestion; repeats and step-backs change nothing."""
    if outcome not in _STAMPS:
        raise ValueError(f"unknown suggestion outcome {outcome!r}")
    now = timezone.now()
    fields: list[str] = []
    stamp = _STAMPS[outcome]
    if getattr(suggestion, stamp) is None:
        setattr(suggestion, stamp, now)
        fields.append(stamp)
    if outcome == Suggestion.Outcome.EDITED and suggestion.accepted_at is None:
        suggestion.accepted_at = now
        fields.append("accepted_at")
    if _RANK[outcome] > _RANK[suggestion.outcome]:
        suggestion.outcome = outcome
        fields.append("outcome")
    if final_text and outcome in (Suggestion.Outcome.ACCEPTED, Suggestion.Outcome.EDITED):
        suggestion.final_text = final_text
        fields.append("final_text")
    if fields:
        suggestion.save(update_fields=fields)
    return suggestion


def ignore_the_rest(task: Task) -> int:
    """When a task is handed in, every suggestion still merely shown was ignored."""
    return Suggestion.objects.filter(task=task, outcome=Suggestion.Outcome.SHOWN).update(
        outcome=Suggestion.Outcome.IGNORED, ignored_at=timezone.now()
    )


# --- Reports for managers -----------------------------------------------------------------


@dataclass(frozen=True)
class KindRate:
    kind: str
    label: str
    shown: int
    accepted: int
    edited: int
    ignored: int

    @property
    def acceptance(self) -> float:
        return self.accepted / self.shown if self.shown else 0.0


def acceptance_rates(suggestions=None) -> list[KindRate]:
    """Per kind: shown, accepted (edited ones included), edited, ignored."""
    suggestions = suggestions if suggestions is not None else Suggestion.objects.all()
    counts = {
        row["kind"]: row
        for row in suggestions.values("kind").annotate(
            shown=Count("id"),
            accepted=Count("id", filter=Q(accepted_at__isnull=False)),
            edited=Count("id", filter=Q(edited_at__isnull=False)),
            ignored=Count("id", filter=Q(outcome=Suggestion.Outcome.IGNORED)),
        )
    }
    return [
        KindRate(
            kind,
            label,
            counts.get(kind, {}).get("shown", 0),
            counts.get(kind, {}).get("accepted", 0),
            counts.get(kind, {}).get("edited", 0),
            counts.get(kind, {}).get("ignored", 0),
        )
        for kind, label in SuggestionKind.choices
    ]


@dataclass(frozen=True)
class ArmReport:
    arm: str
    tasks: int
    mean_minutes: float | None
    checked: int  # evidence rounds that got a quality check
    agreeing: int  # ... whose check reached the same verdict

    @property
    def agreement(self) -> float | None:
        return self.agreeing / self.checked if self.checked else None


def ab_tasks() -> QuerySet[Task]:
    """Handed-in P2/P4 tasks that were drawn into an arm of an A/B split, split on or off."""
    return Task.objects.filter(
        phase__in=(Phase.QUESTIONS, Phase.DISPUTE),
        status=Task.Status.SUBMITTED,
        suggestion_arm__in=(Task.SuggestionArm.WITH, Task.SuggestionArm.WITHOUT),
    ).exclude(opened_at=None)


def ab_report(tasks: QuerySet[Task] | None = None) -> list[ArmReport]:
    """Time per submitted P2/P4 task and P3 agreement, per arm recorded on the tasks."""
    tasks = tasks if tasks is not None else ab_tasks()
    reports = []
    for arm in (Task.SuggestionArm.WITH, Task.SuggestionArm.WITHOUT):
        chosen = tasks.filter(suggestion_arm=arm)
        duration = chosen.aggregate(mean=Avg(F("submitted_at") - F("opened_at")))["mean"]
        rounds = EvidenceRound.objects.filter(task__in=chosen)
        checked = rounds.filter(quality_checks__submitted_at__isnull=False).distinct()
        agreeing = checked.filter(quality_checks__verdict=F("verdict")).distinct()
        reports.append(
            ArmReport(
                str(arm.label),
                chosen.count(),
                duration / timedelta(minutes=1) if duration is not None else None,
                checked.count(),
                agreeing.count(),
            )
        )
    return reports
