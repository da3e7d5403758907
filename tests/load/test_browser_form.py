"""The load run types into the real editor pages (tests/load/browser.py): what it reads off a
page and posts must be what the page's autosave and hand-in accept, or a renamed field would
turn every load run into a run of errors (or, worse, of posts the server ignores)."""

import random
from urllib.parse import urlencode

import pytest
from django.urls import reverse

from annotation.models import Task
from annotation.vocabulary import Phase
from tests import steps
from tests.factories import AnnotatorFactory
from tests.load.browser import EditorForm, page_form
from tests.load.run import FILL

SOURCES = ["https://council.example.gov/budget-2019"]


def open_editor(client, task: Task) -> EditorForm:
    url = reverse("annotation:task", args=[task.pk])
    page = client.get(url)
    assert page.status_code == 200
    form = EditorForm.of("http://testserver" + url, page.content.decode())
    assert form is not None, "the task page has no form[data-editor]"
    form.open_tab()
    return form


def post(client, url: str, fields, headers=None):
    return client.post(
        url,
        urlencode(fields),
        content_type="application/x-www-form-urlencoded",
        headers=headers or {},
    )


def type_and_autosave(client, form: EditorForm, phase: int) -> None:
    """Both autosaves of a task, as the load run sends them; each answers a new version."""
    rng = random.Random(1)
    for expected, complete in ((1, False), (2, True)):
        FILL[phase](form, rng, "load000", SOURCES, complete)
        saved = post(client, form.autosave_url, form.body(), form.htmx_headers("http://testserver"))
        assert saved.status_code == 200, saved.content.decode()[:500]
        assert form.saved(saved.content.decode()) == expected


@pytest.fixture
def signed_in(client, annotator):
    client.force_login(annotator)
    return client


@pytest.mark.django_db
def test_the_load_runs_p1_posts_autosave_and_hand_in_a_claim(signed_in, annotator):
    steps.new_article(url="https://fullfact.org/online/parks-spending/")
    task = steps.take(annotator, Phase.NORMALISATION)
    form = open_editor(signed_in, task)
    type_and_autosave(signed_in, form, Phase.NORMALISATION)

    done = post(signed_in, form.action, form.body("submit-and-stop"))

    assert done.status_code == 302 and done.headers["Location"] == reverse(
        "annotation:control-panel"
    )
    task.refresh_from_db()
    assert task.status == Task.Status.SUBMITTED
    assert "load000" in task.article.claims.get().text


@pytest.mark.django_db
def test_the_load_runs_p2_posts_check_then_confirm_the_pairs(signed_in, annotator):
    steps.new_article()
    steps.normalise(AnnotatorFactory(username="p1-writer"))
    task = steps.take(annotator, Phase.QUESTIONS)
    form = open_editor(signed_in, task)
    type_and_autosave(signed_in, form, Phase.QUESTIONS)

    checked = post(signed_in, form.action, form.body("submit"))
    assert checked.status_code == 200, checked.content.decode()[:500]
    confirm = page_form(form.action, checked.content.decode(), "/evidence/confirm/")
    assert confirm is not None, "no confirmation form after the check"
    done = post(signed_in, confirm.action, confirm.body("confirm"))

    assert done.status_code == 302
    task.refresh_from_db()
    assert task.status == Task.Status.SUBMITTED
    assert task.evidence_round.questions.count() >= 1


@pytest.mark.django_db
def test_the_load_runs_p3_posts_hand_in_a_check_with_a_verdict_the_page_offers(
    signed_in, annotator
):
    steps.new_article()
    steps.normalise(AnnotatorFactory(username="p1-writer"))
    steps.answer(AnnotatorFactory(username="p2-writer"))
    task = steps.take(annotator, Phase.QUALITY_CHECK)
    form = open_editor(signed_in, task)
    type_and_autosave(signed_in, form, Phase.QUALITY_CHECK)

    done = post(signed_in, form.action, form.body("submit"))

    assert done.status_code == 302, done.content.decode()[:500]
    task.refresh_from_db()
    assert task.status == Task.Status.SUBMITTED
    assert task.quality_check.verdict in ("Supported", "Refuted")


def test_fields_inside_a_template_or_another_form_are_not_posted():
    page = """<form id="other"><input name="elsewhere" value="x"></form>
      <form id="f" data-editor action="/hand-in/" hx-post="/save/">
        <input type="hidden" name="draft_version" value="3">
        <input type="checkbox" name="flag" value="a" checked>
        <input type="checkbox" name="flag" value="b">
        <select name="kind"><option value="1">one</option>
          <option value="2" selected>two</option></select>
        <textarea name="note">typed</textarea>
        <template><input name="q-__q__-text" value=""></template>
        <button type="submit" id="submit">Submit</button>
        <button type="submit" id="stop" name="then" value="stop">Stop</button>
      </form>
      <button type="submit" form="f" id="outside" name="confirm" value="1">Anyway</button>"""
    form = EditorForm.of("http://testserver/task/", page)

    assert form.body() == [("draft_version", "3"), ("flag", "a"), ("kind", "2"), ("note", "typed")]
    assert form.body("stop")[-1] == ("then", "stop")
    assert form.body("outside")[-1] == ("confirm", "1")
    assert form.body("submit") == form.body()
    assert [c.value for c in form.choices["flag"]] == ["a", "b"]
    assert (form.action, form.autosave_url) == (
        "http://testserver/hand-in/",
        "http://testserver/save/",
    )
