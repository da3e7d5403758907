"""Screens a first-time user understands: manager pages and the annotator's control panel."""

import re

from django.urls import reverse

from annotation import assignment, workflow
from annotation.models import Answer, Task
from tests import steps
from tests.factories import AnnotatorFactory, ManagerFactory, PooledTaskFactory


def test_assign_work_never_offers_or_hands_tasks_to_a_manager(client, manager, annotator):
    PooledTaskFactory.create_batch(2)
    client.force_login(manager)
    offered = client.get(reverse("annotation:assign")).context["form"].fields["annotators"]
    assert list(offered.queryset) == [annotator]
    response = client.post(
        reverse("annotation:assign"),
        {"phase": "2", "annotators": [manager.pk], "count": "2"},
    )
    assert response.status_code == 422
    assert "annotators" in response.context["form"].errors
    assert not Task.objects.filter(annotator=manager).exists()
    # The rule holds below the form too: the workflow passes a manager over.
    handed = assignment.assign_tasks(manager, 2, [manager, annotator], 2)
    assert handed[manager] == [] and len(handed[annotator]) == 2


def test_a_task_cannot_be_reassigned_to_a_manager(client, manager):
    task = PooledTaskFactory()
    client.force_login(manager)
    response = client.post(
        reverse("annotation:reassign", args=[task.pk]), {"annotator": manager.pk}
    )
    task.refresh_from_db()
    assert task.annotator is None
    assert response.status_code in (302, 422)


def test_signing_in_lands_on_the_panel_of_ones_role(client, manager):
    annotator = AnnotatorFactory()
    for user, panel in (
        (annotator, "annotation:control-panel"),
        (manager, "annotation:manager-panel"),
    ):
        client.logout()
        response = client.post(
            reverse("login"), {"username": user.username, "password": "correct horse battery"}
        )
        assert response.status_code == 302
        assert client.get(response["Location"], follow=True).redirect_chain[-1][0] == reverse(panel)


def _reopened_and_resolved_again(crew):
    steps.new_article(title="Parks budget claim checked", publisher="Full Fact")
    (claim,) = steps.normalise(crew[0])
    steps.answer(crew[1], "Supported")
    steps.check(crew[2], "Refuted")
    steps.resolve(crew[3], "Refuted")
    steps.post_control(crew[4], "Supported")
    claim.refresh_from_db()
    workflow.reopen_discarded_claim(claim, ManagerFactory(), "P5 misread the budget")
    steps.resolve(crew[5], "Refuted")
    steps.post_control(crew[6], "Refuted")
    return claim


def test_the_claim_history_shows_rounds_in_the_order_they_happened(client, manager):
    claim = _reopened_and_resolved_again(AnnotatorFactory.create_batch(7))
    answer = Answer.objects.filter(question__evidence_round__phase=2).first()
    answer.answer_type, answer.text = "Boolean", "No"
    answer.boolean_explanation = "The budget lists 2.1 million, not 4."
    answer.save()
    client.force_login(manager)
    response = client.get(reverse("review:claim-history", args=[claim.pk]))
    assert [card.phase for card in response.context["cards"]] == [2, 3, 4, 5, 4, 5]
    body = response.content.decode()
    headings = re.findall(r"<h2>(P\d [^<]+)", body)
    assert headings == [
        "P2 questions and answers",
        "P3 quality check",
        "P4 dispute resolution",
        "P5 post-control",
        "P4 dispute resolution",
        "P5 post-control",
    ]
    assert "The budget lists 2.1 million, not 4." in body
    # The history table speaks the managers' words, never the stored state names.
    history = body[body.index("<h2>History</h2>") :]
    assert "waiting for P3" in history and "quality_check" not in history
    assert "post_control" not in history
    # P1's metadata is all there: speaker, types and strategies.
    assert "A council member" in body and "Numerical Claim" in body
    assert "Written Evidence" in body
    assert "Parks budget claim checked" in body and "Full Fact" in body


def test_the_task_list_names_articles_by_title_and_publisher(client, manager):
    steps.new_article(
        url="https://web.archive.org/web/20210101000000/https://fullfact.org/a",
        title="Did the council spend 4 million on parks?",
        publisher="Full Fact",
    )
    client.force_login(manager)
    body = client.get(reverse("annotation:tasks"), {"phase": "1"}).content.decode()
    assert "Did the council spend 4 million on parks?" in body and "Full Fact" in body
    assert ">https://web.archive.org/web/2021…<" not in body
