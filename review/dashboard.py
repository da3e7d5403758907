"""The managers' dashboard: agreement, progress and stuck work, as charts, tables and CSV.

Thin views: the figures come from review/agreement.py and review/progress.py; this module
only lays them out as named tables (the same rows for the page and each CSV download).
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation import accounts
from annotation.csvfiles import csv_writer
from annotation.http import AuthenticatedHttpRequest
from annotation.training import TRAINING_PHASES
from annotation.views.manage import manager_required, show_one_time_passwords
from review import charts
from review.agreement import ReportFilter, agreement_report, evidence_agreement
from review.forms import ReportFilterForm, StuckFixForm
from review.progress import progress_report

TABLE_TITLES = {
    "agreement": "Verdict agreement",
    "per_label": "Agreement per label",
    "annotator_pairs": "Cohen's kappa per annotator pair",
    "confusion": "Confusion matrices (long form)",
    "evidence": "Evidence agreement (Hungarian METEOR)",
    "phases": "Per phase",
    "days": "Per day",
    "outcomes": "Skips, disputes, discards, re-annotation",
    "annotators": "Per annotator",
    "stuck": "Stuck work",
}
# Tables made from the progress figures alone: their CSV needs no agreement figure.
PROGRESS_TABLES = ("phases", "days", "outcomes", "annotators", "stuck")


def _interval(figures: dict, name: str) -> tuple:
    interval = figures["intervals"].get(name)
    return tuple(interval) if interval else (None, None)


def tables(agreement: dict, progress: dict) -> dict[str, tuple[list[str], list[list]]]:
    """Every dashboard table as (header, rows), keyed by its CSV name."""
    return {**agreement_tables(agreement), **progress_tables(progress)}


def agreement_tables(agreement: dict) -> dict[str, tuple[list[str], list[list]]]:
    verdicts = agreement["verdicts"]
    out: dict[str, tuple[list[str], list[list]]] = {}
    out["agreement"] = (
        [
            "comparison",
            "k",
            "items",
            "left_out_rated_once",
            "ratings",
            "resampled",
            "percent_agreement",
            "randolph_kappa",
            "randolph_low",
            "randolph_high",
            "fleiss_kappa",
            "fleiss_low",
            "fleiss_high",
        ],
        [
            [
                v["title"],
                v["k"],
                v["items"],
                v["left_out"],
                v["ratings"],
                f"{v['bootstrap']['units']} {v['bootstrap']['unit']}s",
                v["percent_agreement"],
                v["randolph_kappa"],
                *_interval(v, "randolph_kappa"),
                v["fleiss_kappa"],
                *_interval(v, "fleiss_kappa"),
            ]
            for v in verdicts.values()
        ],
    )
    out["per_label"] = (
        ["comparison", "label", "specific_agreement"],
        [
            [v["title"], label, share]
            for v in verdicts.values()
            for label, share in v["per_label"].items()
        ],
    )
    out["annotator_pairs"] = (
        ["comparison", "k", "first", "second", "items", "percent_agreement", "cohen_kappa"],
        [
            [
                v["title"],
                v["k"],
                p["first"],
                p["second"],
                p["items"],
                p["percent_agreement"],
                p["cohen_kappa"],
            ]
            for v in verdicts.values()
            for p in v["annotator_pairs"]
        ],
    )
    out["confusion"] = (
        ["comparison", "row", "column", "count"],
        [
            [f"{c['rows']} vs {c['columns']}", row_label, column_label, c["matrix"][i][j]]
            for c in agreement["confusion"]
            for i, row_label in enumerate(c["labels"])
            for j, column_label in enumerate(c["labels"])
        ],
    )
    out["evidence"] = evidence_table(agreement["evidence"])
    return out


def evidence_table(evidence: dict | None) -> tuple[list[str], list[list]]:
    evidence = evidence or {"claims": 0, "q_only": None, "q_and_a": None}
    return (
        ["claims", "q_only", "q_and_a"],
        [[evidence["claims"], evidence["q_only"], evidence["q_and_a"]]],
    )


def progress_tables(progress: dict) -> dict[str, tuple[list[str], list[list]]]:
    out: dict[str, tuple[list[str], list[list]]] = {}
    out["phases"] = (
        ["phase", "done", "median_minutes", "speed_traps"],
        [
            [f"P{p['phase']}", p["done"], p["median_minutes"], p["speed_traps"]]
            for p in progress["phases"]
        ],
    )
    day_columns = list(progress["days"][0]) if progress["days"] else ["day"]
    out["days"] = (day_columns, [[d[c] for c in day_columns] for d in progress["days"]])
    outcomes = progress["outcomes"]
    out["outcomes"] = (
        ["measure", "value"],
        [[k, v] for k, v in outcomes.items() if k != "skip_reasons"]
        + [[f"skip reason: {k}", v] for k, v in outcomes["skip_reasons"].items()],
    )
    annotator_columns = [
        "annotator",
        "tasks_done",
        "done_p1",
        "done_p2",
        "done_p3",
        "done_p4",
        "done_p5",
        "median_minutes",
        "agreement_with_others",
        "p2_confirmed_in_p3",
        "flags_received",
        "speed_traps",
        "skips",
        "skips_before_article",
        "questions_per_claim",
    ]
    out["annotators"] = (
        annotator_columns,
        [[row[c] for c in annotator_columns] for row in progress["annotators"]],
    )
    out["stuck"] = (
        ["task", "phase", "claim", "what", "waiting_since", "reason", "could_qualify"],
        [
            [
                s["task"],
                f"P{s['phase']}",
                s["claim"],
                s["what"],
                s["waiting_since"],
                s["reason"],
                " ".join(s["could_qualify"]),
            ]
            for s in progress["stuck"]
        ],
    )
    return out


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
    # METEOR is the slow part: the page loads its section afterwards (dashboard_evidence),
    # except the printable report, which must hold everything.
    agreement = agreement_report(report_filter, evidence=printable)
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
    context = {
        "form": form,
        "query": request.GET.urlencode(),
        "printable": printable,
        "agreement": agreement,
        "evidence": agreement["evidence"],
        "progress": progress,
        "stuck_links": _page_links(request, progress["stuck_pages"]),
        "tables": {
            key: {"title": TABLE_TITLES[key], "header": h, "rows": r}
            for key, (h, r) in named.items()
        },
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
    evidence = evidence_agreement(report_filter.claims())
    header, rows = evidence_table(evidence)
    context = {
        "evidence": evidence,
        "query": request.GET.urlencode(),
        "tables": {"evidence": {"title": TABLE_TITLES["evidence"], "header": header, "rows": rows}},
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
        # METEOR is the slow part; only its own table needs it.
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
