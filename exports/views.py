"""Researchers' pages: export jobs, dataset statistics and scoring of predictions.

Researchers and managers only. Long work runs as a Celery job; its page polls a fragment
(htmx) that shows a progress bar, then the download link or the scores.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from annotation.http import AuthenticatedHttpRequest
from exports import scoring
from exports.dataset import claims_for_export, export_records
from exports.forms import ExportJobForm, ScoringForm, StatisticsForm
from exports.models import ExportJob, ScoringJob
from exports.shared_task import FORM_2023, FORM_2024, FORM_2025, FORM_CHOICES, ORDER_NOTE
from exports.splits import SplitBoundaries
from exports.statistics import TABLE_TITLES, TABLES, compute_statistics
from exports.tasks import run_scoring_job, start_export_job
from pipeline.scoring import LABELS, LEVELS


def can_use_exports(user) -> bool:
    return user.is_authenticated and (user.is_manager or user.is_researcher)


def researcher_required(view):
    @login_required
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not can_use_exports(request.user):
            raise PermissionDenied("Only researchers and project managers can open this page.")
        return view(request, *args, **kwargs)

    return wrapper


# --- Export jobs -----------------------------------------------------------------------


@require_GET
@researcher_required
def export_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _export_page(request, ExportJobForm())


def _export_page(
    request: AuthenticatedHttpRequest, form: ExportJobForm, status: int = 200
) -> HttpResponse:
    jobs = list(ExportJob.objects.select_related("batch", "requested_by")[:30])
    context = {
        "form": form,
        "jobs": jobs,
        "boundaries": SplitBoundaries.from_settings(),
        "jobs_running": any(not job.is_finished for job in jobs),
        "order_note": ORDER_NOTE,
    }
    template = "exports/exports.html"
    if request.htmx and request.method == "GET":
        template += "#recent-exports"
    return render(request, template, context, status=status)


@require_POST
@researcher_required
def export_create(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = ExportJobForm(request.POST)
    if form.is_valid() and (problem := ExportJob.quota_problem(request.user)):
        form.add_error(None, problem)
    if not form.is_valid():
        if request.htmx:
            context = {
                "form": form,
                "boundaries": SplitBoundaries.from_settings(),
                "order_note": ORDER_NOTE,
            }
            return render(request, "exports/exports.html#export-form", context, status=422)
        return _export_page(request, form, status=422)
    job = start_export_job(form.save(commit=False), request.user)
    if request.htmx:
        # Open the job's own page rather than swapping it into the form beside a stale list.
        return HttpResponseClientRedirect(reverse("exports:export-job", args=[job.pk]))
    return redirect("exports:export-job", pk=job.pk)


@require_GET
@researcher_required
def export_job(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(ExportJob.objects.select_related("batch", "requested_by"), pk=pk)
    template = "exports/export_job.html"
    if request.htmx:
        template += "#job-progress"
    context = {"job": job, "order_note": ORDER_NOTE, "dataset_form": job.fmt in job.DATASET_FORMATS}
    return render(request, template, context)


@require_GET
@researcher_required
def export_download(request: AuthenticatedHttpRequest, pk: int) -> FileResponse:
    job = get_object_or_404(ExportJob, pk=pk, status=ExportJob.Status.DONE)
    return download_response(job)


def download_response(job: ExportJob) -> FileResponse:
    path = job.path
    if path is None or not path.is_file():
        raise Http404("The file of this export is no longer there.")
    content_type = job.content_type
    return FileResponse(
        path.open("rb"), as_attachment=True, filename=job.download_name, content_type=content_type
    )


# --- Statistics ------------------------------------------------------------------------


@require_GET
@researcher_required
def statistics(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = StatisticsForm(request.GET or None)
    if form.is_bound and not form.is_valid():
        return render(request, "exports/statistics.html", {"form": form}, status=422)
    export = form.cleaned_data.get("export") if form.is_bound else None
    if export is not None:
        if export.path is None or not export.path.is_file():
            raise Http404("The file of this export is no longer there.")
        try:
            records: Iterable[Any] = scoring.read_file(export.path)
        except scoring.ScoringInputError as exc:
            raise Http404(str(exc)) from exc
        source = str(export)
    else:
        records = export_records(claims_for_export())
        source = "accepted claims now"
    stats = compute_statistics(records)
    output = request.GET.get("format")
    if output == "csv":
        response = HttpResponse(stats.to_csv(), content_type="text/csv; charset=utf-8")
        name = f"statistics-{export.pk if export else 'live'}.csv"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response
    if output == "json":
        return HttpResponse(json.dumps(stats.as_dict(), indent=2), content_type="application/json")
    splits = [
        {
            "name": name,
            "overview": split.overview(),
            "tables": [
                {
                    "name": table,
                    "title": TABLE_TITLES[table],
                    "basis": TABLES[table][0],
                    # The chart leaves out what never occurs; CSV and JSON keep every value.
                    "rows": [_bar(r) for r in split.table(table) if r["count"]],
                }
                for table in TABLES
            ],
        }
        for name, split in stats.ordered()
    ]
    context = {
        "form": form,
        "source": source,
        "splits": splits,
        # With one split only, its charts would repeat those of the whole dataset.
        "charted": splits if len(splits) > 2 else splits[:1],
        "boundaries": stats.boundaries,
        "query": request.GET.urlencode(),
    }
    return render(request, "exports/statistics.html", context)


# --- Scoring ---------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@researcher_required
def scoring_form(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = ScoringForm(request.POST or None, request.FILES or None)
    if form.is_bound and form.is_valid() and (problem := ScoringJob.quota_problem(request.user)):
        form.add_error(None, problem)
    if request.method == "POST" and form.is_valid():
        job = form.create_job(request.user)
        transaction.on_commit(lambda: run_scoring_job.delay(job.pk))
        return redirect("exports:scoring-job", pk=job.pk)
    jobs = ScoringJob.objects.select_related("reference_export")[:20]
    return render(
        request,
        "exports/scoring.html",
        {"form": form, "jobs": jobs},
        status=422 if form.errors else 200,
    )


@require_GET
@researcher_required
def scoring_job(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(ScoringJob.objects.select_related("reference_export"), pk=pk)
    template = "exports/scoring_job.html"
    if request.htmx:
        template += "#scoring-progress"
    return render(request, template, {"job": job, **_score_tables(job.result)})


def _bar(row: dict) -> dict:
    """A chart row: ``length`` (``percent`` held within 0-100) fills the bar."""
    return {**row, "length": min(100.0, max(0.0, float(row["percent"])))}


def _score_bar(label: str, value: float) -> dict:
    return _bar({"label": label, "figure": f"{value:.4f}", "percent": round(100 * value, 1)})


def _score_tables(result: dict | None) -> dict:
    if not result:
        return {}
    form = result.get("form", FORM_2023)
    tables: dict = {
        "result": result,
        "form_name": dict(FORM_CHOICES)[form],
        "evidence_rows": [
            _score_bar("Questions only", result["q_only"]),
            _score_bar("Questions and answers", result["q_and_a"]),
        ],
    }
    if form == FORM_2025:
        tables["headline"] = [
            (name, result[key]) for key, name in scoring.NAMES_2025.items() if key in result
        ]
    elif form == FORM_2024:
        tables["headline"] = [("AVeriTeC score (meteor @ 0.25)", result["averitec_score"])]
    if "veracity" in result:
        justified = "averitec_justification" in result
        tables["veracity"] = [(label, result["veracity"][label]) for label in LABELS]
        tables["veracity_rows"] = [_score_bar(label, result["veracity"][label]) for label in LABELS]
        tables["level_rows"] = [
            _score_bar(f"λ = {level}", result["averitec"][str(level)]) for level in LEVELS
        ]
        tables["justified"] = justified
        tables["levels"] = [
            (
                str(level),
                result["averitec"][str(level)],
                result["averitec_justification"][str(level)] if justified else None,
            )
            for level in LEVELS
        ]
        # 2023 reports claim types at 0.2 and 0.3, 2024 at 0.25.
        type_keys = [k for k in result if k.startswith("by_type_")]
        tables["type_levels"] = [k.removeprefix("by_type_") for k in type_keys]
        tables["by_type"] = [
            (t, [result[k].get(t) for k in type_keys]) for t in result[type_keys[0]]
        ]
    tables["result_json"] = json.dumps(result, indent=2)
    return tables
