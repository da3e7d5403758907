"""The managers' dashboard: agreement, progress and stuck work, as charts, tables and CSV.

Thin views: the figures are the stored ones (review/stored.py); review/tables.py lays them
out as named tables (the same rows for the page and each CSV download).
"""

from __future__ import annotations

from datetime import datetime

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation import accounts
from annotation.access import manager_required
from annotation.csvfiles import csv_writer
from annotation.http import AuthenticatedHttpRequest
from annotation.training import TRAINING_PHASES
from annotation.views.manage import show_one_time_passwords
from review import charts
from review.agreement import ReportFilter
from review.forms import ReportFilterForm, StuckFixForm
from review.stored import agreement_report, evidence_figures
from review.stored import stored_progress_report as progress_report
from review.tables import (
    PROGRESS_TABLES,
    TABLE_TITLES,
    agreement_tables,
    evidence_table,
    page_table,
    progress_tables,
    tables,
)


def _filter(request: HttpRequest) -> tuple[ReportFilterForm, ReportFilter]:
    form = ReportFilterForm(request.GET or None)
    if form.is_bound and form.is_valid():
        return form, form.report_filter()
    return form, ReportFilter()


def _page(request: HttpRequest) -> int:
    page = request.GET.get("stuck_page", "1")
    return int(page) if page.isdigit() else 1


def _page_links(request: HttpRequest, pages: dict) -> dict:
    """The query strings of the previous and next page of stuck work, other filters kept."""

    def link(number: int) -> str:
        query = request.GET.copy()
        query["stuck_page"] = str(number)
        return query.urlencode()

    return {
        "previous": link(pages["page"] - 1) if pages["page"] > 1 else None,
        "next": link(pages["page"] + 1) if pages["page"] < pages["pages"] else None,
    }


@manager_required
def dashboard(request: AuthenticatedHttpRequest) -> HttpResponse:
    form, report_filter = _filter(request)
    printable = request.GET.get("print") == "1"
    # Every figure is read from the stored ones (review/stored.py), METEOR scores included.
    agreement = agreement_report(report_filter)
    # The page shows one page of stuck work (the printable report all of it); its CSV has all.
    progress = progress_report(report_filter, stuck_page=None if printable else _page(request))
    named = tables(agreement, progress)
    verdicts = agreement["verdicts"]
    kappa_rows = [
        {
            "label": f"{v['short']} · {short}" + (f" (k={v['k']})" if short == "Randolph" else ""),
            "value": v[name],
            "interval": v["intervals"].get(name),
        }
        for v in verdicts.values()
        for short, name in (("Randolph", "randolph_kappa"), ("Fleiss", "fleiss_kappa"))
    ]
    as_of = {
        name: datetime.fromisoformat(figures["stored"]["computed_at"])
        for name, figures in (("verdicts", agreement), ("progress", progress))
    }
    context = {
        "as_of": as_of,
        "stale": {
            name: as_of[name]
            for name, figures in (("verdicts", agreement), ("progress", progress))
            if not figures["stored"]["current"]
        },
        "form": form,
        "query": request.GET.urlencode(),
        "printable": printable,
        "agreement": agreement,
        "evidence": agreement["evidence"],
        "progress": progress,
        "stuck_links": _page_links(request, progress["stuck_pages"]),
        "tables": {key: page_table(key, h, r, whole=printable) for key, (h, r) in named.items()},
        "charts": {
            "kappa": charts.kappa_bars(kappa_rows, "Kappa per comparison with 95% intervals"),
            "throughput": charts.stacked_days(
                progress["days"], "done_p", "Tasks handed in per day"
            ),
            "queues": charts.lines_by_phase(
                progress["days"], "queue_p", "Open tasks at the end of each day"
            ),
        },
    }
    return render(request, "review/dashboard.html", context, status=422 if form.errors else 200)


@manager_required
def dashboard_evidence(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The evidence-agreement section: a fragment for htmx, the section alone without it."""
    _, report_filter = _filter(request)
    evidence = evidence_figures(report_filter.claims())
    header, rows = evidence_table(evidence)
    context = {
        "evidence": evidence,
        "query": request.GET.urlencode(),
        "tables": {"evidence": page_table("evidence", header, rows)},
    }
    return render(request, "review/dashboard.html#evidence", context)


@manager_required
def dashboard_csv(request: AuthenticatedHttpRequest, table: str) -> HttpResponse:
    if table not in TABLE_TITLES:
        raise Http404(f"no table called {table!r}")
    _, report_filter = _filter(request)
    if table in PROGRESS_TABLES:
        header, rows = progress_tables(progress_report(report_filter))[table]
    else:
        agreement = agreement_report(report_filter, evidence=table == "evidence")
        header, rows = agreement_tables(agreement)[table]
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{table}.csv"'
    writer = csv_writer(response)
    writer.writerow(header)
    writer.writerows(["" if cell is None else cell for cell in row] for row in rows)
    return response


@require_POST
@manager_required
def fix_stuck(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = StuckFixForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Name the account to create for the phase.")
        return redirect("review:dashboard")
    phase = form.cleaned_data["phase"]
    # A training phase is earned by training: the new account starts there.
    phases = [] if phase in TRAINING_PHASES else [phase]
    try:
        names = accounts.parse_usernames(form.cleaned_data["create"])
        created = accounts.create_annotators(names, request.user, phases)
    except accounts.AccountError as exc:
        messages.error(request, str(exc))
        return redirect("review:dashboard")
    if not phases:
        messages.info(request, f"{names[0]} starts with phase {phase} training.")
    # The people page shows the new password in this response only, as after a bulk upload.
    return show_one_time_passwords(request, created)
