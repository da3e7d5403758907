"""Training on gold claims (P1-P3) with side-by-side feedback, and the thresholds page."""

from contextlib import suppress
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation import training
from annotation.access import manager_required
from annotation.blindness import blind_claim, is_blind
from annotation.forms.training import ThresholdsForm, TrainingForm
from annotation.http import AuthenticatedHttpRequest
from annotation.models import (
    Claim,
    QualificationThresholds,
    TrainingAnswer,
    TrainingDraw,
    User,
)
from annotation.views.phase1 import article_links
from annotation.vocabulary import Phase
from search_proxy import service
from search_proxy.backends import SearchUnavailable


def _training_phase(phase: int) -> Phase:
    if phase not in training.TRAINING_PHASES:
        raise Http404("there is no training for this phase")
    return Phase(phase)


def _page(
    request: AuthenticatedHttpRequest,
    phase: Phase,
    claim: Claim | None,
    form,
    status: int = 200,
    refusal: str = "",
    panel: dict[str, Any] | None = None,
):
    """The training page; `panel` fills the search panel for a search without JavaScript."""
    blind = claim is not None and is_blind(phase)
    return render(
        request,
        "annotation/training.html",
        {
            "phase": phase,
            "claim_pk": claim.pk if claim else None,
            # P3 training is blind like P3: the claim's blind view and the gold QA pairs,
            # never the label.
            "claim": blind_claim(claim) if blind and claim is not None else claim,
            "pairs": training.gold_pairs(claim) if blind and claim is not None else [],
            # As in the real phase: P1 and P2 read the fact-checking article; P2 also
            # searches pages from before the claim date. P3 is blind to both.
            "links": article_links(claim.article.url) if claim and not blind else None,
            # A training page's parts by phase, not a task's dispatch (test_phase_dispatch).
            "searches": claim is not None and phase == Phase.QUESTIONS,
            "form": form,
            "standing": training.standing(request.user, phase, explain=True),
            "qualified": request.user.is_qualified_for(phase),
            "refusal": refusal,
            **(panel or {}),
        },
        status=status,
    )


@login_required
def train(request: AuthenticatedHttpRequest, phase: int) -> HttpResponse:
    phase = _training_phase(phase)
    # The trainee's own sequence is drawn on their first visit and kept. When the pool
    # cannot give one, the standing on the page says why (Standing.problem).
    with suppress(training.TrainingRefused):
        training.draw(request.user, phase)
    claim = training.next_training_claim(request.user, phase)
    return _page(request, phase, claim, TrainingForm(phase) if claim else None)


@require_POST
@login_required
def hand_in(request: AuthenticatedHttpRequest, phase: int, claim_pk: int) -> HttpResponse:
    phase = _training_phase(phase)
    claim = get_object_or_404(training.gold_claims(), pk=claim_pk)
    form = TrainingForm(phase, request.POST)
    if not form.is_valid():
        return _page(request, phase, claim, form, status=422)
    try:
        answer = training.hand_in(request.user, phase, claim, form.answer())
    except training.TrainingRefused as exc:
        # Not this trainee's next drawn claim: nothing is recorded; the page shows the
        # claim that is.
        following = training.next_training_claim(request.user, phase)
        return _page(
            request,
            phase,
            following,
            TrainingForm(phase) if following else None,
            status=409,
            refusal=str(exc),
        )
    return redirect("annotation:training-feedback", pk=answer.pk)


@login_required
def search(request: AuthenticatedHttpRequest, phase: int, claim_pk: int) -> HttpResponse:
    """The P2 search panel of training, bounded like the real one (pages before the claim
    date, never its own article); only for a claim drawn for this trainee."""
    if phase != Phase.QUESTIONS:
        raise Http404("only P2 training searches")
    item = get_object_or_404(
        TrainingDraw.objects.select_related("claim__article"),
        annotator=request.user,
        phase=phase,
        claim_id=claim_pk,
    )
    claim = item.claim
    query = request.GET.get("q", "").strip()
    context = {"query": query, "claim_pk": claim.pk, "phase": Phase(phase)}
    if query:
        try:
            context["results"] = service.search(
                query,
                before=claim.claim_date,
                country=claim.location_iso_code,
                page=1,
                user=request.user,
                scope=claim.search_scope(),
            )
        except (service.SearchError, SearchUnavailable) as exc:
            context["error"] = str(exc)
    context["search_url"] = reverse("annotation:training-search", args=[phase, claim.pk])
    if request.htmx:
        return render(request, "annotation/training.html#training-search-results", context)
    # Without JavaScript (the plain form), the whole page with the results, as the editor's
    # search panel answers.
    found = {k: v for k, v in context.items() if k not in ("claim_pk", "phase")}
    return _page(request, Phase(phase), claim, TrainingForm(Phase(phase)), panel=found)


@login_required
def feedback(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    answer = get_object_or_404(
        TrainingAnswer.objects.select_related("claim"), pk=pk, annotator=request.user
    )
    return render(
        request,
        "annotation/training_feedback.html",
        {
            "answer": answer,
            "phase": Phase(answer.phase),
            "rows": training.feedback(answer),
            "standing": training.standing(request.user, answer.phase),
            "qualified": request.user.is_qualified_for(answer.phase),
        },
    )


@manager_required
def qualification(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = ThresholdsForm(request.POST or None, instance=QualificationThresholds.current())
    if request.method == "POST" and form.is_valid():
        training.set_thresholds(
            request.user, **{name: form.cleaned_data[name] for name in form.Meta.fields}
        )
        messages.success(request, "The qualification thresholds are saved.")
        return redirect("annotation:qualification")
    return render(
        request,
        "annotation/qualification.html",
        {
            "form": form,
            "trainees": training.training_overview(),
            "phases": training.TRAINING_PHASES,
        },
        status=422 if form.errors else 200,
    )


@manager_required
def trainee(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """One trainee's scores and answers, phase by phase, beside the gold."""
    person = get_object_or_404(User, pk=pk)
    return render(
        request,
        "annotation/trainee.html",
        {"person": person, "record": training.trainee_record(person)},
    )
