"""Drive claims through the workflow the way annotators do: Start next, then submit."""

import datetime

from annotation import assignment, workflow
from annotation.models import Article, Claim, Task
from annotation.vocabulary import AnswerType, ClaimType, Phase, SourceMedium, Strategy, Verdict


def normalised_claim(text="The council spent 4 million on parks in 2019.", **overrides):
    values = {
        "text": text,
        "fact_checker_label": Verdict.REFUTED,
        "claim_date": datetime.date(2020, 10, 31),
        "claim_types": [ClaimType.NUMERICAL.value],
        "fact_checking_strategies": [Strategy.WRITTEN_EVIDENCE.value],
        "speaker": "A council member",
        "location_iso_code": "GB",
    }
    values.update(overrides)
    return workflow.NormalisedClaim(**values)


def evidence(verdict=Verdict.REFUTED, questions=2):
    return workflow.EvidenceData(
        questions=[
            workflow.QuestionData(
                text=f"What did the council's 2019 budget say? ({n + 1})",
                answers=[
                    workflow.AnswerData(
                        text="It lists 2.1 million for parks.",
                        answer_type=AnswerType.EXTRACTIVE,
                        source_url=f"https://council.example.gov/budget-2019/{n}",
                        source_medium=SourceMedium.WEB_TEXT,
                    )
                ],
            )
            for n in range(questions)
        ],
        verdict=verdict,
        pairs_support_verdict=True,
    )


def verdict(label=Verdict.REFUTED, **overrides):
    values = {"verdict": label, "justification": "The budget shows 2.1 million, not 4."}
    values.update(overrides)
    return workflow.QualityVerdict(**values)


def take(annotator, phase) -> Task:
    return assignment.next_task(annotator, phase)


def normalise(annotator, claims=None) -> list[Claim]:
    task = take(annotator, Phase.NORMALISATION)
    return workflow.submit_normalisation(task, claims or [normalised_claim()])


def answer(annotator, label=Verdict.REFUTED):
    return workflow.submit_evidence(take(annotator, Phase.QUESTIONS), evidence(label))


def check(annotator, label=Verdict.REFUTED, **kw):
    return workflow.submit_quality_check(take(annotator, Phase.QUALITY_CHECK), verdict(label, **kw))


def resolve(annotator, label=Verdict.REFUTED):
    return workflow.submit_dispute_resolution(take(annotator, Phase.DISPUTE), evidence(label, 3))


def post_control(annotator, label=Verdict.REFUTED, **kw):
    return workflow.submit_post_control(take(annotator, Phase.POST_CONTROL), verdict(label, **kw))


def new_article(**fields) -> Article:
    from tests.factories import ArticleFactory

    article = ArticleFactory(**fields)
    workflow.open_article_for_normalisation(article)
    return article


def tasks_in_every_phase(holder, crew) -> dict:
    """One task of each phase for `holder` to hold, each on an article of its own; `crew`
    (four other annotators) does the phases before it. The P3 verdict disagrees with P2, so
    the claim goes on to P4 and P5."""
    held = {}
    for phase in Phase:
        new_article()
        if phase > Phase.NORMALISATION:
            normalise(crew[0])
        if phase > Phase.QUESTIONS:
            answer(crew[1], Verdict.REFUTED)
        if phase > Phase.QUALITY_CHECK:
            check(crew[2], Verdict.SUPPORTED)
        if phase > Phase.DISPUTE:
            resolve(crew[3])
        held[phase] = take(holder, phase)
    return held
