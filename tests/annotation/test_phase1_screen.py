"""The Phase 1 screen through the test client: drafts, checks, confirmation, skip, timing."""

import pytest
from django.urls import reverse

from annotation import assignment
from annotation.models import Article, Claim, Task
from annotation.vocabulary import ClaimType, Phase, Strategy, Verdict
from tests import steps


@pytest.fixture
def p1_task(annotator):
    steps.new_article(
        url="https://web.archive.org/web/20201101000000/https://fullfact.org/online/story/",
        claimreview_claim="Says the town spent 4 million on parks.",
        claimreview_claimant="Facebook post",
    )
    return assignment.next_task(annotator, Phase.NORMALISATION)


def claim_fields(index=0, **overrides):
    fields = {
        "text": "The town spent 4 million pounds on parks in 2019.",
        "fact_checker_label": Verdict.REFUTED,
        "claim_date": "2020-10-30",
        "date_as_written": "",
        "speaker": "A councillor",
        "reporting_source": "Facebook",
        "original_claim_url": "https://facebook.com/post/1",
        "media_url": "",
        "image_transcription": "",
        "location_iso_code": "gb",
        "claim_types": [ClaimType.NUMERICAL],
        "fact_checking_strategies": [Strategy.WRITTEN_EVIDENCE],
    }
    fields.update(overrides)
    return {f"claims-{index}-{key}": value for key, value in fields.items()}


def form_data(*claims, version=0):
    data = {"claims-TOTAL_FORMS": str(len(claims)), "claims-INITIAL_FORMS": "0"}
    data["draft_version"] = str(version)
    for claim in claims:
        data.update(claim)
    return data


@pytest.fixture
def logged_in(client, annotator):
    client.force_login(annotator)
    return client


def test_the_editor_starts_from_the_fact_checkers_markup_and_shows_a_hint(logged_in, p1_task):
    response = logged_in.get(reverse("annotation:task", args=[p1_task.pk]))
    assert response.status_code == 200
    body = response.content.decode()
    assert "Says the town spent 4 million on parks." in body
    assert "Drop the leading" in body  # the "Says" hint, before any typing
    assert (
        'src="https://web.archive.org/web/20201101000000/https://fullfact.org/online/story/"'
        in body
    )
    assert 'href="https://fullfact.org/online/story/"' in body  # the live page
    assert "A quick tour" in body


def test_autosave_keeps_the_draft_and_returns_the_new_version_and_hints(logged_in, p1_task):
    data = form_data(claim_fields(0, text="We closed ten schools."), claim_fields(1))
    response = logged_in.post(reverse("annotation:save-draft", args=[p1_task.pk]), data)
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="draft-version" value="1" hx-swap-oob="true"' in body
    assert "starts with &quot;We&quot;" in body
    p1_task.refresh_from_db()
    assert p1_task.draft_version == 1
    assert [c["text"] for c in p1_task.draft["claims"]] == [
        "We closed ten schools.",
        "The town spent 4 million pounds on parks in 2019.",
    ]
    page = logged_in.get(reverse("annotation:task", args=[p1_task.pk])).content.decode()
    assert "We closed ten schools." in page and "Draft restored" in page


def test_a_stale_tab_gets_a_conflict_message_instead_of_overwriting(logged_in, p1_task):
    url = reverse("annotation:save-draft", args=[p1_task.pk])
    logged_in.post(url, form_data(claim_fields(0, text="Newer text."), version=0))
    stale = logged_in.post(url, form_data(claim_fields(0, text="Older text."), version=0))
    assert stale.status_code == 409
    assert b"another tab" in stale.content and b"data-conflict" in stale.content
    p1_task.refresh_from_db()
    assert p1_task.draft["claims"][0]["text"] == "Newer text."


def test_a_stale_tab_cannot_submit_either(logged_in, p1_task):
    logged_in.post(reverse("annotation:save-draft", args=[p1_task.pk]), form_data(claim_fields()))
    response = logged_in.post(
        reverse("annotation:submit-normalisation", args=[p1_task.pk]),
        form_data(claim_fields(), version=0),
    )
    assert response.status_code == 409
    assert not Claim.objects.exists()


def test_missing_required_fields_are_errors_on_the_fields(logged_in, p1_task):
    data = form_data(
        claim_fields(
            text="",
            fact_checker_label="",
            claim_date="",
            claim_types=[],
            fact_checking_strategies=[],
        )
    )
    response = logged_in.post(reverse("annotation:submit-normalisation", args=[p1_task.pk]), data)
    assert response.status_code == 422
    errors = response.context["formset"].forms[0].errors
    assert set(errors) == {
        "text",
        "fact_checker_label",
        "claim_date",
        "claim_types",
        "fact_checking_strategies",
    }
    assert response.content.decode().count("field invalid") >= 3
    assert not Claim.objects.exists()
    p1_task.refresh_from_db()
    assert p1_task.draft["claims"][0]["speaker"] == "A councillor"  # kept for a reload


def test_a_date_as_written_fills_an_empty_claim_date_with_its_earliest_day(logged_in, p1_task):
    data = form_data(claim_fields(claim_date="", date_as_written="February 2017"))
    logged_in.post(reverse("annotation:submit-normalisation", args=[p1_task.pk]), data)
    assert str(Claim.objects.get().claim_date) == "2017-02-01"


def test_the_date_helper_offers_the_earliest_day(logged_in):
    response = logged_in.get(
        reverse("annotation:earliest-date"),
        {"claims-0-date_as_written": "February 2017"},
    )
    assert b'data-value="2017-02-01"' in response.content
    assert b"data-fill-date" in response.content


def test_submitting_two_claims_queues_both_for_p2_and_moves_on(logged_in, p1_task, annotator):
    steps.new_article()  # the next article waiting
    data = form_data(claim_fields(0), claim_fields(1, text="Parks spending doubled in 2019."))
    response = logged_in.post(reverse("annotation:submit-normalisation", args=[p1_task.pk]), data)
    assert response.status_code == 302
    claims = list(Claim.objects.order_by("position"))
    assert [c.text for c in claims][1] == "Parks spending doubled in 2019."
    assert claims[0].location_iso_code == "GB" and claims[0].speaker == "A councillor"
    assert Task.objects.filter(phase=Phase.QUESTIONS, status=Task.Status.POOLED).count() == 2
    next_task = Task.objects.get(annotator=annotator, status=Task.Status.IN_PROGRESS)
    assert response["Location"] == reverse("annotation:task", args=[next_task.pk])


def test_choices_that_exclude_a_claim_ask_for_confirmation_first(logged_in, p1_task):
    data = form_data(claim_fields(claim_types=[ClaimType.OPINION]))
    url = reverse("annotation:submit-normalisation", args=[p1_task.pk])
    response = logged_in.post(url, data)
    assert response.status_code == 200
    assert b"Some claims will stop here" in response.content
    assert not Claim.objects.exists()
    # The confirmation page saved the draft; the form it shows carries the new version.
    assert 'id="draft-version" value="1"' in response.content.decode()
    logged_in.post(url, {**data, "confirm_exclusion": "1", "draft_version": "1"})
    assert Claim.objects.get().state == Claim.State.EXCLUDED


def test_claims_that_go_on_need_no_confirmation(logged_in, p1_task):
    logged_in.post(
        reverse("annotation:submit-normalisation", args=[p1_task.pk]), form_data(claim_fields())
    )
    assert Claim.objects.get().state == Claim.State.QUESTIONS


def test_an_unknown_country_code_is_refused(logged_in, p1_task):
    response = logged_in.post(
        reverse("annotation:submit-normalisation", args=[p1_task.pk]),
        form_data(claim_fields(location_iso_code="XX")),
    )
    assert response.status_code == 422
    assert "location_iso_code" in response.context["formset"].forms[0].errors


def test_report_and_skip_keeps_the_reason(logged_in, p1_task):
    response = logged_in.post(
        reverse("annotation:skip-article", args=[p1_task.pk]), {"reason": "not_found"}
    )
    assert response.status_code == 302
    article = Article.objects.get(pk=p1_task.article_id)
    assert article.state == Article.State.SKIPPED and article.skip_reason == "not_found"


def test_skipping_for_another_reason_asks_for_a_note(logged_in, p1_task):
    response = logged_in.post(
        reverse("annotation:skip-article", args=[p1_task.pk]), {"reason": "other"}
    )
    assert response.status_code == 422
    assert "Say what is wrong" in response.content.decode()


def test_article_load_time_is_recorded_once(logged_in, p1_task):
    url = reverse("annotation:article-loaded", args=[p1_task.pk])
    assert logged_in.post(url).status_code == 204
    p1_task.refresh_from_db()
    first = p1_task.article_loaded_at
    logged_in.post(url)
    p1_task.refresh_from_db()
    assert first is not None and p1_task.article_loaded_at == first


def test_a_dismissed_tour_does_not_come_back(logged_in, p1_task, annotator):
    assert logged_in.post(reverse("annotation:tour-done", args=["p1"])).status_code == 204
    annotator.refresh_from_db()
    assert annotator.completed_tours == ["p1"]
    page = logged_in.get(reverse("annotation:task", args=[p1_task.pk]))
    assert b"A quick tour" not in page.content


def test_someone_elses_p1_task_is_not_found(client, second_annotator, p1_task):
    client.force_login(second_annotator)
    for name in ("task", "save-draft", "submit-normalisation", "skip-article"):
        response = client.post(reverse(f"annotation:{name}", args=[p1_task.pk]), {})
        assert response.status_code in (404, 405)
    assert client.get(reverse("annotation:task", args=[p1_task.pk])).status_code == 404


def test_editing_endpoints_need_a_post(logged_in, p1_task):
    for name in ("save-draft", "submit-normalisation", "skip-article", "article-loaded"):
        assert logged_in.get(reverse(f"annotation:{name}", args=[p1_task.pk])).status_code == 405


def test_autosave_on_a_task_that_left_the_annotator_says_so(logged_in, p1_task, manager):
    from annotation import assignment

    assignment.release_task(p1_task, manager)
    response = logged_in.post(
        reverse("annotation:save-draft", args=[p1_task.pk]), form_data(claim_fields())
    )
    assert response.status_code == 409
    body = response.content.decode()
    assert "no longer open for you" in body and "another tab" not in body


def test_submit_and_stop_hands_in_without_leasing_the_next_article(logged_in, p1_task, annotator):
    steps.new_article()  # another article waiting: it must stay in the pool
    response = logged_in.post(
        reverse("annotation:submit-normalisation", args=[p1_task.pk]),
        {**form_data(claim_fields()), "then": "stop"},
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:control-panel")
    assert Claim.objects.get().state == Claim.State.QUESTIONS
    assert not Task.objects.filter(annotator=annotator, status=Task.Status.IN_PROGRESS).exists()
    assert Task.objects.filter(phase=Phase.NORMALISATION, annotator=None).count() == 1


def test_the_form_marks_required_fields_and_picks_a_country_by_name(logged_in, p1_task):
    body = logged_in.get(reverse("annotation:task", args=[p1_task.pk])).content.decode()
    card = body[body.index("data-claim-card") : body.index('id="claim-template"')]
    for label in ("Fact-checker&#x27;s verdict", "Claim types", "Fact-checking strategies"):
        assert f'{label} <abbr class="required" title="required">*</abbr>' in card
    assert '<select name="claims-0-location_iso_code"' in card
    assert '<option value="GB">United Kingdom</option>' in card
    assert 'maxlength="2"' not in card
    assert "Submit and stop" in body


def test_wording_hints_follow_the_typing(logged_in):
    url = reverse("annotation:wording-hints")
    hinted = logged_in.get(url, {"claims-0-text": "Says the council spent 4 million?"})
    assert "reads like a question" in hinted.content.decode()
    assert "Drop the leading" in hinted.content.decode()
    fine = logged_in.get(url, {"claims-0-text": "The council spent 4 million on parks."})
    assert fine.content.decode().strip() == ""
    assert logged_in.post(url).status_code == 405


def test_wording_hints_need_a_signed_in_user(client, db):
    assert client.get(reverse("annotation:wording-hints")).status_code == 302


def test_a_refused_submit_lists_every_problem_with_a_link_to_its_field(logged_in, p1_task):
    data = form_data(
        claim_fields(0),
        claim_fields(1, fact_checker_label="", claim_types=[]),
    )
    response = logged_in.post(reverse("annotation:submit-normalisation", args=[p1_task.pk]), data)
    assert response.status_code == 422
    page = response.content.decode()
    summary = page[page.index('id="error-summary"') :]
    summary = summary[: summary.index("</div>")]
    assert "2 things to fix before submitting" in summary
    assert "Claim 2: Fact-checker&#x27;s verdict" in summary
    assert "Claim 2: Claim types" in summary
    # Each link leads to an element of the page (the first choice of a choice group).
    anchors = [part.split('"')[0] for part in summary.split('href="#')[1:]]
    assert anchors == ["id_claims-1-fact_checker_label_0", "id_claims-1-claim_types_0"]
    for anchor in anchors:
        assert f'id="{anchor}"' in page


def test_a_valid_page_has_no_error_summary(logged_in, p1_task):
    response = logged_in.get(reverse("annotation:task", args=[p1_task.pk]))
    assert response.status_code == 200
    assert 'id="error-summary"' not in response.content.decode()
