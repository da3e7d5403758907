"""Progress and quality signals, and the stuck-work finder."""

from datetime import timedelta

import pytest

from annotation import workflow
from annotation.models import Article, PhaseQuota, Task
from annotation.vocabulary import Phase, Verdict
from review.agreement import ReportFilter
from review.progress import (
    ALL_AT_QUOTA,
    ALL_SEEN_ARTICLE,
    NOBODY_QUALIFIED,
    annotator_figures,
    daily_figures,
    outcome_rates,
    phase_figures,
    stuck_tasks,
)
from tests import steps
from tests.factories import AnnotatorFactory


@pytest.fixture
def four(db):
    return [AnnotatorFactory(username=f"four{i}") for i in range(4)]


def _disputed_claim(four):
    """A claim in P5 after P1, P2, P3 and P4 by the four: none of them may post-control it."""
    steps.new_article()
    [claim] = steps.normalise(four[0])
    steps.answer(four[1], Verdict.REFUTED)
    steps.check(four[2], Verdict.SUPPORTED)
    steps.resolve(four[3], Verdict.REFUTED)
    return claim


def test_a_claim_nobody_fresh_may_post_control_is_listed_as_stuck_with_the_reason(four):
    claim = _disputed_claim(four)

    [stuck] = stuck_tasks()

    assert (stuck["phase"], stuck["claim"]) == (Phase.POST_CONTROL, claim.pk)
    assert stuck["reason"] == ALL_SEEN_ARTICLE
    assert stuck["could_qualify"] == []


def test_an_unqualified_fresh_annotator_is_offered_as_the_fix(four):
    _disputed_claim(four)
    AnnotatorFactory(username="newcomer", qualified_phases=[1, 2])

    [stuck] = stuck_tasks()

    assert stuck["could_qualify"] == ["newcomer"]


def test_work_a_fresh_qualified_annotator_can_take_is_not_stuck(four):
    _disputed_claim(four)
    AnnotatorFactory(username="fresh")

    assert stuck_tasks() == []


def test_quotas_and_missing_qualifications_are_named(four):
    _disputed_claim(four)
    fresh = AnnotatorFactory(username="fresh")
    PhaseQuota.objects.create(annotator=fresh, phase=Phase.POST_CONTROL, limit=0)
    steps.new_article()  # a P1 task; nobody is qualified for P1 after this:
    for user in [*four, fresh]:
        user.qualified_phases = [2, 3, 4, 5]
        user.save()

    reasons = {row["phase"]: row["reason"] for row in stuck_tasks()}

    assert reasons == {Phase.NORMALISATION: NOBODY_QUALIFIED, Phase.POST_CONTROL: ALL_AT_QUOTA}


def test_speed_traps_and_skips_before_the_article_loaded_are_counted(four, settings):
    settings.SPEED_TRAP_SECONDS = 24
    steps.new_article()
    steps.new_article()
    [claim] = steps.normalise(four[0])
    task = steps.take(four[0], Phase.NORMALISATION)
    workflow.skip_article(task, Article.SkipReason.PAYWALL)
    # The P1 hand-in took 10 s: a speed trap. The skipped one has no load time: a blind skip.
    first = Task.objects.get(phase=1, annotator=four[0], article=claim.article)
    Task.objects.filter(pk=first.pk).update(opened_at=first.submitted_at - timedelta(seconds=10))

    [row] = annotator_figures(ReportFilter())
    phases = {p["phase"]: p for p in phase_figures(ReportFilter())}
    outcomes = outcome_rates(ReportFilter())

    assert row["annotator"] == "four0" and row["done_p1"] == 2
    assert row["speed_traps"] >= 1
    assert row["skips"] == 1 and row["skips_before_article"] == 1
    assert phases[1]["done"] == 2 and phases[1]["speed_traps"] >= 1
    assert outcomes["skip_rate"] == 0.5
    assert outcomes["skip_reasons"] == {"behind a paywall": 1}


def test_per_annotator_quality_signals_come_from_the_agreement_rounds(agreement_claims):
    rows = {r["annotator"]: r for r in annotator_figures(ReportFilter())}

    # crew1 wrote the P2 of record: R, S, R; P3 said R, S, S: two of three confirmed.
    assert rows["crew1"]["p2_confirmed_in_p3"] == pytest.approx(2 / 3)
    assert rows["crew1"]["questions_per_claim"] == 2
    assert rows["crew5"]["done_p4"] == 1
    assert 0 <= rows["crew3"]["agreement_with_others"] <= 1
    outcomes = outcome_rates(ReportFilter())
    assert outcomes["disputed"] == 1 and outcomes["reannotated"] == 1
    assert outcomes["dispute_rate"] == pytest.approx(1 / 3)


def test_daily_figures_count_hand_ins_per_phase(agreement_claims):
    days = daily_figures(ReportFilter())

    today = days[-1]
    assert today["done_p1"] == 3 and today["done_p2"] == 6 and today["done_p5"] == 1
    assert today["queue_p1"] == 0
