"""Manager pages: queues, accounts, hand-outs, releases and the audit log."""

from urllib.parse import quote

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import add_never_cache_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from annotation import accounts, assignment, intake, source_archive, workflow
from annotation.access import manager_required
from annotation.forms.manage import (
    AccountForm,
    ArticleIntakeForm,
    AssignForm,
    BulkAccountsForm,
    ReassignForm,
    TaskFilterForm,
)
from annotation.http import AuthenticatedHttpRequest
from annotation.models import AgreementSampling, Article, AuditEntry, Batch, Claim, Task, User
from search_proxy import archiving


@manager_required
def manager_panel(request: AuthenticatedHttpRequest) -> HttpResponse:
    articles = dict(Article.objects.values_list("state").annotate(n=Count("id")))
    claims = dict(Claim.objects.values_list("state").annotate(n=Count("id")))
    queues = assignment.queue_overview()
    # The chart draws every phase on one scale: the longest queue fills the bar.
    widest = max([1] + [q["waiting"] + q["assigned"] + q["in_progress"] for q in queues])
    for q in queues:
        q["rest"] = widest - q["waiting"] - q["assigned"] - q["in_progress"]
    context = {
        "article_states": [(s.label, articles.get(s.value, 0)) for s in Article.State],
        "claim_states": [(s.label, claims.get(s.value, 0)) for s in Claim.State],
        "queues": queues,
        "discarded": Claim.objects.filter(state=Claim.State.DISCARDED).order_by("-updated_at")[:20],
        "excluded": Claim.objects.filter(state=Claim.State.EXCLUDED).order_by("-updated_at")[:20],
        "skipped": Article.objects.filter(state=Article.State.SKIPPED).order_by("-updated_at")[:20],
        "sampling_percent": round(AgreementSampling.current_rate() * 100, 1),
    }
    template = "annotation/manager_panel.html"
    if request.htmx:
        template += "#queues"
    return render(request, template, context)


@require_http_methods(["GET", "POST"])
@manager_required
def import_articles(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = ArticleIntakeForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        report = intake.import_articles(
            form.cleaned_data["rows"],
            batch_name=form.cleaned_data["batch"] or Batch.default_name(upload.name),
            source_file=upload.name,
            user=request.user,
        )
        assert report.batch is not None  # import_articles always makes the batch
        messages.success(
            request,
            f"Added {report.created} articles to batch {report.batch.name!r}; "
            f"{len(report.duplicates)} already known and skipped.",
        )
        return redirect("annotation:import-articles")
    batches = Batch.objects.filter(kind=Batch.Kind.INTAKE).annotate(n=Count("articles"))
    return render(
        request,
        "annotation/import_articles.html",
        {"form": form, "batches": batches.order_by("-created_at")[:20]},
        status=422 if form.errors else 200,
    )


@manager_required
def people(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = BulkAccountsForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            created = accounts.create_annotators(
                form.cleaned_data["names"],
                request.user,
                form.cleaned_data["phases"],
                form.cleaned_data["waiver_reason"],
            )
        except accounts.AccountError as exc:
            form.add_error("waiver_reason", str(exc))
        else:
            return show_one_time_passwords(request, created)
    return _people_page(request, form)


def _people_page(
    request: HttpRequest, form: BulkAccountsForm, created: list[tuple[str, str]] | None = None
) -> HttpResponse:
    users = User.objects.order_by("role", "username").prefetch_related("quotas")
    context = {"form": form, "users": users, "new_passwords": created}
    if created:
        csv_text = accounts.one_time_passwords_csv(created)
        context["new_passwords_csv"] = "data:text/csv;charset=utf-8," + quote(csv_text)
    return render(request, "annotation/people.html", context, status=422 if form.errors else 200)


def show_one_time_passwords(request: HttpRequest, created: list[tuple[str, str]]) -> HttpResponse:
    """The people page with the new accounts' passwords, in this one response only.

    The passwords are neither stored (not even in the session) nor sent again: the download
    link carries the CSV inside the page, and no cache may keep the page.
    """
    response = _people_page(request, BulkAccountsForm(), created)
    add_never_cache_headers(response)
    return response


@manager_required
def person(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    user = get_object_or_404(User, pk=pk)
    form = AccountForm.for_user(user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            warnings = accounts.update_account(
                user,
                request.user,
                role=form.cleaned_data["role"],
                phases=form.cleaned_data["phases"],
                quotas=form.quotas(),
                active=form.cleaned_data["active"],
                waiver_reason=form.cleaned_data["waiver_reason"],
                researcher_annotates=form.cleaned_data["researcher_annotates"],
            )
        except accounts.AccountError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Saved {user.username}.")
            for warning in warnings:
                messages.warning(request, warning)
            return redirect("annotation:people")
    return render(
        request,
        "annotation/person.html",
        {"person": user, "form": form},
        status=422 if form.errors else 200,
    )


@manager_required
def assign(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = AssignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        handed = assignment.assign_tasks(
            request.user,
            form.cleaned_data["phase"],
            list(form.cleaned_data["annotators"]),
            form.cleaned_data["count"],
            fill_evenly=form.cleaned_data["fill_evenly"],
        )
        total = sum(len(t) for t in handed.values())
        wanted = form.cleaned_data["count"]
        level = messages.SUCCESS if total == wanted else messages.WARNING
        messages.add_message(
            request,
            level,
            f"Assigned {total} of {wanted} task(s): "
            + ", ".join(f"{u.username} {len(t)}" for u, t in handed.items()),
        )
        return redirect("annotation:assign")
    return render(
        request,
        "annotation/assign.html",
        {"form": form, "queues": assignment.queue_overview()},
        status=422 if form.errors else 200,
    )


@manager_required
def tasks(request: AuthenticatedHttpRequest) -> HttpResponse:
    filters = TaskFilterForm(request.GET or None)
    found = Task.objects.select_related("annotator", "claim", "article").order_by(
        "phase", "created_at"
    )
    if filters.is_valid():
        if filters.cleaned_data["phase"]:
            found = found.filter(phase=filters.cleaned_data["phase"])
        status = filters.cleaned_data["status"] or "open"
        found = found.open() if status == "open" else found.filter(status=status)
    else:
        found = found.open()
    page = Paginator(found, 50).get_page(request.GET.get("page"))
    return render(
        request,
        "annotation/tasks.html",
        {"filters": filters, "page": page, "reassign_form": ReassignForm()},
    )


@require_POST
@manager_required
def release(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    task = get_object_or_404(Task, pk=pk)
    try:
        assignment.release_task(task, request.user)
    except workflow.WorkflowError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Task {pk} is back in the pool.")
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, {request.get_host()}, request.is_secure()):
        back = "annotation:tasks"
    return redirect(back)


@require_POST
@manager_required
def reassign(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    task = get_object_or_404(Task, pk=pk)
    form = ReassignForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose an active annotator.")
        return redirect("annotation:tasks")
    try:
        moved = assignment.reassign_task(task, form.cleaned_data["annotator"], request.user)
    except workflow.WorkflowError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Task {moved.pk} now belongs to {moved.annotator}.")
    return redirect("annotation:tasks")


@require_POST
@manager_required
def reopen(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    claim = get_object_or_404(Claim, pk=pk)
    try:
        workflow.reopen_discarded_claim(claim, request.user, request.POST.get("reason", ""))
    except workflow.WorkflowError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Claim {pk} is waiting for dispute resolution again.")
    return redirect("annotation:manager-panel")


@require_POST
@manager_required
def set_sampling(request: AuthenticatedHttpRequest) -> HttpResponse:
    try:
        percent = float(request.POST.get("percent", ""))
        workflow.set_agreement_sampling(percent / 100, request.user)
    except (ValueError, ValidationError):
        # Not a number, or not a share (AgreementSampling's constraint).
        messages.error(request, "Give a percentage between 0 and 100.")
    else:
        messages.success(request, f"{percent:g}% of new claims will get an extra P2 and P3.")
    return redirect("annotation:manager-panel")


@manager_required
def audit_log(request: AuthenticatedHttpRequest) -> HttpResponse:
    page = Paginator(AuditEntry.objects.select_related("actor"), 100).get_page(
        request.GET.get("page")
    )
    return render(request, "annotation/audit.html", {"page": page})


@manager_required
def archives(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Archive coverage per batch (chart and table) and the failed archive jobs."""
    coverage = source_archive.coverage_per_batch()
    # The SVG chart: one stacked bar per batch on one scale (the largest batch fills it).
    width, widest = 480, max([1] + [c.total for c in coverage])
    rows = []
    for n, c in enumerate(coverage):
        a, p = width * c.archived / widest, width * c.pending / widest
        f = width * c.failed / widest
        rows.append({"c": c, "y": 28 * n, "archived": a, "pending": p, "failed": f})
    return render(
        request,
        "annotation/archives.html",
        {
            "rows": rows,
            "chart_height": 28 * len(rows),
            "failures": source_archive.failures(),
            "pause": source_archive.current_pause(),
        },
    )


@manager_required
@require_POST
def retry_archives(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Send failed archive jobs again: one source (source=<id>) or all of them."""
    wanted = request.POST.get("source", "")
    if wanted and not wanted.isdigit():
        messages.error(request, f"source {wanted!r} is not a source number.")
        return redirect("annotation:archives")
    retried = archiving.retry_failed([int(wanted)] if wanted else None)
    messages.success(request, f"{len(retried)} archive job(s) queued again.")
    return redirect("annotation:archives")
