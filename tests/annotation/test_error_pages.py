"""Error pages keep the site around the annotator: header, plain words and a way back."""

import pytest
from django.urls import reverse

from annotation.vocabulary import Phase
from tests import steps


@pytest.fixture
def someone_elses_task(second_annotator):
    steps.new_article()
    return steps.take(second_annotator, Phase.NORMALISATION)


def test_another_annotators_task_is_a_styled_not_found_page(client, annotator, someone_elses_task):
    client.force_login(annotator)
    response = client.get(reverse("annotation:task", args=[someone_elses_task.pk]))
    body = response.content.decode()
    assert response.status_code == 404
    assert 'class="topbar"' in body and "Back to your tasks" in body
    assert "does not exist for you" in body


def test_a_get_on_a_post_only_screen_address_is_a_styled_405_page(client, annotator):
    client.force_login(annotator)
    response = client.get(reverse("annotation:save-draft", args=[1]))
    body = response.content.decode()
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert 'class="topbar"' in body and "Back to your tasks" in body


def test_api_405_answers_stay_json(client, annotator):
    client.force_login(annotator)
    response = client.get("/api/v1/tasks/next/")
    assert response.status_code == 405
    assert response["Content-Type"].startswith("application/json")


def test_a_manager_page_is_a_styled_403_page_for_an_annotator(client, annotator):
    client.force_login(annotator)
    response = client.get(reverse("annotation:manager-panel"))
    if response.status_code == 302:
        pytest.skip("manager pages redirect instead of refusing")
    assert response.status_code == 403
    assert 'class="topbar"' in response.content.decode()


def test_the_500_page_has_the_site_header_and_a_way_back(client):
    from django.template.loader import render_to_string

    body = render_to_string("500.html")
    assert 'class="topbar"' in body and "Back to your tasks" in body
