"""The managers' dashboard in a real browser: charts, a CSV download, and no way in for others."""

import csv
import io

import pytest

from annotation.models import User
from tests.e2e.conftest import screenshot, sign_in
from tests.factories import AnnotatorFactory
from tests.review.test_progress import _disputed_claim

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def agreement_claims_crew():
    return User.objects.filter(username__startswith="crew")


def test_a_manager_sees_the_charts_and_downloads_a_table(
    new_page,
    manager,
    agreement_claims,
    tmp_path,
):
    # A claim waiting for P5 that nobody active may take: the crew is not qualified for it.
    _disputed_claim([AnnotatorFactory(username=f"late{i}") for i in range(4)])
    for person in agreement_claims_crew():
        person.qualified_phases = [1, 2, 3, 4]
        person.save()
    page = new_page()
    sign_in(page, manager.username)

    page.goto("/review/dashboard/")

    charts = page.locator("svg.chart")
    assert charts.count() == 3
    assert charts.first.is_visible()
    assert page.locator("svg.chart rect").count() > 5  # bars were drawn
    # No one-click qualification: a link to the account's training record instead.
    assert page.get_by_role("link", name="crew0's training").first.is_visible()
    assert page.get_by_role("button", name="Qualify crew0 for P5").count() == 0
    # The evidence METEOR arrives after the page, through htmx.
    page.locator("#evidence .figures").wait_for()
    assert "questions only" in page.locator("#evidence").inner_text()
    page.locator("#confusion-legend").scroll_into_view_if_needed()
    screenshot(page, "dashboard-confusion", tmp_path)
    page.locator("#progress").scroll_into_view_if_needed()
    screenshot(page, "dashboard-progress", tmp_path)
    page.locator("#stuck").scroll_into_view_if_needed()
    screenshot(page, "dashboard-stuck-work", tmp_path)
    with page.expect_download() as download_info:
        page.locator("#table-annotators a.csv").click()
    download = download_info.value
    rows = list(csv.reader(io.StringIO(download.path().read_text(encoding="utf-8"))))
    assert download.suggested_filename == "annotators.csv"
    assert rows[0][0] == "annotator"
    assert "crew1" in {row[0] for row in rows[1:]}


def test_an_annotator_is_refused_the_dashboard(new_page, annotator):
    page = new_page()
    sign_in(page, annotator.username)

    response = page.goto("/review/dashboard/")

    assert response.status == 403
