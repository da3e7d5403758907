"""The three shared-task forms: exported, recognised, converted both ways, scored (issue 28).

The 2025 gold CSV is compared with the organisers' own rebuild of dev.json
(``leaderboard_submission/solution_dev.csv`` of Raldir/FEVER-8-Shared-Task, commit
1fa5b405), pinned by its SHA-256: the file is theirs, not ours, so the pin cannot follow a
change of ours.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from rest_framework.test import APIClient

from exports import shared_task
from exports.models import ExportJob, ScoringJob
from exports.shared_task import (
    FORM_2023,
    FORM_2024,
    FORM_2025,
    ORDER_NOTE,
    detect_and_read,
    record_2023_from_2024,
    record_2024_from_row,
    records_as_2024,
    row_2025_from_2024,
    rows_2025,
    write_form,
)
from pipeline import reference_cache
from pipeline.meteor_engine import fast_path_verified
from pipeline.scoring import LABELS, ScoringInputError, evidence_strings, prediction_questions
from tests.factories import AnswerFactory, QuestionFactory, SubmittedEvidenceRoundFactory
from tests.pipeline.ev2r_stub import STAND_IN_PROPERTIES, StubLLM

ORGANISERS_SOLUTION_DEV_SHA256 = "54eecd031f9d11b3ed6aa13167fb072fcae0f247d1d19a369bb44a898e140c59"
ORGANISERS_SOLUTION_DEV_BYTES = 478090
LEVELS = ["0.1", "0.2", "0.25", "0.3", "0.4", "0.5"]


def written(form: str, records: list[dict]) -> str:
    out = io.StringIO(newline="")
    write_form(form, records, out)
    return out.getvalue()


def score(*args: str) -> dict:
    out = io.StringIO()
    call_command("score", *args, "--json", stdout=out, stderr=io.StringIO(), verbosity=0)
    return json.loads(out.getvalue())


# --- The organisers' file ----------------------------------------------------------------


def test_the_2025_gold_csv_of_dev_json_is_the_organisers_file_byte_for_byte(dev_records):
    data = written(FORM_2025, dev_records).encode()

    assert len(data) == ORGANISERS_SOLUTION_DEV_BYTES
    assert hashlib.sha256(data).hexdigest() == ORGANISERS_SOLUTION_DEV_SHA256


def test_exporting_imported_dev_json_as_2025_csv_gives_the_organisers_file(
    dev_json: Path, run_import, run_export, tmp_path: Path
):
    run_import(dev_json)
    out = tmp_path / "gold.csv"

    output = run_export(out, "--format", FORM_2025)

    assert "Wrote 500 claims" in output
    assert ORDER_NOTE in output
    assert hashlib.sha256(out.read_bytes()).hexdigest() == ORGANISERS_SOLUTION_DEV_SHA256
    run_export(out := tmp_path / "gold-2024.json", "--format", FORM_2024)
    assert json.loads(out.read_text()) == list(records_as_2024(json.loads(dev_json.read_text())))


# --- Round trip ---------------------------------------------------------------------------


def test_dev_json_round_trips_2023_to_2024_to_2025_and_back(dev_records):
    as_2024 = list(records_as_2024(copy.deepcopy(dev_records)))
    as_2025 = [row_2025_from_2024(r, i) for i, r in enumerate(as_2024)]
    back_2024 = [record_2024_from_row(row) for row in as_2025]
    back_2023 = [record_2023_from_2024(r) for r in back_2024]

    # 2024 -> 2025 is the organisers' converter; its rows equal the gold rows but for split.
    assert [{**row, "split": "gold"} for row in as_2025] == list(rows_2025(dev_records))
    # 2025 -> 2024 keeps everything a CSV holds (URLs are not in it).
    strip = [{**r, "evidence": [{**e, "url": ""} for e in r["evidence"]]} for r in as_2024]
    assert back_2024 == strip
    # Back in the 2023 form, the scorers compare exactly the strings of the original.
    for original, returned in zip(dev_records, back_2023, strict=True):
        assert returned["claim"] == original["claim"]
        assert returned["label"] == original["label"]
        assert evidence_strings(returned) == evidence_strings(original)
        assert prediction_questions(returned) == prediction_questions(original)
    assert sum(len(r["evidence"]) for r in as_2024) == 1399  # one item per answer


def test_every_form_is_recognised_from_its_file(dev_records):
    for form in (FORM_2023, FORM_2024, FORM_2025):
        decoded = detect_and_read(written(form, dev_records[:30]).encode(), f"{form} file")
        assert decoded.form == form
        assert len(decoded.records) == 30
    lines = "\n".join(json.dumps(r) for r in records_as_2024(dev_records[:3]))
    assert detect_and_read(lines, "lines.jsonl").form == FORM_2024
    with pytest.raises(ScoringInputError, match="neither JSON nor a CSV with the columns"):
        detect_and_read(b"claim,verdict\nx,y\n", "other.csv")
    with pytest.raises(ScoringInputError, match=r"row 1, 'claim': holds a NUL character"):
        detect_and_read(written(FORM_2025, dev_records[:1]).replace("Sean", "Se\x00an"), "n.csv")


def test_a_question_without_answers_and_a_formula_like_claim_are_written_exactly(dev_records):
    record = copy.deepcopy(dev_records[0])
    record["claim"] = "=1+1 is how the claim starts"
    record["questions"][0]["answers"] = []

    decoded = detect_and_read(written(FORM_2025, [record]), "one.csv")

    row = decoded.records[0]
    assert row["claim"] == "=1+1 is how the claim starts"
    assert row["evi"].startswith(record["questions"][0]["question"] + "\t\t\nNo answer could be")
    # The string the 2023 scorer compares for such a question is the same.
    (question, answer), *_ = shared_task.parse_evi(row["evi"])
    assert question + " " + answer == evidence_strings(record)[0]


# --- Scoring each form against itself ---------------------------------------------------


@pytest.fixture
def files(dev_records, tmp_path) -> dict[str, Path]:
    paths = {}
    for form in (FORM_2023, FORM_2024, FORM_2025):
        path = tmp_path / f"dev-{form}.{shared_task.EXTENSIONS[form]}"
        with path.open("w", encoding="utf-8", newline="") as stream:
            write_form(form, dev_records, stream)
        paths[form] = path
    return paths


def test_each_form_scores_one_against_its_gold(files):
    gold = str(files[FORM_2023])
    as_2024 = score("--predictions", str(files[FORM_2024]), "--references", gold)
    as_2025 = score("--predictions", str(files[FORM_2025]), "--references", str(files[FORM_2025]))
    # 2025 against dev.json itself: the references are converted as the organisers do.
    mixed = score("--predictions", str(files[FORM_2025]), "--references", gold)
    from_2024 = score("--predictions", str(files[FORM_2024]), "--references", str(files[FORM_2025]))

    assert as_2024["form"] == FORM_2024
    assert as_2024["averitec_score"] == 1.0
    assert as_2024["averitec"] == dict.fromkeys(LEVELS, 1.0)
    assert as_2024["veracity"] == {**dict.fromkeys(LABELS, 1.0), "macro": 1.0, "acc": 1.0}
    assert as_2025["form"] == FORM_2025
    assert as_2025["old_averitec_score"] == 1.0
    assert {**mixed, "seconds": 0} == {**as_2025, "seconds": 0}
    assert {**from_2024, "seconds": 0} == {**as_2025, "seconds": 0}
    # METEOR's fragmentation penalty keeps identical texts just below 1.
    assert 0.99 < as_2025["q_and_a"] == as_2024["q_and_a"] < 1.0


def test_the_scorer_can_be_chosen_and_2024_references_are_refused_with_a_way_out(files):
    gold = str(files[FORM_2023])

    forced = score("--predictions", gold, "--references", gold, "--scorer", FORM_2025)

    assert forced["form"] == FORM_2025 and forced["old_averitec_score"] == 1.0
    with pytest.raises(CommandError, match=f"export the gold data with --format {FORM_2023}"):
        score("--predictions", str(files[FORM_2024]), "--references", str(files[FORM_2024]))


def test_the_report_names_the_official_figures_of_each_form(files):
    out = io.StringIO()
    call_command(
        "score",
        "--predictions",
        str(files[FORM_2025]),
        "--references",
        str(files[FORM_2025]),
        stdout=out,
        verbosity=0,
    )
    assert "old AVeriTeC Score (Hungarian meteor):" in out.getvalue()
    assert "Ev2R: not run" in out.getvalue()


# --- The exports page, the API and the scoring page ----------------------------------------


def _downloaded(response) -> bytes:
    return b"".join(response.streaming_content)


def test_the_exports_page_writes_each_form_and_states_the_order(
    client,
    researcher,
    dev_json,
    run_import,
    media_root,
    eager_tasks,
    django_capture_on_commit_callbacks,
):
    run_import(dev_json)
    client.force_login(researcher)
    assert ORDER_NOTE in client.get(reverse("exports:export-list")).content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("exports:export-create"), {"fmt": FORM_2025})

    job = ExportJob.objects.get()
    assert job.status == ExportJob.Status.DONE, job.error
    page = client.get(response["Location"]).content.decode()
    assert ORDER_NOTE in page
    assert "Statistics of this export" not in page  # statistics read the 2023 form only
    download = client.get(reverse("exports:export-download", args=[job.pk]))
    assert download["Content-Type"].startswith("text/csv")
    assert download["Content-Disposition"].endswith(f'-{FORM_2025}.csv"')
    assert hashlib.sha256(_downloaded(download)).hexdigest() == ORGANISERS_SOLUTION_DEV_SHA256


def test_the_api_exports_the_2024_form(
    researcher, accepted_claims, media_root, eager_tasks, django_capture_on_commit_callbacks
):
    api = APIClient()
    api.force_authenticate(researcher)

    with django_capture_on_commit_callbacks(execute=True):
        created = api.post("/api/v1/export-jobs/", {"format": FORM_2024}, format="json")

    assert created.status_code == 201, created.content
    detail = api.get(f"/api/v1/export-jobs/{created.json()['id']}/").json()
    assert detail["format"] == FORM_2024 and detail["status"] == "done"
    records = json.loads(_downloaded(api.get(detail["download_url"])))
    assert [r["claim_id"] for r in records] == list(range(len(accepted_claims)))
    assert {r["claim"] for r in records} == {c.text for c in accepted_claims}
    assert all(set(r) == {"claim_id", "claim", "pred_label", "evidence"} for r in records)
    refused = api.post("/api/v1/export-jobs/", {"format": "averitec-2026"}, format="json")
    assert refused.status_code == 400


def test_the_scoring_page_scores_a_2025_csv_and_a_2024_file(
    client,
    researcher,
    dev_records,
    media_root,
    eager_tasks,
    django_capture_on_commit_callbacks,
    monkeypatch,
    tmp_path,
):
    # The jobs keep the references' prepared text where the command does.
    monkeypatch.setattr(reference_cache, "default_cache_dir", lambda: tmp_path)
    client.force_login(researcher)
    records = dev_records[:12]
    gold_csv = written(FORM_2025, records).encode()
    uploads = [
        (("system.csv", gold_csv), ("gold.csv", gold_csv), "old AVeriTeC Score"),
        (
            ("system.json", written(FORM_2024, records).encode()),
            ("dev.json", json.dumps(records).encode()),
            "AVeriTeC score (meteor @ 0.25)",
        ),
    ]
    for (p_name, p_data), (r_name, r_data), headline in uploads:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                reverse("exports:scoring"),
                {
                    "predictions": SimpleUploadedFile(p_name, p_data),
                    "references": SimpleUploadedFile(r_name, r_data),
                },
            )
        job = ScoringJob.objects.order_by("-pk").first()
        assert job.status == ScoringJob.Status.DONE, job.error
        assert job.progress_done == job.progress_total > 0
        page = client.get(response["Location"]).content.decode()
        assert headline in page
    assert ScoringJob.objects.order_by("pk").first().result["old_averitec_score"] == 1.0
    assert ScoringJob.objects.order_by("pk").last().result["averitec_score"] == 1.0
    if fast_path_verified():
        assert len(list(tmp_path.glob("references-*.marshal"))) == 2  # one per file and scorer


@pytest.fixture
def accepted_claims(db):
    claims = []
    for n in range(3):
        evidence = SubmittedEvidenceRoundFactory(claim__text=f"Accepted claim number {n}.")
        AnswerFactory(question=QuestionFactory(evidence_round=evidence))
        claims.append(evidence.claim)
    return claims


# --- Ev2R through the configured endpoint ------------------------------------------------


def test_score_adds_ev2r_from_the_configured_endpoint_and_a_rerun_asks_nothing(
    dev_records, settings, tmp_path
):
    gold = tmp_path / "gold.csv"
    gold.write_text(written(FORM_2025, dev_records[:20]), encoding="utf-8", newline="")
    prompts = tmp_path / "properties.py"
    prompts.write_text(STAND_IN_PROPERTIES, encoding="utf-8")
    with StubLLM() as stub:
        settings.EV2R_BASE_URL = stub.base_url
        settings.EV2R_MODEL = "stub-model"
        settings.EV2R_PROMPTS_FILE = str(prompts)
        settings.EV2R_CACHE_FILE = tmp_path / "ev2r.sqlite3"

        first = score("--predictions", str(gold), "--references", str(gold))
        again = score("--predictions", str(gold), "--references", str(gold))
        without = score("--predictions", str(gold), "--references", str(gold), "--no-ev2r")

    assert first["new_averitec_score"] == first["ev2r_qa_recall"] == 1.0
    assert first["ev2r_requests"] == {"sent": 40, "from_cache": 0, "failed": 0}
    assert again["ev2r_requests"] == {"sent": 0, "from_cache": 40, "failed": 0}
    assert len(stub.requests) == 40
    assert "new_averitec_score" not in without
    assert without["old_averitec_score"] == first["old_averitec_score"] == 1.0


def test_an_unusable_ev2r_configuration_is_named(files, settings, tmp_path):
    settings.EV2R_BASE_URL = "http://127.0.0.1:9/v1"
    settings.EV2R_MODEL = "stub-model"
    settings.EV2R_PROMPTS_FILE = str(tmp_path / "missing.py")
    csv_file = str(files[FORM_2025])

    with pytest.raises(CommandError, match=r"EV2R_PROMPTS_FILE .*missing\.py: cannot be read"):
        score("--predictions", csv_file, "--references", csv_file)


def test_a_start_with_an_ev2r_address_in_clear_over_the_network_is_refused(tmp_path):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("EV2R_")}
    environment.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        VAR_DIR=str(tmp_path),
        EV2R_BASE_URL="http://llm.example.org/v1",
        EV2R_MODEL="m",
        EV2R_PROMPTS_FILE="properties.py",
    )
    started = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=django_settings.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode != 0
    assert "EV2R_BASE_URL must use https unless the server is on this machine" in started.stderr


def test_a_scoring_job_adds_ev2r_and_counts_the_prompts_on_its_progress_bar(
    client,
    researcher,
    dev_records,
    media_root,
    eager_tasks,
    django_capture_on_commit_callbacks,
    settings,
    tmp_path,
):
    prompts = tmp_path / "properties.py"
    prompts.write_text(STAND_IN_PROPERTIES, encoding="utf-8")
    gold = written(FORM_2025, dev_records[:6]).encode()
    client.force_login(researcher)
    with StubLLM() as stub:
        settings.EV2R_BASE_URL = stub.base_url
        settings.EV2R_MODEL = "stub-model"
        settings.EV2R_PROMPTS_FILE = str(prompts)
        settings.EV2R_CACHE_FILE = tmp_path / "ev2r.sqlite3"
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                reverse("exports:scoring"),
                {
                    "predictions": SimpleUploadedFile("system.csv", gold),
                    "references": SimpleUploadedFile("gold.csv", gold),
                },
            )

    job = ScoringJob.objects.get()
    assert job.status == ScoringJob.Status.DONE, job.error
    assert job.result["new_averitec_score"] == 1.0
    assert job.progress_total == 12 == job.progress_done  # the last phase: 2 prompts a claim
    assert len(stub.requests) == 12
    page = client.get(response["Location"]).content.decode()
    assert "new AVeriTeC score (Ev2R recall)" in page
