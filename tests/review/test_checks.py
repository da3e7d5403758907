"""review/checks.py is the one home of the P3/P5 rules: the workflow, the task API and the
check screen refuse the same checks, at the same field."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import workflow
from annotation.models import Claim, Task
from annotation.submissions import FlagData, QualityVerdict
from annotation.vocabulary import CLAIM_TOO_VAGUE, AnswerType, Phase
from review.checks import check_problems
from review.models import QualityCheck
from tests import steps
from tests.factories import AnnotatorFactory

SHOWN = {0: {0}, 1: {0}}

# (the check, the field path its problem is at)
BAD_CHECKS = [
    (QualityVerdict(verdict=None, justification="Because."), "verdict"),
    (QualityVerdict(verdict="Refuted", justification="  "), "justification"),
    (QualityVerdict(verdict=CLAIM_TOO_VAGUE, justification="Vague."), "verdict"),
    (QualityVerdict(verdict="Maybe", justification="Hm."), "verdict"),
    # Just over the rule's limit; absurd sizes stop at the input boundary (tests/api).
    (QualityVerdict(verdict="Refuted", justification="x" * 5_001), "justification"),
    (
        QualityVerdict(None, unreadable=True, flags=[FlagData("question_unrelated", 9)]),
        "flags.0.question_position",
    ),
    (
        QualityVerdict(None, unreadable=True, flags=[FlagData("question_unrelated")]),
        "flags.0.question_position",
    ),
    (
        QualityVerdict(None, unreadable=True, flags=[FlagData("answer_unrelated", 0, 3)]),
        "flags.0.answer_position",
    ),
    (
        QualityVerdict(None, unreadable=True, flags=[FlagData("answer_unrelated", None, 0)]),
        "flags.0.question_position",
    ),
    (
        QualityVerdict(None, unreadable=True, flags=[FlagData("claim_ambiguous", 0)]),
        "flags.0.code",
    ),
    (
        QualityVerdict(
            None,
            unreadable=True,
            flags=[FlagData("claim_ambiguous"), FlagData("claim_ambiguous")],
        ),
        "flags.1.code",
    ),
]


@pytest.mark.parametrize(("check", "path"), BAD_CHECKS)
def test_the_rules_name_the_field_of_each_problem(check, path):
    assert [p.path for p in check_problems(check, Phase.QUALITY_CHECK, SHOWN)] == [path]


def test_a_good_check_and_an_unreadable_one_have_no_problems():
    good = QualityVerdict(
        "Refuted", "The budget says 2.1 million.", flags=[FlagData("claim_ambiguous")]
    )
    assert check_problems(good, Phase.QUALITY_CHECK, SHOWN) == []
    assert check_problems(QualityVerdict(None, unreadable=True), Phase.QUALITY_CHECK) == []
    vague = QualityVerdict(CLAIM_TOO_VAGUE, "Which council?")
    assert check_problems(vague, Phase.POST_CONTROL) == []


@pytest.fixture
def crew(db):
    return AnnotatorFactory.create_batch(4)


@pytest.fixture
def p3_task(crew) -> Task:
    steps.new_article()
    steps.normalise(crew[0])
    steps.answer(crew[1])
    return steps.take(crew[2], Phase.QUALITY_CHECK)


@pytest.mark.parametrize(("check", "path"), BAD_CHECKS)
def test_the_workflow_refuses_what_the_rules_refuse(p3_task, check, path):
    with pytest.raises(workflow.WorkflowError, match=path.replace(".", r"\.")):
        workflow.submit_quality_check(p3_task, check)
    assert not QualityCheck.objects.exists()
    assert Claim.objects.get(pk=p3_task.claim_id).state == Claim.State.QUALITY_CHECK


@pytest.mark.parametrize(("check", "path"), BAD_CHECKS)
def test_the_api_refuses_what_the_rules_refuse_at_the_same_field(crew, p3_task, check, path):
    api = APIClient()
    api.force_authenticate(crew[2])
    payload = {
        "verdict": check.verdict,
        "justification": check.justification,
        "unreadable": check.unreadable,
        "flags": [vars(flag) for flag in check.flags],
    }
    response = api.post(f"/api/v1/tasks/{p3_task.pk}/submit/", payload, format="json")
    assert response.status_code == 400, response.content
    errors = response.json()
    for key in path.split("."):
        errors = errors[key]
    assert errors
    assert not QualityCheck.objects.exists()


@pytest.mark.parametrize(("check", "path"), [c for c in BAD_CHECKS if not c[0].flags])
def test_the_screen_refuses_what_the_rules_refuse(client, crew, p3_task, check, path):
    client.force_login(crew[2])
    response = client.post(
        reverse("review:submit-check", args=[p3_task.pk]),
        {
            "draft_version": str(p3_task.draft_version),
            "verdict": check.verdict or "",
            "justification": check.justification,
        },
    )
    assert response.status_code == 422
    message = check_problems(check, Phase.QUALITY_CHECK)[0].message
    assert message.replace("'", "&#x27;") in response.content.decode()


@pytest.fixture
def p3_task_with_an_unanswerable_answer(crew) -> Task:
    steps.new_article()
    steps.normalise(crew[0])
    evidence = steps.evidence()
    evidence.questions[1].answers = [
        workflow.AnswerData(text="", answer_type=AnswerType.UNANSWERABLE)
    ]
    workflow.submit_evidence(steps.take(crew[1], Phase.QUESTIONS), evidence)
    return steps.take(crew[2], Phase.QUALITY_CHECK)


SOURCE_FLAG_ON_UNANSWERABLE = QualityVerdict(
    "Refuted", "The budget says 2.1 million.", flags=[FlagData("answer_wrong_unsupported", 1, 0)]
)


def test_a_flag_about_the_source_cannot_be_put_on_an_unanswerable_answer():
    shown = {0: {0: AnswerType.EXTRACTIVE}, 1: {0: AnswerType.UNANSWERABLE}}
    problems = check_problems(SOURCE_FLAG_ON_UNANSWERABLE, Phase.QUALITY_CHECK, shown)
    assert [p.path for p in problems] == ["flags.0.code"]
    on_extractive = QualityVerdict(
        "Refuted", "Because.", flags=[FlagData("answer_wrong_unsupported", 0, 0)]
    )
    assert check_problems(on_extractive, Phase.QUALITY_CHECK, shown) == []
    unrelated = QualityVerdict("Refuted", "Because.", flags=[FlagData("answer_unrelated", 1, 0)])
    assert check_problems(unrelated, Phase.QUALITY_CHECK, shown) == []


def test_the_workflow_and_the_api_refuse_a_source_flag_on_an_unanswerable_answer(
    crew, p3_task_with_an_unanswerable_answer
):
    task = p3_task_with_an_unanswerable_answer
    with pytest.raises(workflow.WorkflowError, match=r"flags\.0\.code"):
        workflow.submit_quality_check(task, SOURCE_FLAG_ON_UNANSWERABLE)
    api = APIClient()
    api.force_authenticate(crew[2])
    payload = {
        "verdict": "Refuted",
        "justification": "Because.",
        "unreadable": False,
        "flags": [vars(flag) for flag in SOURCE_FLAG_ON_UNANSWERABLE.flags],
    }
    response = api.post(f"/api/v1/tasks/{task.pk}/submit/", payload, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["flags"]["0"]["code"]
    assert not QualityCheck.objects.exists()
