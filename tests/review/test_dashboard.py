"""The managers' dashboard through the client: figures, charts, CSV, filters, fixes, access."""

import csv
import io

import pytest
from django.urls import reverse

from annotation.models import Batch, User
from annotation.vocabulary import Phase
from review import stored, tables
from review.progress import stuck_tasks
from tests.factories import AnnotatorFactory
from tests.review.test_progress import _disputed_claim

DASHBOARD = reverse("review:dashboard")
CSV_PAIRS = reverse("review:dashboard-csv", args=["annotator_pairs"])


def test_a_manager_sees_the_figures_charts_and_tables(client, manager, agreement_claims):
    client.force_login(manager)

    response = client.get(DASHBOARD)

    assert response.status_code == 200
    page = response.content.decode()
    assert page.count('<svg class="chart"') == 3
    assert "Kappa per comparison" in page
    assert 'id="table-annotators"' in page and "crew1" in page
    assert response.context["agreement"]["randolph_kappa"] == pytest.approx(1 / 9)


@pytest.mark.parametrize("table", ["agreement", "annotators", "days", "confusion", "stuck"])
def test_each_table_downloads_as_csv_with_its_header(client, manager, agreement_claims, table):
    client.force_login(manager)

    response = client.get(reverse("review:dashboard-csv", args=[table]))

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0]  # the header
    if table == "agreement":
        values = next(r for r in rows if r[0].startswith("Independent P2"))
        parallel = dict(zip(rows[0], values, strict=True))
        assert float(parallel["randolph_kappa"]) == pytest.approx(1 / 9)
        assert parallel["k"] == "4"
    if table == "annotators":
        assert {"crew1", "crew6"} <= {r[0] for r in rows[1:]}


def test_an_unknown_table_is_404(client, manager):
    client.force_login(manager)

    assert client.get(reverse("review:dashboard-csv", args=["secrets"])).status_code == 404


def test_a_batch_filter_narrows_the_report_and_bad_dates_are_refused(
    client, manager, agreement_claims
):
    other = Batch.objects.create(name="other", kind=Batch.Kind.INTAKE)
    client.force_login(manager)

    narrowed = client.get(DASHBOARD, {"batch": other.pk})
    refused = client.get(DASHBOARD, {"start": "2026-02-01", "end": "2026-01-01"})

    assert narrowed.context["agreement"]["items"] == 0
    assert refused.status_code == 422
    assert "start date is after the end date" in refused.content.decode()


def test_the_printable_report_hides_the_controls(client, manager):
    client.force_login(manager)

    response = client.get(DASHBOARD, {"print": "1"})

    assert 'class="dashboard printable"' in response.content.decode()


def test_annotators_and_visitors_are_refused(client, annotator):
    assert client.get(DASHBOARD).status_code == 302
    client.force_login(annotator)
    assert client.get(DASHBOARD).status_code == 403
    assert client.get(reverse("review:dashboard-csv", args=["agreement"])).status_code == 403
    assert client.post(reverse("review:fix-stuck"), {"phase": 5, "create": "x"}).status_code == 403


def test_fixing_is_post_only(client, manager):
    client.force_login(manager)

    assert client.get(reverse("review:fix-stuck")).status_code == 405


@pytest.fixture
def stuck_in_p5(db):
    four = [AnnotatorFactory(username=f"four{i}") for i in range(4)]
    _disputed_claim(four)
    return four


def test_the_stuck_list_offers_no_one_click_qualification_only_the_trainee_record(
    client, manager, stuck_in_p5
):
    newcomer = AnnotatorFactory(username="newcomer", qualified_phases=[1])
    client.force_login(manager)
    html = client.get(DASHBOARD).content.decode()
    assert "Qualify newcomer" not in html
    assert f"{reverse('annotation:qualification')}#trainee-newcomer" in html

    # The old one-click form does nothing any more: "qualify" is not a field.
    client.post(reverse("review:fix-stuck"), {"phase": 5, "qualify": "newcomer"})

    newcomer.refresh_from_db()
    assert not newcomer.is_qualified_for(Phase.POST_CONTROL)
    assert len(stuck_tasks()) == 1


def test_one_click_creates_an_annotator_for_the_phase_and_shows_the_password_once(
    client, manager, stuck_in_p5
):
    client.force_login(manager)

    response = client.post(
        reverse("review:fix-stuck"), {"phase": 5, "create": "helper"}, follow=True
    )

    assert User.objects.get(username="helper").qualified_phases == [5]
    assert "helper" in response.content.decode()
    assert stuck_tasks() == []


def test_a_new_account_for_a_training_phase_starts_in_training(client, manager, stuck_in_p5):
    client.force_login(manager)

    client.post(reverse("review:fix-stuck"), {"phase": 2, "create": "learner"}, follow=True)

    assert User.objects.get(username="learner").qualified_phases == []


def test_a_fix_naming_nobody_is_refused_with_a_message(client, manager, stuck_in_p5):
    client.force_login(manager)

    response = client.post(reverse("review:fix-stuck"), {"phase": 5}, follow=True)

    assert "Name the account to create for the phase." in response.content.decode()
    assert len(stuck_tasks()) == 1


def test_the_evidence_section_reads_the_stored_scores_on_the_page_and_in_its_fragment(
    client, manager, agreement_claims
):
    stored.rebuild_evidence()  # the METEOR jobs a worker runs after the hand-ins
    client.force_login(manager)

    page = client.get(DASHBOARD)
    fragment = client.get(reverse("review:dashboard-evidence"), HTTP_HX_REQUEST="true")
    printable = client.get(DASHBOARD, {"print": "1"})

    assert page.context["evidence"]["claims"] == 3
    assert 'id="evidence"' in page.content.decode()
    assert fragment.status_code == 200
    assert fragment.context["evidence"]["claims"] == 3
    assert "<html" not in fragment.content.decode()
    assert printable.context["evidence"]["claims"] == 3


def test_the_evidence_section_is_for_managers_only(client, annotator):
    client.force_login(annotator)

    assert client.get(reverse("review:dashboard-evidence")).status_code == 403


def test_the_page_shows_the_weakest_annotator_pairs_and_the_csv_every_pair(
    client, manager, agreement_claims, settings, monkeypatch
):
    settings.AGREEMENT_MIN_PAIR_OVERLAP = 1
    monkeypatch.setitem(tables.PAGE_ROWS, "annotator_pairs", 2)
    client.force_login(manager)

    page = client.get(DASHBOARD)
    rows = list(csv.reader(io.StringIO(client.get(CSV_PAIRS).content.decode())))[1:]
    printable = client.get(DASHBOARD, {"print": "1"})

    shown = page.context["tables"]["annotator_pairs"]
    assert len(rows) > 2
    assert len(shown["rows"]) == 2
    kappas = sorted((float(r[-1]) for r in rows if r[-1]), key=float)
    assert [r[-1] for r in shown["rows"]] == pytest.approx(kappas[:2])
    assert f"The 2 lowest of {len(rows)}" in page.content.decode()
    assert len(printable.context["tables"]["annotator_pairs"]["rows"]) == len(rows)


def test_table_cells_are_escaped():
    table = tables.page_table("annotators", ["annotator"], [["<b>eve</b>"]])

    assert "&lt;b&gt;eve&lt;/b&gt;" in table["body"]
    assert "<b>" not in table["body"]
