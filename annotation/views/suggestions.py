"""Pre-suggestions on the P1 and P2/P4 screens, their log, and the managers' page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation import tasks
from annotation.access import manager_required, own_task_or_404, suggesting_task_or_404
from annotation.forms.suggestions import (
    BatchSuggestionsForm,
    ClaimBeingWrittenForm,
    SentencesForm,
    SuggestionOutcomeForm,
)
from annotation.http import AuthenticatedHttpRequest, HtmxHttpRequest
from annotation.models import Batch, Suggestion, SuggestionPoolBuild, SuggestionSettings
from annotation.suggestions import generators, kinds, log, reports
from annotation.suggestions.context import draft_claim_context
from search_proxy import fetch

TEMPLATE = "annotation/suggestions.html"


def _render(request: HtmxHttpRequest, partial: str, context: dict, status: int = 200):
    name = f"{TEMPLATE}#{partial}" if request.htmx else TEMPLATE
    return render(request, name, {"partial": partial, **context}, status=status)


@require_GET
@login_required
def suggest(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """Suggestions for this task, shown only when asked for (and logged as shown)."""
    task = suggesting_task_or_404(request.user, pk)
    context = {"task": task, "kinds": kinds.kinds_for(task)}
    try:
        # P1 has no claim yet: it is being written, so suggestions start from the form.
        if task.claim_id is None:
            form = ClaimBeingWrittenForm(request.GET)
            if not form.is_valid():
                context["unavailable"] = "the claim date must be a date such as 2020-10-31"
                return _render(request, "panel", context, status=422)
            data = form.cleaned_data
            claim = draft_claim_context(
                task,
                data["text"] or task.article.claimreview_claim or task.article.title,
                claim_date=data["claim_date"],
                speaker=data["speaker"],
                reporting_source=data["reporting_source"],
            )
            context["shown"] = generators.suggest_for_normalisation(task, claim)
        else:
            context["shown"] = generators.suggest_for_evidence(task)
    except kinds.SuggestionsUnavailable as exc:
        context["unavailable"] = str(exc)
    return _render(request, "panel", context)


@require_GET
@login_required
def suggest_sentences(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """The sentences of an opened page likeliest to answer the question being worked on."""
    task = suggesting_task_or_404(request.user, pk)
    form = SentencesForm(request.GET)
    context: dict = {"task": task}
    if not form.is_valid():
        context["error"] = "Write the question first, then ask for sentences of the opened page."
        return _render(request, "sentences", context, status=422)
    # The text the viewer showed (its snapshot, or the locally indexed text): never a fetch
    # of its own, so it works offline and the sentence numbers match the viewer's.
    sentences = fetch.stored_sentences(form.cleaned_data["url"])
    if not sentences:
        context["error"] = "Open the page in the viewer first: no text of it is stored here."
        return _render(request, "sentences", context, status=422)
    try:
        context["ranked"] = generators.suggest_sentences(
            task, form.cleaned_data["question"], list(sentences)
        )
    except kinds.SuggestionsUnavailable:
        raise Http404("no sentence suggestions for this task") from None
    return _render(request, "sentences", context)


@require_POST
@login_required
def record_outcome(request: AuthenticatedHttpRequest, pk: int, suggestion_pk: int) -> HttpResponse:
    """Log that a suggestion was accepted, edited or ignored (the anchoring log)."""
    task = own_task_or_404(request.user, pk)
    suggestion = get_object_or_404(Suggestion, pk=suggestion_pk, task=task)
    form = SuggestionOutcomeForm(request.POST)
    if not form.is_valid():
        return HttpResponse(
            "outcome must be accepted, edited or ignored", status=400, content_type="text/plain"
        )
    log.record_outcome(suggestion, form.cleaned_data["outcome"], form.cleaned_data["final_text"])
    return HttpResponse(status=204)


# --- Managers -----------------------------------------------------------------------------


@manager_required
def manage(request: HttpRequest) -> HttpResponse:
    rates = reports.acceptance_rates()
    batches = list(Batch.objects.order_by("-created_at")[:50])
    switches = {s.batch_id: s for s in SuggestionSettings.objects.filter(batch__in=batches)}
    rows = [
        (
            batch,
            BatchSuggestionsForm(
                initial={
                    "kinds_off": switches[batch.pk].kinds_off if batch.pk in switches else [],
                    "ab_split": batch.pk in switches and switches[batch.pk].ab_split,
                },
                prefix=f"batch-{batch.pk}",
            ),
        )
        for batch in batches
    ]
    return render(
        request,
        "annotation/manage_suggestions.html",
        {
            "rates": rates,
            "max_shown": max([r.shown for r in rates] + [1]),
            "batch_rows": rows,
            # Read from the arms recorded on the tasks: still there after a split is switched off.
            "ab": reports.ab_report() if reports.ab_tasks().exists() else [],
            "build": SuggestionPoolBuild.objects.first(),
        },
    )


@require_POST
@manager_required
def set_batch_suggestions(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    batch = get_object_or_404(Batch, pk=pk)
    form = BatchSuggestionsForm(request.POST, prefix=f"batch-{batch.pk}")
    if not form.is_valid():
        messages.error(request, f"Batch {batch}: {form.errors.as_text()}")
        return redirect("annotation:manage-suggestions")
    SuggestionSettings.objects.update_or_create(
        batch=batch,
        defaults={
            "kinds_off": sorted(form.cleaned_data["kinds_off"]),
            "ab_split": form.cleaned_data["ab_split"],
        },
    )
    messages.success(request, f"Suggestion settings of {batch} saved.")
    return redirect("annotation:manage-suggestions")


@require_POST
@manager_required
def build_pool(request: AuthenticatedHttpRequest) -> HttpResponse:
    running = SuggestionPoolBuild.objects.filter(
        status__in=(SuggestionPoolBuild.Status.PENDING, SuggestionPoolBuild.Status.RUNNING)
    ).first()
    if running is None:
        with transaction.atomic():
            running = SuggestionPoolBuild.objects.create(requested_by=request.user)
            build_id = running.pk
            transaction.on_commit(lambda: tasks.build_suggestion_pool.delay(build_id))
    return redirect("annotation:manage-suggestions")


@require_GET
@manager_required
def build_progress(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    build = get_object_or_404(SuggestionPoolBuild, pk=pk)
    return render(request, "annotation/manage_suggestions.html#build", {"build": build})
