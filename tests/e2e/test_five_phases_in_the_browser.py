"""Claims travel through all five phases in a real browser, five annotators each."""

import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.management import call_command

from annotation.models import Claim, User
from exports.models import ScoringJob
from search_proxy.models import FetchedPage
from tests import steps
from tests.e2e import flows
from tests.factories import AnnotatorFactory, ManagerFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def crew(db):
    people = AnnotatorFactory.create_batch(5)
    for person in people:
        person.completed_tours = ["p1", "p2", "p3", "p4", "p5"]
        person.save()
    return people


def _export(tmp_path) -> dict:
    out = tmp_path / "dataset.json"
    call_command("export_dataset", "--out", out, stdout=io.StringIO())
    return {record["claim"]: record for record in json.loads(out.read_text())}


def _through_dispute(new_page, crew, p5_verdict: str) -> Claim:
    pages = [flows.open_as(new_page, person.username) for person in crew]
    flows.normalise(pages[0], "The council spent 4 million pounds on parks in 2019.", "Refuted")
    flows.answer_questions(pages[1], "Supported")
    flows.check(pages[2], 3, "Refuted")  # disagrees with P2: dispute
    claim = Claim.objects.get()
    assert claim.state == Claim.State.DISPUTE
    flows.answer_questions(pages[3], "Refuted", extra_question=True)
    flows.check(pages[4], 5, p5_verdict)
    claim.refresh_from_db()
    return claim


def test_a_disputed_claim_is_accepted_after_reannotation(new_page, crew, tmp_path):
    steps.new_article(url="https://fullfact.org/online/parks/")
    claim = _through_dispute(new_page, crew, "Refuted")
    assert claim.state == Claim.State.ACCEPTED
    record = _export(tmp_path)[claim.text]
    assert record["required_reannotation"] is True
    assert record["label"] == "Refuted"
    assert [q["question"] for q in record["questions"]] == [
        "How much did the council budget for parks in 2019?",
        "Did the council announce extra parks money in 2019?",
        "Did the council publish a correction about parks spending?",
    ]
    boolean = record["questions"][2]["answers"][0]
    assert (boolean["answer"], boolean["answer_type"]) == ("No", "Boolean")
    assert boolean["boolean_explanation"] == "Its news page lists no correction."
    assert record["justification"] == "The answers point to Refuted."
    people = set(claim.article.tasks.values_list("annotator", flat=True))
    assert len(people) == 5


def test_a_claim_whose_post_control_disagrees_is_discarded(new_page, crew, tmp_path):
    steps.new_article(url="https://fullfact.org/online/libraries/")
    claim = _through_dispute(new_page, crew, "Supported")
    assert claim.state == Claim.State.DISCARDED
    assert claim.text not in _export(tmp_path)


# --- The whole journey: intake and accounts on the screens, two claims, export, scoring ---

ARTICLE_PAGE = b"""<html><head><title>Fact check</title></head><body><article>
<h1>Fact check</h1><p>A post says the council spent 4 million pounds on parks in 2019.</p>
<p>The council's budget shows 2.1 million pounds for parks that year.</p></article></body></html>"""


class _FactCheckingSite(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(ARTICLE_PAGE)

    def log_message(self, *args):
        pass


@pytest.fixture
def fact_checking_site(settings):
    """The articles' site on 127.0.0.1: the intake snapshots each article as it would online."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FactCheckingSite)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.PAGE_FETCH_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def background_jobs_inline(settings, tmp_path):
    """Export and scoring jobs run as soon as they are queued, writing into the test's folder;
    archiving is off, since the Internet Archive is outside this machine."""
    from config.celery import app

    settings.ARCHIVE_ENABLED = False
    settings.MEDIA_ROOT = tmp_path / "media"
    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, False
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = saved


def test_from_intake_to_a_scored_export_through_the_screens(
    new_page, fact_checking_site, background_jobs_inline, tmp_path
):
    ManagerFactory(username="morgan")
    AnnotatorFactory(username="rita", role=User.Role.RESEARCHER, qualified_phases=[])
    intake = tmp_path / "week44.csv"
    intake.write_text(
        "url,title,claim_date\n"
        f"{fact_checking_site}/fact-check/parks,Parks,2020-10-30\n"
        f"{fact_checking_site}/fact-check/libraries,Libraries,2020-10-30\n"
    )

    manager = flows.open_as(new_page, "morgan")
    flows.import_articles(manager, intake)
    assert manager.get_by_text("Added 2 articles").count()
    names = ["ana", "basil", "cleo", "dara", "eli"]
    passwords = flows.create_annotators(manager, names)
    assert sorted(passwords) == names
    # The first-visit tours are covered elsewhere; here they would only cover the screens.
    User.objects.filter(username__in=names).update(completed_tours=["p1", "p2", "p3", "p4", "p5"])
    ana, basil, cleo, dara, eli = (
        flows.first_sign_in(new_page, name, passwords[name]) for name in names
    )
    assert not User.objects.filter(username__in=names, must_change_password=True).exists()

    flows.normalise(ana, "The council spent 4 million pounds on parks in 2019.", "Refuted")
    flows.normalise(ana, "The council closed three libraries in 2019.", "Supported")
    parks, libraries = Claim.objects.order_by("pk")
    # P1 read each article from a stored snapshot of the (local) fact-checking site.
    assert FetchedPage.objects.filter(url__startswith=fact_checking_site).count() == 2

    flows.answer_questions(basil, "Refuted")  # parks: agreed at P3, accepted directly
    flows.answer_questions(basil, "Supported")  # libraries: disputed at P3
    flows.check(cleo, 3, "Refuted")
    flows.check(cleo, 3, "Refuted")
    parks.refresh_from_db()
    libraries.refresh_from_db()
    assert (parks.state, libraries.state) == (Claim.State.ACCEPTED, Claim.State.DISPUTE)
    flows.answer_questions(dara, "Refuted", extra_question=True)
    flows.check(eli, 5, "Refuted")
    libraries.refresh_from_db()
    assert libraries.state == Claim.State.ACCEPTED

    researcher = flows.open_as(new_page, "rita")
    exported = flows.export_dataset(researcher, tmp_path)
    records = {r["claim"]: r for r in json.loads(exported.read_text())}
    assert records[parks.text]["required_reannotation"] is False
    assert records[libraries.text]["required_reannotation"] is True

    # The export scored against itself: every figure must be perfect.
    researcher.goto("/exports/scoring/")
    researcher.set_input_files("#id_predictions", str(exported))
    researcher.locator("#id_reference_export").select_option(index=1)
    with researcher.expect_navigation():
        researcher.get_by_role("button", name="Score").click()
    researcher.get_by_role("heading", name="Veracity").wait_for(timeout=60_000)
    result = ScoringJob.objects.get().result
    assert result["veracity"]["acc"] == 1.0
    assert set(result["averitec"].values()) == {1.0}
    # METEOR gives identical texts a hair under 1 (its fragmentation penalty).
    assert result["q_only"] > 0.99
    assert result["q_and_a"] > 0.99
    assert "accuracy 1.0000" in researcher.content()
