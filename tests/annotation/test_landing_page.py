from django.urls import reverse

from tests.factories import AcceptedClaimFactory


def test_the_landing_page_asks_visitors_to_sign_in(client, db):
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_an_annotator_is_greeted_by_name_and_sent_to_the_annotation_panel(client, annotator):
    client.force_login(annotator)
    response = client.get(reverse("home"))
    assert response.status_code == 200
    body = response.content.decode()
    assert "alice" in body and "Annotator" in body
    assert reverse("annotation:control-panel") in body
    assert reverse("annotation:manager-panel") not in body


def test_a_manager_is_sent_to_the_manager_panel(client, manager):
    client.force_login(manager)
    body = client.get(reverse("home")).content.decode()
    assert reverse("annotation:manager-panel") in body


def test_the_manager_panel_is_closed_to_annotators(client, annotator):
    client.force_login(annotator)
    assert client.get(reverse("annotation:manager-panel")).status_code == 403


def test_the_manager_panel_counts_claims_by_state(client, manager):
    AcceptedClaimFactory.create_batch(3)
    client.force_login(manager)
    response = client.get(reverse("annotation:manager-panel"))
    assert response.status_code == 200
    assert ("accepted", 3) in response.context["claim_states"]


def test_the_control_panel_marks_phases_the_annotator_is_not_qualified_for(client, outsider):
    client.force_login(outsider)
    response = client.get(reverse("annotation:control-panel"))
    assert response.status_code == 200
    assert not any(row["qualified"] for row in response.context["phases"])


def test_signing_in_with_the_right_password_opens_the_control_panel(client, annotator):
    response = client.post(
        reverse("login"), {"username": "alice", "password": "correct horse battery"}, follow=True
    )
    assert response.redirect_chain[-1][0] == reverse("annotation:control-panel")
    assert response.context["user"].username == "alice"


def test_logging_out_needs_a_post(client, annotator):
    client.force_login(annotator)
    assert client.get(reverse("logout")).status_code == 405


def test_the_health_check_answers(client, db):
    assert client.get(reverse("health")).json() == {"status": "ok"}


def test_a_researcher_is_sent_to_the_dataset_pages(client, db):
    from tests.factories import AnnotatorFactory

    researcher = AnnotatorFactory(username="rita", role="researcher")
    client.force_login(researcher)
    body = client.get(reverse("home")).content.decode()
    assert reverse("exports:export-list") in body and reverse("exports:scoring") in body
