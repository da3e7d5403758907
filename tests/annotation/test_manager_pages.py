from urllib.parse import unquote

import pytest
from django.contrib.sessions.models import Session
from django.urls import reverse

from annotation import assignment
from annotation.models import AuditEntry, Claim, PhaseQuota, Task, User
from annotation.vocabulary import Phase
from tests import steps
from tests.factories import AnnotatorFactory, PooledTaskFactory

MANAGER_PAGES = ["manager-panel", "people", "assign", "tasks", "audit"]


@pytest.mark.parametrize("page", MANAGER_PAGES)
def test_manager_pages_are_closed_to_annotators(client, annotator, page):
    client.force_login(annotator)
    assert client.get(reverse(f"annotation:{page}")).status_code == 403


@pytest.mark.parametrize("page", MANAGER_PAGES)
def test_manager_pages_open_for_managers(client, manager, page):
    client.force_login(manager)
    assert client.get(reverse(f"annotation:{page}")).status_code == 200


def test_the_overview_charts_and_tabulates_queues(client, manager):
    PooledTaskFactory.create_batch(2)
    client.force_login(manager)
    response = client.get(reverse("annotation:manager-panel"))
    assert response.context["queues"][1]["waiting"] == 2
    assert b'class="bars"' in response.content
    fragment = client.get(reverse("annotation:manager-panel"), headers={"HX-Request": "true"})
    assert b'id="queues"' in fragment.content and b"<html" not in fragment.content


def test_bulk_created_accounts_show_their_passwords_in_one_response_and_keep_them_nowhere(
    client, manager
):
    client.force_login(manager)
    response = client.post(
        reverse("annotation:people"),
        {
            "usernames": "username\nana\nbasil",
            "phases": ["1", "2"],
            "waiver_reason": "trained in the pilot round",
        },
    )
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    shown = dict(response.context["new_passwords"])
    assert set(shown) == {"ana", "basil"}
    assert User.objects.get(username="ana").check_password(shown["ana"])
    download = response.context["new_passwords_csv"]
    assert download.startswith("data:text/csv")
    assert f"basil,{shown['basil']}" in unquote(download)
    # Nothing server-side keeps them: not the session, not a second look at the page.
    stored = " ".join(str(session.get_decoded()) for session in Session.objects.all())
    assert not any(password in stored for password in shown.values())
    assert client.get(reverse("annotation:people")).context["new_passwords"] is None
    assert User.objects.get(username="ana").qualified_phases == [1, 2]
    assert User.objects.get(username="ana").must_change_password
    assert "created 2 annotator account(s)" in AuditEntry.objects.get(action="accounts").summary


def test_bulk_creation_refuses_existing_or_malformed_usernames(client, manager, annotator):
    client.force_login(manager)
    response = client.post(reverse("annotation:people"), {"usernames": "alice\nbad name!"})
    assert response.status_code == 422
    errors = " ".join(response.context["form"].non_field_errors())
    assert "'alice' already has an account" in errors and "line 2" in errors
    assert not User.objects.filter(username="bad name!").exists()


def test_a_manager_sets_role_phases_quota_and_deactivates_with_an_audit_entry(
    client, manager, annotator
):
    client.force_login(manager)
    response = client.post(
        reverse("annotation:person", args=[annotator.pk]),
        # A researcher holds phases only when the manager says so explicitly (issue 23).
        {"role": "researcher", "phases": ["3"], "quota_3": "10", "researcher_annotates": "on"},
    )
    assert response.status_code == 302
    annotator.refresh_from_db()
    assert annotator.role == "researcher" and annotator.qualified_phases == [3]
    assert not annotator.is_active
    assert PhaseQuota.objects.get(annotator=annotator).limit == 10
    entry = AuditEntry.objects.get(action="account")
    assert entry.actor == manager and "role" in entry.summary and "active" in entry.summary


def test_a_manager_cannot_demote_themselves(client, manager):
    client.force_login(manager)
    response = client.post(
        reverse("annotation:person", args=[manager.pk]), {"role": "annotator", "active": "on"}
    )
    assert response.status_code == 422
    manager.refresh_from_db()
    assert manager.role == User.Role.MANAGER


def test_assigning_work_from_the_page_fills_evenly(client, manager):
    people = AnnotatorFactory.create_batch(2)
    PooledTaskFactory.create_batch(4)
    client.force_login(manager)
    response = client.post(
        reverse("annotation:assign"),
        {"phase": "2", "annotators": [p.pk for p in people], "count": "4", "fill_evenly": "on"},
        follow=True,
    )
    assert [Task.objects.filter(annotator=p).count() for p in people] == [2, 2]
    assert "Assigned 4 of 4" in response.content.decode()


def test_release_and_reassign_from_the_task_list(client, manager, annotator, second_annotator):
    PooledTaskFactory()
    task = assignment.next_task(annotator, Phase.QUESTIONS)
    client.force_login(manager)
    assert client.get(reverse("annotation:release", args=[task.pk])).status_code == 405
    client.post(reverse("annotation:release", args=[task.pk]))
    task.refresh_from_db()
    assert task.status == Task.Status.RELEASED
    replacement = task.replaced_by
    client.post(
        reverse("annotation:reassign", args=[replacement.pk]), {"annotator": second_annotator.pk}
    )
    replacement.refresh_from_db()
    assert replacement.annotator == second_annotator
    listing = client.get(reverse("annotation:tasks"), {"phase": "2", "status": "assigned"})
    assert list(listing.context["page"]) == [replacement]


def test_a_discarded_claim_is_reopened_from_the_overview(client, manager):
    crew = AnnotatorFactory.create_batch(5)
    steps.new_article()
    (claim,) = steps.normalise(crew[0])
    steps.answer(crew[1], "Supported")
    steps.check(crew[2], "Refuted")
    steps.resolve(crew[3], "Refuted")
    steps.post_control(crew[4], "Supported")
    client.force_login(manager)
    assert claim.text in client.get(reverse("annotation:manager-panel")).content.decode()
    client.post(reverse("annotation:reopen", args=[claim.pk]), {"reason": "P5 misread"})
    claim.refresh_from_db()
    assert claim.state == Claim.State.DISPUTE
    assert AuditEntry.objects.get(action="reopen").details["reason"] == "P5 misread"


def test_a_manager_sets_the_agreement_sampling_share_for_new_claims(client, manager):
    crew = AnnotatorFactory.create_batch(2)
    client.force_login(manager)
    client.post(reverse("annotation:set-sampling"), {"percent": "100"})
    assert "set agreement sampling to 100%" in AuditEntry.objects.get(action="sampling").summary
    steps.new_article()
    (claim,) = steps.normalise(crew[0])
    assert claim.is_agreement_sample
    assert Task.objects.filter(claim=claim, phase=Phase.QUESTIONS).count() == 2
    response = client.post(reverse("annotation:set-sampling"), {"percent": "150"}, follow=True)
    assert "between 0 and 100" in response.content.decode()
    assert client.get(reverse("annotation:manager-panel")).context["sampling_percent"] == 100.0
