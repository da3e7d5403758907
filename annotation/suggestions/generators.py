"""The suggestions themselves, for P1 and P2/P4; each call logs what it shows (log.py)."""

from __future__ import annotations

from annotation.models import Claim, Suggestion, Task
from annotation.suggestions.context import claim_context
from annotation.suggestions.kinds import kinds_for, require_kind
from annotation.suggestions.log import show
from annotation.suggestions.pool import current_pool
from annotation.visibility import claims_with_visible_verdict
from annotation.vocabulary import SuggestionKind
from pipeline.suggest import ClaimContext, rank_sentences


def suggest_for_evidence(task: Task) -> dict[str, list[Suggestion]]:
    """P2/P4: question templates and a search query for this task's claim."""
    kinds = kinds_for(task)
    assert task.claim is not None  # P2 and P4 tasks are always of a claim
    context = claim_context(task.claim)
    shown: dict[str, list[Suggestion]] = {}
    if SuggestionKind.QUESTIONS in kinds:
        candidates = current_pool().candidate_questions(context)
        shown[SuggestionKind.QUESTIONS] = show(
            task,
            SuggestionKind.QUESTIONS,
            ((c.text, {"from_claim": c.from_claim_id}) for c in candidates),
        )
    if SuggestionKind.SEARCH_QUERY in kinds:
        query = current_pool().search_query(context)
        shown[SuggestionKind.SEARCH_QUERY] = show(
            task, SuggestionKind.SEARCH_QUERY, [(query, {})] if query else []
        )
    return shown


def suggest_sentences(task: Task, question: str, sentences: list[str]) -> list[Suggestion]:
    """P2/P4: the sentences of an opened page likeliest to answer ``question``."""
    require_kind(task, SuggestionKind.SENTENCES)
    assert task.claim is not None  # P2 and P4 tasks are always of a claim
    ranked = rank_sentences(question, sentences, claim=task.claim.text, k=5)
    return show(
        task,
        SuggestionKind.SENTENCES,
        ((sentences[i], {"sentence": i, "question": question}) for i in ranked),
    )


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
        shown[SuggestionKind.DUPLICATES] = show(
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
        shown[SuggestionKind.CLAIM_LABELS] = show(task, SuggestionKind.CLAIM_LABELS, items)
    return shown
