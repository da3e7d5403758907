import re

from django.urls import reverse

from annotation.models import PhaseQuota, Task
from annotation.vocabulary import Phase
from tests import steps
from tests.factories import AnnotatorFactory, PooledTaskFactory


def test_start_next_takes_the_annotator_to_their_new_task(client, annotator):
    pooled = PooledTaskFactory()
    client.force_login(annotator)
    response = client.post(reverse("annotation:start-next", args=[Phase.QUESTIONS]))
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:task", args=[pooled.pk])
    pooled.refresh_from_db()
    assert pooled.annotator == annotator and pooled.status == Task.Status.IN_PROGRESS


def test_start_next_through_htmx_redirects_the_browser(client, annotator):
    pooled = PooledTaskFactory()
    client.force_login(annotator)
    response = client.post(
        reverse("annotation:start-next", args=[Phase.QUESTIONS]), headers={"HX-Request": "true"}
    )
    assert response["HX-Redirect"] == reverse("annotation:task", args=[pooled.pk])


def test_start_next_with_nothing_waiting_says_so_in_the_table(client, annotator):
    client.force_login(annotator)
    response = client.post(
        reverse("annotation:start-next", args=[Phase.QUESTIONS]), headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    assert b"No phase 2 work is waiting" in response.content
    assert b"<html" not in response.content  # only the fragment


def test_start_next_needs_a_post(client, annotator):
    client.force_login(annotator)
    assert client.get(reverse("annotation:start-next", args=[2])).status_code == 405


def test_start_next_for_an_unknown_phase_is_not_found(client, annotator):
    client.force_login(annotator)
    assert client.post(reverse("annotation:start-next", args=[9])).status_code == 404


def test_the_panel_counts_done_and_assigned_per_phase_and_offers_resume(client, annotator):
    PooledTaskFactory.create_batch(3)
    PhaseQuota.objects.create(annotator=annotator, phase=Phase.QUESTIONS, limit=5)
    from annotation import assignment, workflow

    workflow.submit_evidence(assignment.next_task(annotator, Phase.QUESTIONS), steps.evidence())
    assignment.next_task(annotator, Phase.QUESTIONS)
    client.force_login(annotator)
    response = client.get(reverse("annotation:control-panel"))
    p2 = response.context["phases"][1]
    assert (p2["done"], p2["assigned"], p2["quota_left"]) == (1, 2, 3)
    assert b"Resume" in response.content


def test_an_annotator_cannot_open_someone_elses_task(client, annotator, second_annotator):
    PooledTaskFactory()
    from annotation import assignment

    task = assignment.next_task(second_annotator, Phase.QUESTIONS)
    client.force_login(annotator)
    assert client.get(reverse("annotation:task", args=[task.pk])).status_code == 404


def test_submitted_tasks_can_be_browsed_with_previous_and_next(client, db):
    from annotation import assignment, workflow

    person = AnnotatorFactory()
    PooledTaskFactory.create_batch(3)
    done = []
    for _ in range(3):
        task = assignment.next_task(person, Phase.QUESTIONS)
        workflow.submit_evidence(task, steps.evidence())
        done.append(task)
    client.force_login(person)
    middle = client.get(reverse("annotation:task", args=[done[1].pk]))
    assert middle.context["previous"] == done[0]
    assert middle.context["next"] == done[2]
    assert b"read-only" in middle.content


def test_a_quality_check_task_page_never_shows_the_article_or_earlier_verdicts(client, db):
    people = AnnotatorFactory.create_batch(3)
    article = steps.new_article(url="https://factcheck.example.org/secret-article")
    steps.normalise(people[0])
    steps.answer(people[1], "Conflicting Evidence/Cherrypicking")
    task = steps.take(people[2], Phase.QUALITY_CHECK)
    client.force_login(people[2])
    body = client.get(reverse("annotation:task", args=[task.pk])).content.decode()
    assert "What did the council" in body  # the QA pairs are there
    # The verdict names are on the page as choices; tests/review/test_blindness.py shows that
    # the earlier verdicts themselves never are.
    for secret in (article.url, people[0].username, people[1].username):
        assert secret not in body


def test_a_submitted_evidence_task_shows_the_annotators_own_questions_and_answers(client, db):
    from annotation import assignment, workflow

    person = AnnotatorFactory()
    PooledTaskFactory()
    task = assignment.next_task(person, Phase.QUESTIONS)
    workflow.submit_evidence(task, steps.evidence())
    client.force_login(person)
    body = client.get(reverse("annotation:task", args=[task.pk])).content.decode()
    assert "Your questions and answers" in body
    assert "What did the council&#x27;s 2019 budget say? (1)" in body
    assert "It lists 2.1 million for parks." in body
    assert "Your verdict: <strong>Refuted</strong>" in body


def test_the_panel_names_its_columns_plainly(client, annotator):
    client.force_login(annotator)
    body = client.get(reverse("annotation:control-panel")).content.decode()
    assert "<th>Browse</th>" not in body
    assert "Submitted</th>" in body and "Open now</th>" in body


def test_the_panel_reads_every_phase_standing_in_a_fixed_number_of_queries(
    client, annotator, django_assert_num_queries
):
    """The panel was the slowest page under load: it asked three to four questions per phase."""
    from annotation import assignment, workflow

    PooledTaskFactory.create_batch(3)
    for phase in Phase:
        PhaseQuota.objects.create(annotator=annotator, phase=phase, limit=5)
    workflow.submit_evidence(assignment.next_task(annotator, Phase.QUESTIONS), steps.evidence())
    assignment.next_task(annotator, Phase.QUESTIONS)
    client.force_login(annotator)
    # Session and user, then every phase's standing (counts, held task, last hand-in, quota)
    # in one statement.
    with django_assert_num_queries(3):
        response = client.get(reverse("annotation:control-panel"))
    rows = response.context["phases"]
    assert [(r["done"], r["open"], r["quota_left"]) for r in rows] == [
        (0, 0, 5),
        (1, 1, 3),
        (0, 0, 5),
        (0, 0, 5),
        (0, 0, 5),
    ]
    held = Task.objects.get(annotator=annotator, status=Task.Status.IN_PROGRESS)
    handed_in = Task.objects.get(annotator=annotator, status=Task.Status.SUBMITTED)
    assert rows[1]["current_pk"] == held.pk
    assert rows[1]["last_submitted_pk"] == handed_in.pk
    assert rows[0]["current_pk"] is None and rows[0]["last_submitted_pk"] is None


def test_the_panels_forms_and_links_are_the_addresses_django_would_reverse(client, annotator):
    """The panel fills its addresses in from one reversed address per view and shares one
    CSRF token among its forms: the page must say what reversing each link would."""
    from annotation import assignment, workflow

    PooledTaskFactory.create_batch(2)
    handed_in = assignment.next_task(annotator, Phase.QUESTIONS)
    workflow.submit_evidence(handed_in, steps.evidence())
    client.force_login(annotator)
    body = client.get(reverse("annotation:control-panel")).content.decode()
    for phase in Phase:
        start = reverse("annotation:start-next", args=[phase.value])
        if annotator.is_qualified_for(phase.value):
            assert f'action="{start}"' in body and f'hx-post="{start}"' in body
        else:
            assert start not in body
        if phase.value <= Phase.QUALITY_CHECK:
            assert reverse("annotation:training", args=[phase.value]) in body
    assert f'href="{reverse("annotation:task", args=[handed_in.pk])}"' in body
    tokens = set(re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', body))
    assert len(tokens) == 1 and len(tokens.pop()) == 64
