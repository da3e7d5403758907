"""Training on gold claims: side-by-side feedback, and qualification at the shared task's bar."""

import pytest
from django.urls import reverse

from annotation import assignment, training
from annotation.models import AuditEntry, QualificationThresholds, TrainingAnswer
from annotation.vocabulary import ClaimType, Phase, Strategy, Verdict
from tests.factories import AnnotatorFactory, GoldClaimFactory

NUMERICAL, QUOTE = ClaimType.NUMERICAL.value, ClaimType.QUOTE.value
WRITTEN, NUMBERS = Strategy.WRITTEN_EVIDENCE.value, Strategy.NUMERICAL_COMPARISON.value


@pytest.fixture
def trainee(db):
    return AnnotatorFactory(username="trainee", qualified_phases=[])


@pytest.fixture
def gold(db):
    # Gold: Numerical Claim / Written Evidence, label Refuted (the factory's values).
    return [GoldClaimFactory() for _ in range(2)]


def test_f1_of_label_sets_is_computed_from_precision_and_recall():
    assert training.f1([NUMERICAL, QUOTE], [NUMERICAL]) == pytest.approx(2 / 3)
    assert training.f1([], []) == 1.0
    assert training.f1([QUOTE], [NUMERICAL]) == 0.0


def test_a_p1_training_item_shows_the_answer_beside_the_gold_with_differences_marked(
    client, trainee, gold
):
    client.force_login(trainee)
    page = client.get(reverse("annotation:training", args=[1]))
    claim = page.context["claim"]

    response = client.post(
        reverse("annotation:training-hand-in", args=[1, claim.pk]),
        {"claim_types": [NUMERICAL, QUOTE], "fact_checking_strategies": [WRITTEN]},
        follow=True,
    )

    html = response.content.decode()
    assert 'id="training-feedback"' in html
    rows = {row.what: row for row in response.context["rows"]}
    assert rows["Claim types"].yours == f"{NUMERICAL}, {QUOTE}"
    assert rows["Claim types"].gold == NUMERICAL
    assert rows["Claim types"].same is False
    assert rows["Strategies"].same is True
    assert html.count('class="differs"') == 1
    assert TrainingAnswer.objects.get().score == {
        "types_f1": pytest.approx(2 / 3),
        "strategies_f1": 1.0,
    }


def test_passing_the_p2_bar_qualifies_for_real_p2_tasks(client, trainee, gold):
    QualificationThresholds.objects.create(items_per_phase=2)
    client.force_login(trainee)
    pairs = {
        "question_0": "How much?",
        "answer_0": "2.1m",
        "question_1": "Who said?",
        "answer_1": "X",
    }
    with pytest.raises(assignment.NoTaskAvailable):
        assignment.next_task(trainee, Phase.QUESTIONS)

    for claim in gold:
        client.post(
            reverse("annotation:training-hand-in", args=[2, claim.pk]),
            {**pairs, "verdict": Verdict.REFUTED},
        )

    trainee.refresh_from_db()
    assert trainee.is_qualified_for(Phase.QUESTIONS)
    assert AuditEntry.objects.filter(action="qualification").exists()


def test_too_few_qa_pairs_or_wrong_verdicts_do_not_qualify(trainee, gold):
    QualificationThresholds.objects.create(items_per_phase=2)
    one_pair = {"pairs": [{"question": "How much?", "answer": "2.1m"}], "verdict": Verdict.REFUTED}
    training.hand_in(trainee, Phase.QUESTIONS, gold[0], one_pair)
    training.hand_in(trainee, Phase.QUESTIONS, gold[1], one_pair)
    training.hand_in(trainee, Phase.QUALITY_CHECK, gold[0], {"verdict": Verdict.SUPPORTED})
    training.hand_in(trainee, Phase.QUALITY_CHECK, gold[1], {"verdict": Verdict.SUPPORTED})

    trainee.refresh_from_db()
    p2, p3 = training.standing(trainee, 2), training.standing(trainee, 3)
    assert p2.passed is False and p2.measures["fewest_qa_pairs"] == 1
    assert p3.passed is False and p3.measures["verdict_accuracy"] == 0
    assert trainee.qualified_phases == []


def test_half_the_verdicts_right_is_enough_for_p3(trainee, gold):
    QualificationThresholds.objects.create(items_per_phase=2)
    training.hand_in(trainee, Phase.QUALITY_CHECK, gold[0], {"verdict": Verdict.REFUTED})
    training.hand_in(trainee, Phase.QUALITY_CHECK, gold[1], {"verdict": Verdict.SUPPORTED})

    trainee.refresh_from_db()
    assert trainee.is_qualified_for(Phase.QUALITY_CHECK)


def test_the_p3_training_page_is_blind_to_the_gold_label(client, trainee, gold):
    client.force_login(trainee)
    gold[0].label = Verdict.CONFLICTING
    gold[0].save()

    html = client.get(reverse("annotation:training", args=[3])).content.decode()

    assert "How much did the council spend on parks in 2019?" in html
    assert "Conflicting" not in html.split('id="training-form"')[0]


def test_a_training_answer_is_only_shown_to_its_author(client, trainee, gold, annotator):
    answer = training.hand_in(trainee, Phase.QUALITY_CHECK, gold[0], {"verdict": Verdict.REFUTED})
    client.force_login(annotator)

    assert client.get(reverse("annotation:training-feedback", args=[answer.pk])).status_code == 404


def test_there_is_no_training_for_p4_and_hand_in_is_post_only(client, trainee, gold):
    client.force_login(trainee)

    assert client.get(reverse("annotation:training", args=[4])).status_code == 404
    assert (
        client.get(reverse("annotation:training-hand-in", args=[1, gold[0].pk])).status_code == 405
    )


def test_an_incomplete_answer_is_refused_with_the_form_again(client, trainee, gold):
    client.force_login(trainee)

    response = client.post(
        reverse("annotation:training-hand-in", args=[2, gold[0].pk]),
        {"answer_0": "2.1m"},
    )

    assert response.status_code == 422
    assert "An answer needs its question." in response.content.decode()
    assert not TrainingAnswer.objects.exists()


def test_managers_set_the_thresholds_and_annotators_may_not(client, manager, annotator):
    url = reverse("annotation:qualification")
    values = {
        "type_strategy_f1": "0.8",
        "min_qa_pairs": "3",
        "verdict_accuracy": "0.6",
        "items_per_phase": "4",
    }
    client.force_login(annotator)
    assert client.post(url, values).status_code == 403
    client.force_login(manager)
    assert QualificationThresholds.current().type_strategy_f1 == 0.7  # the shared task's bar

    client.post(url, values)
    bad = client.post(url, {**values, "verdict_accuracy": "1.5"})

    current = QualificationThresholds.current()
    assert (current.type_strategy_f1, current.min_qa_pairs, current.items_per_phase) == (0.8, 3, 4)
    assert bad.status_code == 422


def test_the_admin_lists_thresholds_and_training_answers(client, trainee, gold, django_user_model):
    admin = django_user_model.objects.create_superuser("root", password="x")
    training.hand_in(trainee, Phase.QUALITY_CHECK, gold[0], {"verdict": Verdict.REFUTED})
    QualificationThresholds.objects.create()
    client.force_login(admin)

    for model in ("qualificationthresholds", "traininganswer"):
        assert client.get(f"/admin/annotation/{model}/").status_code == 200
