"""Hostile input through the site: every form field of every page, never a server error.

The walk opens every named page as an annotator (holding a task of each phase), a manager
and a researcher, reads every form on it (and every element that posts or gets by htmx),
and sends each form back with one field replaced by a hostile value. Every field gets text
the input boundary refuses (annotation/boundary.py), which must come back as a 400 naming
the field with nothing stored; every field of a form gets one of the values that used to
give 500s; then hypothesis (seeded, bounded) draws fields and values at random. Nothing may
answer with a server error. One test, so the site is built and read once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import resolve, reverse
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from annotation.boundary import text_refusal
from annotation.models import Article, Claim, User
from annotation.vocabulary import Phase
from exports.models import ScoringJob
from tests import steps
from tests.architecture.test_access_walk import named_routes, sample_url
from tests.architecture.test_access_walk import world as access_walk_world
from tests.factories import AnnotatorFactory

pytestmark = pytest.mark.django_db

# Refused wherever they are sent, and the answer names the field: a NUL (or any control
# character) and a direction override, the two kinds the boundary tells apart.
REFUSED = ["a\x00b", "right-to-left \u202e override"]
# Taken or refused by the field's own rules, never a crash: sent to every field, they are
# the kinds that gave 500s (a number no column holds, a date that does not exist, an
# address longer than any column) ...
NASTY = ["9" * 30, "2020-02-30", "https://example.org/" + "a" * 2_100]
# ... and, with text drawn by hypothesis, to fields drawn at random.
MORE = [
    "\x07bell",
    "\x1b[31mred",
    "=cmd|' /C calc'!A0",
    "-1",
    "1e400",
    "a" * 3_000,
    '"><script>alert(1)</script>',
    "😀\u200f\u200b",
    "",
]
# Forms that end the session the walk runs in.
NOT_SENT = {"/logout/"}


@dataclass
class Form:
    method: str
    action: str
    fields: dict[str, list[str]] = field(default_factory=dict)
    files: set[str] = field(default_factory=set)
    by_htmx: bool = False  # an element's hx-get/hx-post, sent with its form's fields

    @property
    def key(self) -> tuple:
        # The same view with the same fields is the same form (release for each task...).
        view = resolve(urlsplit(self.action).path).view_name
        return (self.method, view, tuple(sorted(self.fields)), tuple(sorted(self.files)))

    @property
    def names(self) -> list[str]:
        return [*self.fields, *self.files]


class FormReader(HTMLParser):
    """The forms of a page with the values a browser would send untouched, and every
    element with hx-get/hx-post (sent with its enclosing form's fields)."""

    def __init__(self, page_url: str):
        super().__init__()
        self.page_url = page_url
        self.forms: list[Form] = []
        self.htmx: list[tuple[str, str, Form | None]] = []
        self._form: Form | None = None
        self._select: tuple[str, list[str], bool] | None = None
        self._textarea: str | None = None

    def _fields(self) -> dict[str, list[str]]:
        return self._form.fields if self._form is not None else {}

    def handle_starttag(self, tag: str, attrs) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self._form = Form(
                method=a.get("method", "get").upper(), action=a.get("action") or self.page_url
            )
            self.forms.append(self._form)
        for verb in ("hx-get", "hx-post"):
            if a.get(verb):
                self.htmx.append((verb[3:].upper(), a[verb], self._form))
        if tag == "form":
            return
        if tag == "option" and self._select is not None and self._form is not None:
            select_name, options, _ = self._select
            options.append(a.get("value", ""))
            if "selected" in a:
                self._form.fields[select_name].append(a.get("value", ""))
                self._select = (select_name, options, True)
            return
        name = a.get("name")
        if self._form is None or not name:
            return
        fields = self._fields()
        if tag == "input":
            kind = a.get("type", "text").lower()
            if kind == "file":
                self._form.files.add(name)
            elif kind in ("checkbox", "radio"):
                fields.setdefault(name, [])
                if "checked" in a:
                    fields[name].append(a.get("value", "on"))
            elif kind not in ("submit", "button", "reset", "image"):
                fields.setdefault(name, []).append(a.get("value", ""))
        elif tag == "textarea":
            self._textarea = name
            fields.setdefault(name, []).append("")
        elif tag == "select":
            self._select = (name, [], False)
            fields.setdefault(name, [])
        elif tag == "button" and a.get("type", "submit") == "submit":
            fields.setdefault(name, [a.get("value", "")])

    def handle_data(self, data: str) -> None:
        if self._textarea is not None and self._form is not None:
            self._form.fields[self._textarea][-1] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None
        elif tag == "textarea":
            self._textarea = None
        elif tag == "select" and self._select is not None:
            name, options, chosen = self._select
            if not chosen and options and self._form is not None:
                self._form.fields[name].append(options[0])
            self._select = None


def forms_of(page_url: str, html: str) -> list[Form]:
    reader = FormReader(page_url)
    reader.feed(html)
    found = list(reader.forms)
    for method, url, around in reader.htmx:
        fields = dict(around.fields) if around is not None else {}
        files = set(around.files) if around is not None else set()
        found.append(Form(method, url, fields, files, by_htmx=True))
    return [f for f in found if f.action.startswith("/") and f.action not in NOT_SENT]


world = access_walk_world  # the access walk's people and objects, one of each


@pytest.fixture
def site(world) -> dict[str, tuple[Client, list[Form]]]:
    """Per role, a signed-in client and every distinct form it is shown."""
    crew = [
        AnnotatorFactory(username=f"crew{n}", qualified_phases=[1, 2, 3, 4, 5]) for n in range(4)
    ]
    alice = world["users"]["annotator"]
    User.objects.filter(pk=alice.pk).update(qualified_phases=[1, 2, 3, 4, 5])
    alice.refresh_from_db()
    held = steps.tasks_in_every_phase(alice, crew)
    task_pages = [reverse("annotation:task", args=[task.pk]) for task in held.values()]
    found = {}
    for role, user in world["users"].items():
        # A server error is an answer to report with the others, not an exception.
        client = Client(raise_request_exception=False)
        client.force_login(user)
        pages = [sample_url(name, pattern, world) for name, pattern in named_routes()]
        if role == "annotator":
            pages += task_pages
        forms: dict[tuple, Form] = {}
        for url in dict.fromkeys(pages):
            if url in NOT_SENT:
                continue
            response = client.get(url)
            if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
                continue
            for form in forms_of(url, response.content.decode()):
                forms.setdefault(form.key, form)
        found[role] = (client, list(forms.values()))
    assert {"annotator", "manager", "researcher"} <= set(found)
    return found


def send(client: Client, form: Form, name: str, value: str):
    data = {**form.fields, name: [value]}
    if form.method == "GET":
        return client.get(urlsplit(form.action).path, data)
    uploads = {f: SimpleUploadedFile("upload.csv", b"url\n") for f in form.files if f != name}
    if name in form.files:
        uploads[name] = SimpleUploadedFile(value[:200] or "empty.csv", b"url\n")
    return client.post(form.action, {**data, **uploads})


def stored() -> tuple[int, ...]:
    return (Article.objects.count(), Claim.objects.count(), User.objects.count())


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60)


def test_every_form_field_of_every_role_takes_hostile_input_without_a_server_error(site):
    # The walk found the forms of each role: the screens of every phase, the manager's
    # intake and people pages, the researcher's scoring form.
    actions = {role: {f.action for f in forms} for role, (_, forms) in site.items()}
    views = {resolve(urlsplit(a).path).view_name for a in actions["annotator"]}
    assert {
        "annotation:submit-normalisation",
        "annotation:check-evidence",
        "annotation:save-draft",
        "annotation:report-claim",
        "review:submit-check",
    } <= views
    assert reverse("annotation:import-articles") in actions["manager"]
    assert reverse("annotation:people") in actions["manager"]
    assert reverse("exports:scoring") in actions["researcher"]
    fields = sum(len(f.names) for _, forms in site.values() for f in forms)
    assert fields >= 200, fields

    failures = []
    for role, (client, forms) in site.items():
        for form in forms:
            # Upload names are left out: Django itself drops unprintable characters from them.
            for n, name in enumerate(form.fields):
                value = REFUSED[n % len(REFUSED)]
                before = stored()
                response = send(client, form, name, value)
                where = f"{role} {form.method} {form.action} {name}={value!r}"
                if response.status_code != 400 or name not in response.content.decode():
                    failures.append(f"{where}: {response.status_code}, not a refusal naming it")
                elif stored() != before:
                    failures.append(f"{where}: refused, but something was stored")
            if form.by_htmx:
                continue  # the same fields as its form, which gets the values below
            for n, name in enumerate(form.names):
                value = NASTY[n % len(NASTY)]
                response = send(client, form, name, value)
                if response.status_code >= 500:
                    failures.append(f"{role} {form.method} {form.action} {name}={value[:40]!r}")
    assert not failures, "\n".join(failures[:30])

    targets = [(role, form, name) for role, (_, forms) in site.items() for form in forms
               for name in form.names]  # fmt: skip

    @seed(25)
    @settings(
        max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(target=st.sampled_from(targets), value=TEXT | st.sampled_from(REFUSED + NASTY + MORE))
    def walk(target, value):
        role, form, name = target
        response = send(site[role][0], form, name, value)
        assert response.status_code < 500, (role, form.action, name, value)

    walk()
    # Whatever was taken is storable text, upload names included.
    for job in ScoringJob.objects.all():
        assert text_refusal(job.predictions_name) is None, job.predictions_name


def test_an_autosave_with_refused_text_leaves_the_draft_as_it_was(annotator, client):
    steps.new_article()
    task = steps.take(annotator, Phase.NORMALISATION)
    client.force_login(annotator)
    before = (task.draft_version, task.draft)
    url = reverse("annotation:save-draft", args=[task.pk])

    response = client.post(url, {"claims-0-speaker": "a\x00b"}, HTTP_HX_REQUEST="true")

    # htmx requests get a 422 whose message goes to the page's alert area.
    assert response.status_code == 422
    assert response["HX-Retarget"] == "#input-refused"
    assert "claims-0-speaker" in response.content.decode()
    task.refresh_from_db()
    assert (task.draft_version, task.draft) == before
