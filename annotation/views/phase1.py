"""Phase 1: turning a fact-checking article into normalised claims."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_countries import countries

from annotation import handin, workflow
from annotation.access import editor_task, own_task_or_404
from annotation.dates import DateNotUnderstood, earliest_date
from annotation.forms.phase1 import SkipForm, claim_formset, draft_from_post
from annotation.guidelines import (
    CLAIM_TYPE_HELP,
    P1_GUIDE,
    SKIP_HELP,
    STRATEGY_HELP,
    TOURS,
    VERDICT_HELP,
)
from annotation.http import AuthenticatedHttpRequest
from annotation.models import Task
from annotation.suggestions.kinds import kinds_for
from annotation.views.editing import (
    conflict_context,
    hand_in_post,
    journal_context,
    next_task_or_panel,
)
from annotation.vocabulary import Phase, exclusion_reason
from annotation.wording import wording_warnings
from search_proxy.fetch import read_page
from search_proxy.webaddress import archive_timestamp, unwrap_archive_url

TEMPLATE = "annotation/phase1.html"


def article_links(url: str) -> dict:
    """The live page and an archived copy; the frame shows the archived copy because many
    fact-checking sites refuse to be framed."""
    live = unwrap_archive_url(url)
    archived = url if archive_timestamp(url) else f"https://web.archive.org/web/2/{live}"
    return {"live": live, "archived": archived}


def error_summary(formset) -> list[dict]:
    """What blocks a submission, claim by claim in screen order, each linking to its field
    (a group of choices links to its first choice)."""
    summary = [{"anchor": "claims", "where": "", "message": m} for m in formset.non_form_errors()]
    for number, form in enumerate(formset.forms, start=1):
        summary += [
            {"anchor": "claims", "where": f"Claim {number}", "message": m}
            for m in form.non_field_errors()
        ]
        for name in form.errors:
            if name == NON_FIELD_ERRORS:
                continue
            field = form[name]
            choices = isinstance(
                field.field.widget, (forms.RadioSelect, forms.CheckboxSelectMultiple)
            )
            summary += [
                {
                    "anchor": f"{field.auto_id}_0" if choices else field.auto_id,
                    "where": f"Claim {number}: {field.label}",
                    "message": message,
                }
                for message in field.errors
            ]
    return summary


def _context(request: AuthenticatedHttpRequest, task: Task, formset, **extra) -> dict:
    article = task.article
    return {
        "task": task,
        "article": article,
        "links": article_links(article.url),
        "formset": formset,
        "skip_form": extra.pop("skip_form", SkipForm()),
        "guide": P1_GUIDE,
        "skip_help": SKIP_HELP,
        "verdict_help": VERDICT_HELP,
        "claim_type_help": CLAIM_TYPE_HELP,
        "strategy_help": STRATEGY_HELP,
        "countries": list(countries),
        "show_tour": "p1" not in request.user.completed_tours,
        "tour_steps": TOURS["p1"],
        "suggestion_kinds": kinds_for(task),
        **journal_context(task),
        "warnings": {
            i: wording_warnings(f["text"].value() or "", f["speaker"].value())
            for i, f in enumerate(formset.forms)
        },
        **extra,
    }


@require_GET
@login_required
def article_text(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """The article's readable text from its snapshot (the fragment the P1 pane loads), or the
    locally indexed text with the reason the page could not be fetched."""
    task = own_task_or_404(request.user, pk)
    if task.phase != Phase.NORMALISATION:
        raise Http404("This task has no article to read.")
    context = {
        "task": task,
        "article": task.article,
        "links": article_links(task.article.url),
        "reading": read_page(task.article.url),
    }
    return render(request, f"{TEMPLATE}#article-text", context)


def normalisation_page(request: AuthenticatedHttpRequest, task: Task) -> HttpResponse:
    """The editor, with the saved draft restored (or the ClaimReview text as a start)."""
    claims = task.draft.get("claims") if task.draft else None
    if not claims:
        claims = [
            {"text": task.article.claimreview_claim, "speaker": task.article.claimreview_claimant}
        ]
    return render(request, TEMPLATE, _context(request, task, claim_formset(initial=claims)))


def draft_warnings(task: Task, draft: dict) -> dict:
    """The wording hints of each claim, refreshed beside the editor after an autosave."""
    return {
        "claims": {
            i: wording_warnings(c.get("text", ""), c.get("speaker"))
            for i, c in enumerate(draft.get("claims", []))
        }
    }


def handed_in(task: Task) -> dict:
    """The claims this task made, for its read-only page once submitted."""
    return {"own_claims": task.article.claims.order_by("position")}


@require_POST
@login_required
def submit(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    task = editor_task(request, pk, {Phase.NORMALISATION})
    formset = claim_formset(request.POST, article_url=task.article.url)
    draft = draft_from_post(request.POST)
    stopping: list[tuple[str, str]] = []

    def finish(locked: Task):
        if not formset.is_valid():
            raise handin.Invalid(error_summary(formset))
        claims = [form.normalised_claim() for form in formset.forms]
        stopping.extend(
            (c.text, reason)
            for c in claims
            if (reason := exclusion_reason(c.claim_types, c.fact_checking_strategies))
        )
        if stopping and not request.POST.get("confirm_exclusion"):
            return handin.NOT_YET
        return workflow.submit(locked, claims)

    handed = hand_in_post(request, task, draft, kind=handin.Kind.SUBMIT, finish=finish)
    if handed.outcome == handin.DUPLICATE:
        return redirect("annotation:task", pk=task.pk)
    task = handed.task
    if handed.refused:
        # The tab stays behind (its own version) until the annotator chooses a version.
        context = _context(request, task, formset, **conflict_context(handed, draft))
        return render(request, TEMPLATE, context, status=409)
    if handed.errors is not None:
        context = _context(request, task, formset, summary=handed.errors)
        return render(request, TEMPLATE, context, status=422)
    if handed.refusal:
        messages.error(request, handed.refusal)
        return redirect("annotation:task", pk=task.pk)
    if handed.result is handin.NOT_YET:
        return render(request, TEMPLATE, _context(request, task, formset, stopping=stopping))
    claims = handed.result
    if request.POST.get("then") == "stop":
        # No next article is leased to someone who is about to leave.
        messages.success(request, f"Saved {len(claims)} claim(s). No new article was taken.")
        return redirect("annotation:control-panel")
    messages.success(request, f"Saved {len(claims)} claim(s). Here is your next article.")
    return next_task_or_panel(request, Phase.NORMALISATION)


@require_POST
@login_required
def skip(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    task = own_task_or_404(request.user, pk)
    if task.phase != Phase.NORMALISATION or task.status != Task.Status.IN_PROGRESS:
        return redirect("annotation:task", pk=task.pk)
    form = SkipForm(request.POST)
    if not form.is_valid():
        formset = claim_formset(initial=(task.draft or {}).get("claims") or [{}])
        context = _context(request, task, formset, skip_form=form, skip_open=True)
        return render(request, TEMPLATE, context, status=422)
    workflow.skip_article(task, form.cleaned_data["reason"], form.cleaned_data["note"])
    messages.success(request, "Thanks, the article is reported. Here is your next one.")
    return next_task_or_panel(request, Phase.NORMALISATION)


@require_GET
@login_required
def wording_hints(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The claim card's wording hints while the claim is typed (the same rules autosave uses)."""
    # QueryDict.items() gives each key's last value, a str; the stub also allows a list.
    text = next((v for k, v in request.GET.items() if k.endswith("-text")), "")
    speaker = next((v for k, v in request.GET.items() if k.endswith("-speaker")), "")
    hints = wording_warnings(text, speaker or None)  # type: ignore[arg-type]
    return render(request, "annotation/phase1.html#wording-hints", {"hints": hints})


@require_GET
@login_required
def earliest_date_hint(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Fills the date picker from a date as written ("February 2017" → 2017-02-01)."""
    written = next((v for k, v in request.GET.items() if k.endswith("date_as_written")), "")
    try:
        value, problem = earliest_date(written).isoformat(), ""  # type: ignore[arg-type]  # as above
    except DateNotUnderstood:
        value, problem = "", "Could not read this date; pick it in the calendar."
    return render(
        request,
        "annotation/phase1.html#date-hint",
        {"value": value, "problem": problem},
    )
