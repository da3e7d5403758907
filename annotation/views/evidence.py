"""Phase 2 (questions and answers) and Phase 4 (dispute resolution): one editor for both."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_countries import countries

from annotation import handin, workflow
from annotation.access import editor_task
from annotation.blindness import EVIDENCE_PHASES
from annotation.evidence import (
    MAX_ANSWERS_PER_QUESTION,
    METADATA_URL,
    blocking,
    evidence_problems,
    is_site_hint,
    source_site_problems,
)
from annotation.forms.evidence import (
    blank_answer,
    blank_question,
    draft_from_evidence,
    draft_from_post,
    editor_rows,
    evidence_from_draft,
    where,
)
from annotation.guidelines import (
    ANSWER_TYPE_HELP,
    P2_GUIDE,
    P4_GUIDE,
    SOURCE_MEDIUM_HELP,
    TOURS,
    VERDICT_HELP,
)
from annotation.http import AuthenticatedHttpRequest
from annotation.models import Claim, DraftRevision, Task
from annotation.phases import review_reads
from annotation.suggestions.kinds import kinds_for
from annotation.views.editing import (
    conflict_context,
    hand_in_post,
    journal_context,
    next_task_or_panel,
    sent_version,
    tab_of,
)
from annotation.views.phase1 import article_links
from annotation.vocabulary import AnswerType, Phase, SourceMedium, Verdict
from search_proxy import fetch, service
from search_proxy.backends import SearchUnavailable

TEMPLATE = "annotation/evidence.html"


def _no_dispute(task: Task) -> dict:
    return {}


def _dispute_context(task: Task) -> dict:
    """What P4 sees as the reason for the dispute: both verdicts and the checker's notes."""
    assert task.claim is not None  # P4 tasks are always of a claim
    evidence = task.evidence_shown()
    # The checks are review's, above this app: read through what review registered.
    check = review_reads().latest_check(task.claim)
    reopened = (
        task.claim.transitions.filter(
            to_state=Claim.State.DISPUTE, from_state=Claim.State.DISCARDED
        )
        .select_related("actor")
        .last()
    )
    flagged = set()
    if check is not None:
        for flag in check.flags.all():
            if flag.question is not None:
                flagged.add(flag.question.position)
            elif flag.answer is not None:
                flagged.add(flag.answer.question.position)
    return {
        "disputed_evidence": evidence,
        "disputed_title": ROUND_TITLES.get(getattr(evidence, "phase", None), P2_ROUND),
        "last_check": check,
        "check_title": CHECK_TITLES.get(getattr(check, "phase", None), P3_CHECK),
        "reopened": reopened,
        "flagged_questions": flagged,
    }


# How the P4 page names the round in dispute and the check that disputed it (by phase, None
# when there is none).
P2_ROUND = "Verdict of the questions and answers (P2)"
ROUND_TITLES: dict[int | None, str] = {
    Phase.DISPUTE: "Verdict of the earlier dispute resolution (P4)"
}
P3_CHECK = "Quality check (P3)"
CHECK_TITLES: dict[int | None, str] = {Phase.POST_CONTROL: "Post-control (P5)"}


@dataclass(frozen=True)
class _Editor:
    """What differs between the two phases this editor serves."""

    guide: list
    # The draft of a task nothing was saved for yet.
    start: Callable[[Task], dict]
    # Why the claim is here (P4: the dispute), shown above the editor.
    reason: Callable[[Task], dict]


def _empty_draft(task: Task) -> dict:
    return {"questions": [], "verdict": "", "claim_correction": ""}


def _pairs_in_dispute(task: Task) -> dict:
    return draft_from_evidence(task.evidence_shown())


# Keyed by phase number, as Task.phase reads back. The evidence screen's own table, not a
# second registry: annotation/apps.py registers this one screen for P2 and P4, and these are
# the three things it does differently for each (a table keyed by phase, which
# tests/architecture/test_phase_dispatch.py allows).
EDITORS: dict[int, _Editor] = {
    Phase.QUESTIONS: _Editor(guide=P2_GUIDE, start=_empty_draft, reason=_no_dispute),
    # P4 starts from the pairs in dispute.
    Phase.DISPUTE: _Editor(guide=P4_GUIDE, start=_pairs_in_dispute, reason=_dispute_context),
}


def field_id(path: str) -> str:
    """The form field a problem path points at: "questions.1.answers.0.source_url" is the
    input with id "q-1-a-0-source_url"; whole-list problems point at the questions."""
    parts = path.split(".")
    if parts[0] != "questions" or len(parts) < 3:
        return parts[0]
    if parts[2] == "answers" and len(parts) >= 5:
        return f"q-{parts[1]}-a-{parts[3]}-{parts[4]}"
    return f"q-{parts[1]}-text"


def error_summary(problems) -> list[dict]:
    """What blocks a submission, in screen order, each linking to its field."""
    return [
        {"anchor": field_id(p.path), "where": where(p.path), "message": p.message}
        for p in problems
        if p.blocking
    ]


def _context(request: AuthenticatedHttpRequest, task: Task, draft: dict, problems, **extra) -> dict:
    claim = task.claim
    assert claim is not None  # P2 and P4 tasks are always of a claim
    rows, overall = editor_rows(draft, problems)
    siblings = (
        Claim.objects.filter(article_id=claim.article_id)
        .exclude(pk=claim.pk)
        .exclude(state=Claim.State.EXCLUDED)
        .order_by("position")
    )
    return {
        "task": task,
        "claim": claim,
        "siblings": siblings,
        "links": article_links(claim.article.url),
        "rows": rows,
        "overall": overall,
        # The cited pages' hints apart: autosave refreshes them only when addresses change.
        "hints": [
            (where(p.path), p.message) for p in problems if not p.blocking and not is_site_hint(p)
        ],
        "site_hints": [(where(p.path), p.message) for p in problems if is_site_hint(p)],
        "draft": draft,
        "verdicts": Verdict.choices,
        "verdict_help": VERDICT_HELP,
        "answer_types": AnswerType.choices,
        "answer_type_help": ANSWER_TYPE_HELP,
        "media": [(v, label) for v, label in SourceMedium.choices if v],
        "medium_help": SOURCE_MEDIUM_HELP,
        "guide": EDITORS[task.phase].guide,
        "tour": f"p{task.phase}",
        "show_tour": f"p{task.phase}" not in request.user.completed_tours,
        "tour_steps": TOURS[f"p{task.phase}"],
        # The rules the editor's script applies as the annotator types, from their homes.
        "max_answers": MAX_ANSWERS_PER_QUESTION,
        "metadata_medium": SourceMedium.METADATA,
        "metadata_url": METADATA_URL,
        "blank_question": blank_question(),
        "blank_answer": blank_answer(),
        "report_reasons": workflow.REPORT_REASONS,
        "suggestion_kinds": kinds_for(task),
        **journal_context(task),
        "search_by_country": service.uses_country(),
        "countries": list(countries),
        # The search form's country: the claim's until a search (without JavaScript) says.
        "searched_country": claim.location_iso_code,
        **EDITORS[task.phase].reason(task),
        **extra,
    }


def _hints(task: Task, draft: dict):
    if not draft.get("questions"):
        return []
    evidence = evidence_from_draft(draft)
    assert task.claim is not None  # P2 and P4 tasks are always of a claim
    return [p for p in evidence_problems(evidence, task.claim, phase=task.phase) if not p.blocking]


def draft_warnings(task: Task, draft: dict) -> dict:
    """The evidence rules' hints (not blocking), refreshed beside the editor after an autosave.

    The cited pages are looked up on every autosave (one query per table, whatever their
    number), even when no address changed: what is known of a page changes while its address
    stays (the viewer stores its snapshot and date, the index and the site lists grow), and a
    hint kept from an earlier save would be stale.
    """
    assert task.claim is not None  # P2 and P4 tasks are always of a claim
    problems = evidence_problems(evidence_from_draft(draft), task.claim, phase=task.phase)
    hints = [p for p in problems if not p.blocking]
    return {
        "hints": [(where(p.path), p.message) for p in hints if not is_site_hint(p)],
        "site_hints": [(where(p.path), p.message) for p in hints if is_site_hint(p)],
    }


def handed_in(task: Task) -> dict:
    """The pairs this task handed in, for its read-only page once submitted."""
    return {"own_evidence": getattr(task, "evidence_round", None)}


def evidence_page(request: AuthenticatedHttpRequest, task: Task, **extra) -> HttpResponse:
    """The editor with the saved draft restored; P4 starts from the pairs in dispute.
    `extra` fills the side panel (search results, an opened page) for pages without htmx."""
    draft = task.draft if task.draft.get("questions") is not None else None
    if draft is None:
        draft = EDITORS[task.phase].start(task)
    return render(request, TEMPLATE, _context(request, task, draft, _hints(task, draft), **extra))


def _editor_task(request: AuthenticatedHttpRequest, pk: int) -> Task:
    return editor_task(request, pk, EVIDENCE_PHASES)


def _side_panel(
    request: AuthenticatedHttpRequest, task: Task, partial: str, context: dict
) -> HttpResponse:
    """The side panel's fragment for htmx; without JavaScript (a plain form or link), the
    whole editor with the panel filled in, as django-htmx's example serves both."""
    if request.htmx:
        return render(request, f"{TEMPLATE}#{partial}", context)
    if error := context.pop("error", None):
        # On the whole page both panels read `error`: say it once, among the page's messages.
        messages.error(request, error)
    return evidence_page(request, task, **{k: v for k, v in context.items() if k != "task"})


@require_POST
@login_required
def check_pairs(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """Check the pairs; when nothing blocks, save them and show the confirmation screen.

    A submit attempt of the one hand-in protocol: kept as a revision whatever happens."""
    task = _editor_task(request, pk)
    draft = draft_from_post(request.POST)
    evidence = evidence_from_draft(draft)
    assert task.claim is not None  # P2 and P4 tasks are always of a claim
    problems = evidence_problems(evidence, task.claim, phase=task.phase)

    def finish(locked: Task):
        if blocking(problems):
            raise handin.Invalid(error_summary(problems))
        return handin.NOT_YET  # handed in from the confirmation screen

    handed = hand_in_post(request, task, draft, kind=handin.Kind.SUBMIT, finish=finish)
    if handed.outcome == handin.DUPLICATE:
        return redirect("annotation:task", pk=task.pk)
    task = handed.task
    if handed.refused:
        # The tab stays behind (its own version) until the annotator chooses a version.
        context = _context(request, task, draft, problems, **conflict_context(handed, draft))
        return render(request, TEMPLATE, context, status=409)
    if handed.errors is not None:
        context = _context(request, task, draft, problems, summary=handed.errors)
        return render(request, TEMPLATE, context, status=422)
    return render(
        request,
        "annotation/evidence_confirm.html",
        {
            "task": task,
            "claim": task.claim,
            "evidence": evidence,
            "draft": draft,
            "tab_id": tab_of(request.POST),
        },
    )


@require_POST
@login_required
def confirm(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """Hand in the pairs exactly as saved and confirmed (the version the screen showed)."""
    task = _editor_task(request, pk)
    version = sent_version(request.POST)
    confirmed = task.revisions.filter(
        version=version, outcome=DraftRevision.Outcome.CURRENT
    ).first()
    content = confirmed.content if confirmed is not None else task.draft

    def finish(locked: Task):
        return workflow.submit(locked, evidence_from_draft(locked.draft))

    handed = hand_in_post(request, task, content, kind=handin.Kind.SUBMIT, finish=finish)
    if handed.outcome == handin.DUPLICATE:
        return redirect("annotation:task", pk=task.pk)
    task = handed.task
    if handed.refused:
        assert task.claim is not None  # P2 and P4 tasks are always of a claim
        problems = evidence_problems(evidence_from_draft(content), task.claim, phase=task.phase)
        context = _context(request, task, content, problems, **conflict_context(handed, content))
        return render(request, TEMPLATE, context, status=409)
    if handed.outcome != DraftRevision.Outcome.SUBMITTED:
        messages.error(request, handed.refusal or "These pairs could not be handed in.")
        return redirect("annotation:task", pk=task.pk)
    messages.success(request, "Thank you, your questions and answers are handed in.")
    return next_task_or_panel(request, task.phase)


@require_POST
@login_required
def report(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    task = _editor_task(request, pk)
    reason = request.POST.get("reason", "")
    if reason not in workflow.REPORT_REASONS:
        messages.error(request, "Choose why the claim cannot be worked on.")
        return redirect("annotation:task", pk=task.pk)
    try:
        workflow.report_claim(task, reason, request.POST.get("note", ""))
    except workflow.WorkflowError as exc:
        messages.error(request, str(exc))
        return redirect("annotation:task", pk=task.pk)
    messages.success(request, "Thanks, the claim is reported to the managers.")
    return next_task_or_panel(request, task.phase)


@require_GET
@login_required
def source_check(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """The source-site checks for one address as it is entered, before any submit."""
    task = _editor_task(request, pk)
    url = next((v for k, v in request.GET.items() if k.endswith("source_url")), "")
    assert task.claim is not None  # P2 and P4 tasks are always of a claim
    # QueryDict.items() gives each key's last value, a str; the stub also allows a list.
    problems = source_site_problems("source_url", url, task.claim)  # type: ignore[arg-type]
    return render(
        request,
        "annotation/evidence.html#source-check",
        {"messages_": [(p.message, p.blocking) for p in problems]},
    )


@require_GET
@login_required
def search_panel(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """Search results for the panel beside the editor, restricted to before the claim date."""
    task = _editor_task(request, pk)
    query = request.GET.get("q", "").strip()
    country_code = request.GET.get("country", "") if service.uses_country() else ""
    assert task.claim is not None  # P2 and P4 tasks are always of a claim
    # "any country" is a real choice; only an engine that ignores countries, or a first
    # search, falls back to the claim's location.
    country: str | None
    if "country" in request.GET and service.uses_country():
        country = request.GET["country"]
    else:
        country = task.claim.location_iso_code
    context = {
        "task": task,
        # The whole page (no JavaScript) shows the search form again: with what was searched.
        "query": query,
        "searched_country": country,
        "search_url": reverse("annotation:search-panel", args=[task.pk]),
        "quoted_query": quote(query),
        "country_code": quote(country_code),
    }
    if query:
        try:
            page = max(1, int(request.GET.get("page", "1")))
        except ValueError:
            page = 1
        try:
            context["results"] = service.search(
                query,
                before=task.claim.claim_date,
                country=country,
                page=page,
                user=request.user,
                scope=task.search_scope(),
            )
        except (service.SearchError, SearchUnavailable) as exc:
            context["error"] = str(exc)
    return _side_panel(request, task, "search-results", context)


@require_POST
@login_required
def open_result(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """A result's readable text, sentence by sentence, to select answers from; when the page
    cannot be read, the reason and the local index's text of it."""
    task = _editor_task(request, pk)
    url = request.POST.get("url", "")
    context = {"task": task, "url": url}
    try:
        context["opened"] = service.open_page(url, user=request.user, scope=task.search_scope())
    except (fetch.FetchRefused, fetch.PageUnavailable) as exc:
        context["unreadable"] = fetch.unreadable(url, exc)
    except service.SearchError as exc:
        context["error"] = str(exc)
    return _side_panel(request, task, "opened-page", context)
