"""Training on gold claims (P1-P3) and the qualification it earns.

Gold claims are accepted claims imported from a dataset file (they carry the released
types, strategies, QA pairs and label). The qualification test cannot be gamed:

- **Per-phase pools, disjoint**: the gold claims are split between the three training phases
  by id (:func:`pool`), so the feedback of one phase never shows another phase's key.
- **A draw per trainee, kept** (TrainingDraw): on first entering a phase's training, the
  trainee gets their own random sequence from that phase's pool: `practice_items` claims, then
  `items_per_phase` judged ones (the shared task's protocol, seed 001: 10 with feedback, then
  10 more). They answer only these, in this order; any other claim is refused.
- **Balanced verdicts**: each block of the draw spreads the four labels as evenly as the pool
  allows and is shuffled, so a trainee who gives one verdict to everything scores at chance;
  a pool where one verdict could still reach the bar is refused (:func:`pool_problem`).
- **Real QA pairs only**: a P2 pair counts only if it is long enough, does not merely repeat
  the claim and is close (METEOR) to a gold pair it is matched to one-to-one
  (pipeline/qa_pairs.py; threshold chosen on dev.json, see docs/benchmarks.md).

After each answer the trainee sees it beside the gold. When the judged items are all answered,
the phase's bar (QualificationThresholds: the shared task's 70% type/strategy F1, 2 QA pairs
per claim, 50% verdict accuracy) decides; passing adds the phase to the account's
qualifications, which is what assignment asks (User.is_qualified_for). Nobody is qualified
for a training phase otherwise, except by a manager's waiver with a reason (:func:`grant`),
which is audited.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Mod

from annotation.models import (
    Claim,
    QualificationThresholds,
    TrainingAnswer,
    TrainingDraw,
    User,
)
from annotation.vocabulary import Phase, Verdict
from annotation.workflow import WorkflowError, audit
from pipeline import qa_pairs
from pipeline.scoring import evidence_strings
from pipeline.text import meteor

TRAINING_PHASES = (Phase.NORMALISATION, Phase.QUESTIONS, Phase.QUALITY_CHECK)
# Training answers differ by phase (P1 types and strategies, P2 QA pairs and a verdict, P3 a
# verdict), so this module compares phases to pick the shape; it dispatches no task
# (tests/architecture/test_phase_dispatch.py names it among the places that stay).
VERDICT_PHASES = (Phase.QUESTIONS, Phase.QUALITY_CHECK)
MEASURE_LABELS = {
    "types_f1": "claim-type F1",
    "strategies_f1": "strategy F1",
    "verdict_accuracy": "verdict accuracy",
    "real_qa_pairs": "real QA pairs per claim",
}
# A waiver must say why; a few words at least.
MIN_WAIVER_REASON = 10

# The draw must be unpredictable to the trainee; tests read the stored draw instead.
_random = random.SystemRandom()


class TrainingRefused(WorkflowError):
    """A training action that is not allowed; the message says what to do instead."""


def gold_claims() -> QuerySet[Claim]:
    """Imported accepted claims with QA pairs: the claims training is done on."""
    return (
        Claim.objects.filter(origin=Claim.Origin.IMPORTED, state=Claim.State.ACCEPTED)
        .annotate(n_questions=Count("evidence_rounds__questions"))
        .filter(n_questions__gt=0)
        .order_by("dataset_position", "id")
    )


def pool(phase: int, bar: QualificationThresholds | None = None) -> QuerySet[Claim]:
    """The gold claims a phase draws from. The split by id is fixed, so pools stay disjoint
    however many claims are imported later; P2 needs claims with enough gold pairs to reach
    the bar, P2 and P3 claims with one of the four labels."""
    bar = bar or QualificationThresholds.current()
    claims = (
        gold_claims()
        .annotate(pool_slot=Mod("pk", len(TRAINING_PHASES)))
        .filter(pool_slot=TRAINING_PHASES.index(phase))
    )
    if phase in VERDICT_PHASES:
        claims = claims.filter(label__in=Verdict.values)
    if phase == Phase.QUESTIONS:
        # n_questions is gold_claims()'s annotation; the plugin knows only the model's fields.
        claims = claims.filter(n_questions__gte=bar.min_qa_pairs)  # type: ignore[misc]
    return claims


def _balanced(claims: list[Claim], n: int, rng: random.Random) -> list[Claim]:
    """n claims taken in turn from each label's shuffled list, then shuffled: label counts
    differ by at most one where the pool allows, and the order gives nothing away."""
    by_label: dict[str | None, list[Claim]] = defaultdict(list)
    for claim in claims:
        by_label[claim.label].append(claim)
    for group in by_label.values():
        rng.shuffle(group)
    # label is nullable in the schema; key=str keeps the order of real labels unchanged.
    labels = sorted(by_label, key=str)
    rng.shuffle(labels)
    chosen: list[Claim] = []
    while len(chosen) < n and any(by_label.values()):
        for label in labels:
            if by_label[label] and len(chosen) < n:
                chosen.append(by_label[label].pop())
    rng.shuffle(chosen)
    return chosen


def pool_problem(phase: int, bar: QualificationThresholds | None = None) -> str:
    """Why a phase's training cannot start (for the trainee and the manager), or ""."""
    bar = bar or QualificationThresholds.current()
    claims = list(pool(phase, bar))
    needed = bar.practice_items + bar.items_per_phase
    if len(claims) < needed:
        return (
            f"Training for phase {phase} needs {needed} reference claims in its pool and has "
            f"{len(claims)}; a manager must import more gold claims (a dataset file)."
        )
    if phase in VERDICT_PHASES:
        judged = _balanced(claims, bar.items_per_phase, random.Random(0))
        top = max(Counter(c.label for c in judged).values())
        if top / bar.items_per_phase >= bar.verdict_accuracy:
            return (
                f"Training for phase {phase} cannot judge verdicts: its pool has too few "
                "claims of each label, so one verdict given to every claim would reach the "
                "bar; a manager must import gold claims with more varied labels."
            )
    return ""


@transaction.atomic
def draw(annotator: User, phase: int) -> list[TrainingDraw]:
    """The trainee's sequence in a phase, drawn on first use and kept."""
    if phase not in TRAINING_PHASES:
        raise TrainingRefused(f"there is no training for phase {phase}")
    # Two tabs opening the training at once must not draw twice.
    User.objects.select_for_update().filter(pk=annotator.pk).first()
    drawn = list(
        TrainingDraw.objects.filter(annotator=annotator, phase=phase).select_related("claim")
    )
    if drawn:
        return drawn
    bar = QualificationThresholds.current()
    if problem := pool_problem(phase, bar):
        raise TrainingRefused(problem)
    claims = list(pool(phase, bar))
    judged = _balanced(claims, bar.items_per_phase, _random)
    taken = {c.pk for c in judged}
    rest = [c for c in claims if c.pk not in taken]
    practice = _balanced(rest, bar.practice_items, _random)
    rows = [
        TrainingDraw(annotator=annotator, phase=phase, position=n, claim=claim, judged=is_judged)
        for n, (claim, is_judged) in enumerate(
            [(c, False) for c in practice] + [(c, True) for c in judged]
        )
    ]
    return TrainingDraw.objects.bulk_create(rows)


def next_item(annotator: User, phase: int) -> TrainingDraw | None:
    """The first claim of the trainee's draw not answered yet; None when all are."""
    answered = TrainingAnswer.objects.filter(
        annotator=annotator, phase=phase, claim=OuterRef("claim")
    )
    return (
        TrainingDraw.objects.filter(annotator=annotator, phase=phase)
        .exclude(Exists(answered))
        .select_related("claim")
        .order_by("position")
        .first()
    )


def next_training_claim(annotator: User, phase: int) -> Claim | None:
    item = next_item(annotator, phase)
    return item.claim if item else None


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


def gold_pairs(claim: Claim) -> list[dict[str, Any]]:
    evidence = claim.dataset_evidence()
    if evidence is None:
        return []
    return [
        {"question": q.text, "answers": [a.text for a in q.answers.all()]}
        for q in evidence.questions.prefetch_related("answers")
    ]


def gold_strings(claim: Claim) -> list[str]:
    """The gold pairs as the official evaluation compares them (question + " " + answer)."""
    evidence = claim.dataset_evidence()
    if evidence is None:
        return []
    record = {
        "questions": [
            {
                "question": q.text,
                "answers": [
                    {
                        "answer": a.text,
                        "answer_type": a.answer_type,
                        "boolean_explanation": a.boolean_explanation or "",
                    }
                    for a in q.answers.all()
                ],
            }
            for q in evidence.questions.prefetch_related("answers")
        ]
    }
    return evidence_strings(record)


def score(phase: int, claim: Claim, answer: dict[str, Any]) -> dict[str, Any]:
    """How one training answer compares with the gold, measure by measure."""
    if phase == Phase.NORMALISATION:
        return {
            "types_f1": f1(answer.get("claim_types", []), claim.claim_types),
            "strategies_f1": f1(
                answer.get("fact_checking_strategies", []), claim.fact_checking_strategies
            ),
        }
    result: dict[str, Any] = {"verdict_correct": answer.get("verdict") == claim.label}
    if phase == Phase.QUESTIONS:
        given = [(p.get("question", ""), p.get("answer", "")) for p in answer.get("pairs", [])]
        judged = qa_pairs.judge_pairs(given, gold_strings(claim), meteor, claim=claim.text)
        result["qa_pairs"] = sum(1 for j in judged if j.real)
        result["pairs"] = [{"meteor": j.meteor, "real": j.real, "why": j.why} for j in judged]
    return result


@dataclass
class Comparison:
    """One row of the side-by-side feedback."""

    what: str
    yours: str
    gold: str
    same: bool
    note: str = ""


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
        given = answer.get("pairs", [])
        judged = training.score.get("pairs", [])
        for n in range(max(len(gold), len(given))):
            mine = given[n] if n < len(given) else None
            theirs = gold[n] if n < len(gold) else None
            verdict = judged[n] if n < len(judged) else None
            rows.append(
                Comparison(
                    f"Question {n + 1}",
                    f"{mine['question']} → {mine.get('answer', '')}" if mine else "—",
                    f"{theirs['question']} → {' / '.join(theirs['answers'])}" if theirs else "—",
                    # Wording differs by nature: a pair is green when it counted as real.
                    bool(verdict and verdict["real"]),
                    (
                        ("Counted: " if verdict["real"] else "Not counted: ") + verdict["why"]
                        if verdict
                        else "No pair of yours here."
                    ),
                )
            )
    verdict = answer.get("verdict", "")
    rows.append(Comparison("Verdict", verdict or "—", claim.label or "—", verdict == claim.label))
    return rows


@dataclass
class Standing:
    """Where an annotator stands in one phase's training."""

    phase: int
    practised: int
    practice: int
    answered: int
    needed: int
    measures: dict[str, float]
    passed: bool | None  # None until every judged claim is answered
    problem: str = ""  # why the training cannot start, if it cannot
    answers: list[TrainingAnswer] = field(default_factory=list)

    @property
    def labelled(self) -> list[tuple[str, float]]:
        return [(MEASURE_LABELS[name], value) for name, value in self.measures.items()]


def standing(annotator: User, phase: int, *, explain: bool = False) -> Standing:
    """The annotator's training figures in a phase: the judged items of their draw only.

    `explain` also says why a training that has no draw yet cannot start (it reads the whole
    pool, so only the trainee's own page asks).
    """
    bar = QualificationThresholds.current()
    drawn = list(TrainingDraw.objects.filter(annotator=annotator, phase=phase))
    answers = {
        a.claim_id: a
        for a in TrainingAnswer.objects.filter(annotator=annotator, phase=phase).select_related(
            "claim"
        )
    }
    judged = [answers[d.claim_id].score for d in drawn if d.judged and d.claim_id in answers]
    n = len(judged)
    needed = sum(1 for d in drawn if d.judged) if drawn else bar.items_per_phase
    practice = sum(1 for d in drawn if not d.judged) if drawn else bar.practice_items
    practised = sum(1 for d in drawn if not d.judged and d.claim_id in answers)

    def mean(key: str) -> float:
        return sum(float(s.get(key, 0)) for s in judged) / n if n else 0.0

    if phase == Phase.NORMALISATION:
        measures = {"types_f1": mean("types_f1"), "strategies_f1": mean("strategies_f1")}
        ok = min(measures.values()) >= bar.type_strategy_f1
    else:
        measures = {"verdict_accuracy": mean("verdict_correct")}
        ok = measures["verdict_accuracy"] >= bar.verdict_accuracy
        if phase == Phase.QUESTIONS:
            measures["real_qa_pairs"] = mean("qa_pairs")
            ok = ok and measures["real_qa_pairs"] >= bar.min_qa_pairs
    complete = bool(drawn) and n >= needed
    order = {d.claim_id: d.position for d in drawn}
    return Standing(
        phase,
        practised,
        practice,
        n,
        needed,
        measures,
        ok if complete else None,
        problem=pool_problem(phase, bar) if explain and not drawn else "",
        answers=sorted(answers.values(), key=lambda a: order.get(a.claim_id, 0)),
    )


@transaction.atomic
def hand_in(annotator: User, phase: int, claim: Claim, answer: dict[str, Any]) -> TrainingAnswer:
    """Record a training answer on the trainee's next drawn claim; qualify on a pass.

    Only the next claim of the trainee's own draw is accepted: answering another gold claim
    (or skipping ahead) is refused, so the trainee cannot choose which items count.
    """
    drawn = draw(annotator, phase)
    earlier = TrainingAnswer.objects.filter(annotator=annotator, phase=phase, claim=claim).first()
    if earlier:
        # A second click on the same claim: the first answer stands.
        return earlier
    if claim.pk not in {d.claim_id for d in drawn}:
        raise TrainingRefused(
            f"Claim {claim.pk} is not one of the training claims drawn for you in phase "
            f"{phase}; answer the claim the training page shows."
        )
    item = next_item(annotator, phase)
    if item is None or item.claim_id != claim.pk:
        raise TrainingRefused(
            f"Answer your phase {phase} training claims in the order given: claim "
            f"{item.claim_id if item else '?'} comes before claim {claim.pk}."
        )
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


def grant(user: User, phases: list[int], manager: User, reason: str = "") -> list[int]:
    """The phases an account may take after a manager's change, checking training waivers.

    Every path by which a manager adds phases (bulk creation, the account page, the
    stuck-work list) comes through here. A training phase (P1-P3) the account has not passed
    is added only as a waiver with a reason; each waiver is audited per person and phase.
    """
    current = set(user.qualified_phases) if user.pk else set()
    added = sorted(int(p) for p in set(phases) - current if int(p) in TRAINING_PHASES)
    waived = [p for p in added if not (user.pk and standing(user, p).passed)]
    reason = (reason or "").strip()
    if waived and len(reason) < MIN_WAIVER_REASON:
        raise TrainingRefused(
            f"{user.username} has not passed training for phase "
            f"{', '.join(map(str, waived))}: give a reason for waiving it "
            f"(at least {MIN_WAIVER_REASON} characters), or let them train."
        )
    for p in waived:
        audit(
            manager,
            "qualification",
            f"waived phase {p} training for {user.username}: {reason}",
            user=user.username,
            phase=p,
            reason=reason,
        )
    return sorted({int(p) for p in phases})


def set_thresholds(manager: User, **values: Any) -> QualificationThresholds:
    thresholds = QualificationThresholds.objects.create(changed_by=manager, **values)
    audit(manager, "qualification", f"set qualification thresholds: {thresholds}", **values)
    return thresholds


def training_overview() -> list[tuple[User, list[Standing]]]:
    """Every annotator with their standing in each training phase (the manager's page)."""
    people = User.objects.filter(
        Q(role=User.Role.ANNOTATOR) | Q(training_draws__isnull=False)
    ).distinct()
    return [
        (person, [standing(person, p) for p in TRAINING_PHASES])
        for person in people.order_by("username")
    ]


def trainee_record(person: User) -> list[tuple[Standing, list[tuple[TrainingAnswer, list[Any]]]]]:
    """Per phase: the standing, and each answer with its side-by-side rows (manager page)."""
    record = []
    for p in TRAINING_PHASES:
        result = standing(person, p)
        record.append((result, [(a, feedback(a)) for a in result.answers]))
    return record
