"""Training on gold claims (P1-P3) and the qualification it earns.

Gold claims are accepted claims imported from a dataset file (they carry the released
types, strategies, QA pairs and label). An annotator answers a gold claim as the phase
would; the answer is compared with the gold at once and shown side by side. After
`items_per_phase` answers, the phase's bar (QualificationThresholds: the AVeriTeC shared
task's 70% type/strategy F1, 2 QA pairs per claim, 50% verdict accuracy) decides; passing
adds the phase to the account's qualifications, which is what assignment asks
(User.is_qualified_for). Failing keeps the answers; a manager may still qualify by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Count, Q, QuerySet

from annotation.models import Claim, QualificationThresholds, TrainingAnswer, User
from annotation.vocabulary import Phase
from annotation.workflow import WorkflowError, audit

TRAINING_PHASES = (Phase.NORMALISATION, Phase.QUESTIONS, Phase.QUALITY_CHECK)
MEASURE_LABELS = {
    "types_f1": "claim-type F1",
    "strategies_f1": "strategy F1",
    "verdict_accuracy": "verdict accuracy",
    "fewest_qa_pairs": "fewest QA pairs on a claim",
}


def gold_claims() -> QuerySet[Claim]:
    """Imported accepted claims with QA pairs: the claims training is done on."""
    return (
        Claim.objects.filter(origin=Claim.Origin.IMPORTED, state=Claim.State.ACCEPTED)
        .annotate(n_questions=Count("evidence_rounds__questions"))
        .filter(n_questions__gt=0)
        .order_by("dataset_position", "id")
    )


def next_training_claim(annotator: User, phase: int) -> Claim | None:
    done = TrainingAnswer.objects.filter(annotator=annotator, phase=phase).values("claim_id")
    return gold_claims().exclude(pk__in=done).first()


def f1(given: list[str], gold: list[str]) -> float:
    """F1 of two label sets; two empty sets agree fully."""
    given_set, gold_set = set(given), set(gold)
    if not given_set and not gold_set:
        return 1.0
    overlap = len(given_set & gold_set)
    if not overlap:
        return 0.0
    precision, recall = overlap / len(given_set), overlap / len(gold_set)
    return 2 * precision * recall / (precision + recall)


def gold_pairs(claim: Claim) -> list[dict]:
    evidence = claim.dataset_evidence()
    if evidence is None:
        return []
    return [
        {"question": q.text, "answers": [a.text for a in q.answers.all()]}
        for q in evidence.questions.prefetch_related("answers")
    ]


def score(phase: int, claim: Claim, answer: dict) -> dict:
    """How one training answer compares with the gold, measure by measure."""
    if phase == Phase.NORMALISATION:
        return {
            "types_f1": f1(answer.get("claim_types", []), claim.claim_types),
            "strategies_f1": f1(
                answer.get("fact_checking_strategies", []), claim.fact_checking_strategies
            ),
        }
    result = {"verdict_correct": answer.get("verdict") == claim.label}
    if phase == Phase.QUESTIONS:
        result["qa_pairs"] = sum(
            1 for pair in answer.get("pairs", []) if pair.get("question") and pair.get("answer")
        )
    return result


@dataclass
class Comparison:
    """One row of the side-by-side feedback."""

    what: str
    yours: str
    gold: str
    same: bool


def feedback(training: TrainingAnswer) -> list[Comparison]:
    """The answer beside the gold, row by row; `same` False marks a difference."""
    claim, answer = training.claim, training.answer
    rows: list[Comparison] = []
    if training.phase == Phase.NORMALISATION:
        for what, key, gold in (
            ("Claim types", "claim_types", claim.claim_types),
            ("Strategies", "fact_checking_strategies", claim.fact_checking_strategies),
        ):
            yours = answer.get(key, [])
            rows.append(
                Comparison(what, ", ".join(yours) or "—", ", ".join(gold), set(yours) == set(gold))
            )
        return rows
    if training.phase == Phase.QUESTIONS:
        gold = gold_pairs(claim)
        given = [p for p in answer.get("pairs", []) if p.get("question")]
        for n in range(max(len(gold), len(given))):
            mine = given[n] if n < len(given) else None
            theirs = gold[n] if n < len(gold) else None
            rows.append(
                Comparison(
                    f"Question {n + 1}",
                    f"{mine['question']} → {mine.get('answer', '')}" if mine else "—",
                    f"{theirs['question']} → {' / '.join(theirs['answers'])}" if theirs else "—",
                    # Wording differs by nature; only a missing pair is a difference here.
                    mine is not None and theirs is not None,
                )
            )
    verdict = answer.get("verdict", "")
    rows.append(Comparison("Verdict", verdict or "—", claim.label or "—", verdict == claim.label))
    return rows


@dataclass
class Standing:
    """Where an annotator stands in one phase's training."""

    phase: int
    answered: int
    needed: int
    measures: dict[str, float]
    passed: bool | None  # None until enough claims are answered

    @property
    def labelled(self) -> list[tuple[str, float]]:
        return [(MEASURE_LABELS[name], value) for name, value in self.measures.items()]


def standing(annotator: User, phase: int) -> Standing:
    """The annotator's training figures in a phase against the current thresholds."""
    bar = QualificationThresholds.current()
    scores = list(
        TrainingAnswer.objects.filter(annotator=annotator, phase=phase)
        .order_by("created_at", "id")
        .values_list("score", flat=True)[: bar.items_per_phase]
    )
    n = len(scores)

    def mean(key: str) -> float:
        return sum(float(s[key]) for s in scores) / n if n else 0.0

    if phase == Phase.NORMALISATION:
        measures = {"types_f1": mean("types_f1"), "strategies_f1": mean("strategies_f1")}
        ok = min(measures.values()) >= bar.type_strategy_f1
    else:
        measures = {"verdict_accuracy": mean("verdict_correct")}
        ok = measures["verdict_accuracy"] >= bar.verdict_accuracy
        if phase == Phase.QUESTIONS:
            fewest = min((s["qa_pairs"] for s in scores), default=0)
            measures["fewest_qa_pairs"] = fewest
            ok = ok and fewest >= bar.min_qa_pairs
    complete = n >= bar.items_per_phase
    return Standing(phase, n, bar.items_per_phase, measures, ok if complete else None)


@transaction.atomic
def hand_in(annotator: User, phase: int, claim: Claim, answer: dict) -> TrainingAnswer:
    """Record a training answer; when it completes the training, qualify on a pass."""
    if phase not in TRAINING_PHASES:
        raise WorkflowError(f"there is no training for phase {phase}")
    if not gold_claims().filter(pk=claim.pk).exists():
        raise WorkflowError(f"claim {claim.pk} is not a gold claim")
    try:
        with transaction.atomic():
            training = TrainingAnswer.objects.create(
                annotator=annotator,
                phase=phase,
                claim=claim,
                answer=answer,
                score=score(phase, claim, answer),
            )
    except IntegrityError:
        # A second click on the same claim: the first answer stands.
        return TrainingAnswer.objects.get(annotator=annotator, phase=phase, claim=claim)
    result = standing(annotator, phase)
    if result.passed and phase not in annotator.qualified_phases:
        User.objects.filter(pk=annotator.pk).update(
            qualified_phases=sorted({*annotator.qualified_phases, int(phase)})
        )
        annotator.refresh_from_db(fields=["qualified_phases"])
        audit(
            None,
            "qualification",
            f"{annotator.username} qualified for phase {phase} by training",
            user=annotator.username,
            measures=result.measures,
        )
    return training


def set_thresholds(manager: User, **values) -> QualificationThresholds:
    thresholds = QualificationThresholds.objects.create(changed_by=manager, **values)
    audit(manager, "qualification", f"set qualification thresholds: {thresholds}", **values)
    return thresholds


def training_overview() -> QuerySet[User]:
    """Annotators with their number of training answers per phase (manager page)."""
    return User.objects.filter(training_answers__isnull=False).annotate(
        **{
            f"p{p}": Count("training_answers", filter=Q(training_answers__phase=p))
            for p in TRAINING_PHASES
        }
    )
