"""No lost work at the server (issue 22): the six reported sequences, on every phase, through
the screens' posts, and the revision pages that give the text back.

Each sequence used to lose a tab's text; now every hand-in that reaches the server is a
revision (annotation/handin.py), so each test asserts the text can be found and restored.
The browser side (journals per tab) has its own tests in tests/e2e/.
"""

import pytest
from django.urls import reverse

from annotation import handin
from annotation.models import DraftRevision, Task
from annotation.vocabulary import Phase
from tests import steps
from tests.annotation.handing_in import (
    FIELD,
    autosave,
    handed_in_texts,
    restorable_texts,
    submit,
)
from tests.factories import AnnotatorFactory

PHASES = list(Phase)


@pytest.fixture
def holder(db):
    return AnnotatorFactory(username="holder")


@pytest.fixture
def held(holder):
    return steps.tasks_in_every_phase(holder, AnnotatorFactory.create_batch(4))


@pytest.fixture
def tabs(client, holder):
    client.force_login(holder)
    return client


def fresh(task: Task) -> Task:
    return Task.objects.get(pk=task.pk)


def revision_in(response) -> DraftRevision:
    """The revision a refused hand-in's page names (the conflict screen links to it)."""
    return DraftRevision.objects.get(pk=response.context["conflict"]["revision"])


@pytest.mark.parametrize("phase", PHASES)
def test_1_a_stale_tab_closed_at_once_leaves_its_text_on_the_server(tabs, held, phase):
    task = held[phase]
    version = fresh(task).draft_version
    assert autosave(tabs, task, "tab B typing", version=version, tab="B").status_code == 200

    closing = autosave(tabs, task, "tab A last words", version=version, tab="A", closing="1")

    assert closing.status_code == 409
    kept = revision_in(closing)
    assert (kept.kind, kept.outcome) == ("close", DraftRevision.Outcome.REFUSED_STALE)
    assert "tab A last words" in restorable_texts(task)
    assert fresh(task).draft_version == version + 1  # B's work was not overwritten


@pytest.mark.parametrize("phase", PHASES)
def test_2_a_late_submit_from_a_second_tab_is_kept_and_told_the_real_reason(tabs, held, phase):
    task = held[phase]
    version = fresh(task).draft_version
    first = submit(tabs, task, "tab A handed this in", version=version, tab="A")
    assert first.status_code == 302, getattr(first, "context", {}) and first.context.get("summary")

    late = submit(tabs, task, "tab B typed this later", version=version, tab="B")

    assert late.status_code == 409
    page = late.content.decode()
    assert "handed in from another tab or window" in page
    assert "tab B typed this later" in page  # still on screen, beside what was handed in
    kept = revision_in(late)
    assert kept.outcome == DraftRevision.Outcome.REFUSED_CLOSED
    assert "tab B typed this later" in restorable_texts(task)
    assert "tab A handed this in" in handed_in_texts(task)


@pytest.mark.parametrize("phase", PHASES)
def test_a_double_click_on_submit_is_not_a_conflict(tabs, held, phase):
    task = held[phase]
    version = fresh(task).draft_version
    assert submit(tabs, task, "handed in once", version=version, tab="A").status_code == 302
    if phase in (Phase.QUESTIONS, Phase.DISPUTE):
        # The confirmation screen's button, pressed twice.
        again = tabs.post(
            reverse("annotation:confirm-evidence", args=[task.pk]),
            {"draft_version": str(fresh(task).draft_version), "tab_id": "A"},
        )
    else:
        again = submit(tabs, task, "handed in once", version=version + 1, tab="A")
    assert again.status_code == 302
    assert again["Location"] == reverse("annotation:task", args=[task.pk])


@pytest.mark.parametrize("phase", PHASES)
def test_3_an_offline_tab_coming_back_after_another_saved_keeps_its_text(tabs, held, phase):
    task = held[phase]
    version = fresh(task).draft_version
    # A saved once, then went offline and kept typing; B opened the task and saved.
    assert (
        autosave(tabs, task, "A before going offline", version=version, tab="A").status_code == 200
    )
    assert (
        autosave(tabs, task, "B while A was away", version=version + 1, tab="B").status_code == 200
    )

    back = autosave(tabs, task, "A typed offline", version=version + 1, tab="A")

    assert back.status_code == 409
    texts = restorable_texts(task)
    assert {"A before going offline", "B while A was away", "A typed offline"} <= texts


@pytest.mark.parametrize("phase", PHASES)
def test_5_leaving_the_conflict_screen_loses_nothing_and_the_text_can_be_restored(
    tabs, held, phase
):
    task = held[phase]
    version = fresh(task).draft_version
    autosave(tabs, task, "saved elsewhere", version=version, tab="A")
    refused = autosave(tabs, task, "left on the conflict screen", version=version, tab="B")
    kept = revision_in(refused)

    # The annotator walks away ("Your tasks"), comes back later and opens the revisions.
    assert tabs.get(reverse("annotation:control-panel")).status_code == 200
    listing = tabs.get(reverse("annotation:revisions", args=[task.pk])).content.decode()
    assert "left on the conflict screen" in listing
    restored = tabs.post(reverse("annotation:restore-revision", args=[task.pk, kept.pk]))

    assert restored.status_code == 302
    page = tabs.get(reverse("annotation:task", args=[task.pk])).content.decode()
    assert "left on the conflict screen" in page
    assert "saved elsewhere" in restorable_texts(task)  # the version it replaced stays


@pytest.mark.parametrize("phase", PHASES)
def test_6_keeping_this_tabs_version_keeps_the_other_one_as_a_branch(tabs, held, phase):
    task = held[phase]
    version = fresh(task).draft_version
    autosave(tabs, task, "tab A words", version=version, tab="A")
    refused = autosave(tabs, task, "tab B words", version=version, tab="B")
    newest = refused.context["conflict"]["version"]

    kept = autosave(tabs, task, "tab B words", version=version, tab="B", keep_version=newest)

    assert kept.status_code == 200
    task = fresh(task)
    assert "tab B words" in str(task.draft)
    a_revision = task.revisions.get(tab="A")
    assert a_revision.outcome == DraftRevision.Outcome.CURRENT
    assert "tab A words" in restorable_texts(task)
    assert task.revisions.filter(kind=DraftRevision.Kind.KEEP).exists()


@pytest.mark.parametrize("phase", PHASES)
def test_a_submit_with_errors_is_kept_as_the_draft_and_said_so(tabs, held, phase):
    task = held[phase]
    version = fresh(task).draft_version
    data_field = FIELD[phase]
    url = {
        Phase.NORMALISATION: "annotation:submit-normalisation",
        Phase.QUESTIONS: "annotation:check-evidence",
        Phase.DISPUTE: "annotation:check-evidence",
        Phase.QUALITY_CHECK: "review:submit-check",
        Phase.POST_CONTROL: "review:submit-check",
    }[phase]
    post = {"draft_version": str(version), "tab_id": "A", data_field: "half done"}
    if phase == Phase.NORMALISATION:
        post["claims-TOTAL_FORMS"] = "1"

    response = tabs.post(reverse(url, args=[task.pk]), post)

    assert response.status_code == 422
    revision = fresh(task).revisions.first()
    assert revision.outcome == DraftRevision.Outcome.REFUSED_INVALID
    assert "half done" in str(fresh(task).draft)


def test_identical_autosaves_from_one_tab_cost_one_row(tabs, held):
    task = held[Phase.QUESTIONS]
    version = fresh(task).draft_version
    for step in range(5):
        assert (
            autosave(tabs, task, "same words", version=version + step, tab="A").status_code == 200
        )
    revision = task.revisions.get()
    assert revision.repeats == 4
    assert revision.version == version + 5


# --- The revision pages -------------------------------------------------------------------


@pytest.fixture
def refused_revision(tabs, held):
    task = held[Phase.QUESTIONS]
    version = fresh(task).draft_version
    autosave(tabs, task, "kept words", version=version, tab="A")
    return revision_in(autosave(tabs, task, "refused words", version=version, tab="B"))


def test_discarding_hides_a_revision_from_its_annotator_but_not_from_managers(
    tabs, refused_revision, client, manager
):
    task = refused_revision.task
    url = reverse("annotation:discard-revision", args=[task.pk, refused_revision.pk])
    assert tabs.post(url).status_code == 302
    assert "refused words" not in restorable_texts(task)
    own = tabs.get(reverse("annotation:revisions", args=[task.pk])).content.decode()
    assert "refused words" not in own
    detail = reverse("annotation:revision", args=[task.pk, refused_revision.pk])
    assert tabs.get(detail).status_code == 404

    client.force_login(manager)
    listing = client.get(reverse("annotation:manage-revisions", args=[task.pk])).content.decode()
    assert "refused words" in listing and "discarded" in listing
    one = client.get(reverse("annotation:manage-revision", args=[task.pk, refused_revision.pk]))
    assert "refused words" in one.content.decode()


def test_another_annotator_cannot_see_or_touch_the_revisions(refused_revision, client, outsider):
    task = refused_revision.task
    client.force_login(outsider)
    for name in ("revision", "restore-revision", "discard-revision"):
        url = reverse(f"annotation:{name}", args=[task.pk, refused_revision.pk])
        assert client.post(url).status_code == 404, name
    assert client.get(reverse("annotation:revisions", args=[task.pk])).status_code == 404
    assert client.get(reverse("annotation:manage-revisions", args=[task.pk])).status_code == 403


def test_restore_and_discard_take_only_posts(tabs, refused_revision):
    task = refused_revision.task
    for name in ("restore-revision", "discard-revision"):
        url = reverse(f"annotation:{name}", args=[task.pk, refused_revision.pk])
        assert tabs.get(url).status_code == 405


def test_a_closed_task_shows_its_revisions_to_copy_but_restores_nothing(tabs, refused_revision):
    task = refused_revision.task
    submit(tabs, task, "handed in", version=fresh(task).draft_version, tab="A")
    assert fresh(task).status == Task.Status.SUBMITTED
    page = tabs.get(reverse("annotation:revision", args=[task.pk, refused_revision.pk]))
    assert "refused words" in page.content.decode()
    assert "nothing can be restored" in page.content.decode()
    restore = reverse("annotation:restore-revision", args=[task.pk, refused_revision.pk])
    assert tabs.post(restore, follow=True).status_code == 200
    assert fresh(task).status == Task.Status.SUBMITTED
    assert "refused words" in restorable_texts(task)


def test_the_claim_history_links_each_tasks_revisions_for_managers(
    refused_revision, client, manager
):
    task = refused_revision.task
    client.force_login(manager)
    page = client.get(reverse("review:claim-history", args=[task.claim_id])).content.decode()
    assert reverse("annotation:manage-revisions", args=[task.pk]) in page


@pytest.mark.parametrize("phase", PHASES)
def test_the_editor_names_where_the_text_of_a_tab_that_fell_behind_is_kept(tabs, held, phase):
    task = held[phase]
    version = fresh(task).draft_version
    autosave(tabs, task, "saved first", version=version, tab="A")
    kept = revision_in(autosave(tabs, task, "fell behind", version=version, tab="B"))

    page = tabs.get(reverse("annotation:task", args=[task.pk])).content.decode()

    assert "Not saved over this draft, and kept on the server" in page
    assert reverse("annotation:revision", args=[task.pk, kept.pk]) in page
    # Once the annotator saves again, the notice has said what it had to.
    autosave(tabs, task, "moved on", version=version + 1, tab="C")
    page = tabs.get(reverse("annotation:task", args=[task.pk])).content.decode()
    assert "Not saved over this draft" not in page


def test_a_journal_sent_after_the_hand_in_is_kept_without_a_new_row_when_it_is_the_same(tabs, held):
    task = held[Phase.QUALITY_CHECK]
    version = fresh(task).draft_version
    submit(tabs, task, "handed in words", version=version, tab="A")
    rows = task.revisions.count()
    same = autosave(
        tabs, task, "handed in words", version=version, tab="A", verdict="Refuted", from_journal="1"
    )
    assert same.status_code == 409 and same["X-Handed-In"] == "same"
    assert task.revisions.count() == rows
    other = autosave(tabs, task, "other words", version=version, tab="B", from_journal="1")
    assert other.status_code == 409 and "X-Handed-In" not in other
    assert "other words" in restorable_texts(task)


def test_a_tabs_revisions_are_stored_against_a_keyframe_and_read_back_exactly(held):
    task = held[Phase.QUESTIONS]
    sent = []
    for step in range(40):
        draft = {"questions": [{"text": f"How much in {2000 + n}?"} for n in range(step + 1)]}
        handin.save(task, draft, version=step, author=task.annotator, tab="one")
        sent.append(draft)
    revisions = list(task.revisions.order_by("created_at"))
    assert [r.content for r in revisions] == sent
    assert DraftRevision.contents(revisions) == {
        r.pk: d for r, d in zip(revisions, sent, strict=True)
    }
    keyframes = [r for r in revisions if r.delta_of_id is None]
    assert len(keyframes) == 3  # revisions 0, 16 and 32
    assert all(r.delta_of_id in {k.pk for k in keyframes} for r in revisions if r.delta_of_id)
    assert sum(len(bytes(r.data)) for r in revisions) < sum(r.size for r in revisions) / 5


def test_a_version_no_task_ever_had_is_refused_and_kept(tabs, held):
    task = held[Phase.QUESTIONS]
    refused = autosave(tabs, task, "from a broken client", version=2**40, tab="A")
    assert refused.status_code == 409
    assert "from a broken client" in restorable_texts(task)
