"""A random workflow for the reporting tests: every task status, over about 80 days.

Rounds and checks are stored with objects.create, so the stored agreement ratings follow them
as they follow any hand-in (review/stored.py).
"""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import datetime, timedelta

from django.utils import timezone

from annotation.models import (
    Article,
    Batch,
    Claim,
    EvidenceRound,
    PhaseQuota,
    Question,
    Task,
    User,
)
from annotation.phases import PHASES
from annotation.vocabulary import Verdict
from review.models import CLAIM_FLAG_CODES, ProblemFlag, QualityCheck

VERDICTS = [v.value for v in Verdict]
HELD = (Task.Status.ASSIGNED, Task.Status.IN_PROGRESS)
ENDED = (Task.Status.EXPIRED, Task.Status.RELEASED, Task.Status.CANCELLED)


def random_workflow(rng: random.Random, n_articles: int, handed_in: float = 0.0) -> list[Batch]:
    """Articles, claims and tasks of every status over ~80 days, with rounds and checks;
    `handed_in` is the extra share of tasks handed in (agreement needs many verdicts)."""
    batches = [Batch.objects.create(name=f"batch {i}", kind=Batch.Kind.INTAKE) for i in range(2)]
    users = [
        User.objects.create(
            username=f"u{i:02d}",
            qualified_phases=sorted(rng.sample(PHASES, rng.randint(0, 5))),
            is_active=rng.random() > 0.1,
            role=User.Role.MANAGER if i == 0 else User.Role.ANNOTATOR,
        )
        for i in range(7)
    ]
    for user in rng.sample(users, 4):
        PhaseQuota.objects.create(annotator=user, phase=rng.randint(1, 5), limit=rng.randint(0, 4))
    now = timezone.now()

    def moment(days_back: int = 80) -> datetime:
        return now - timedelta(seconds=rng.randint(0, days_back * 86400))

    for i in range(n_articles):
        article = Article.objects.create(
            url=f"https://factcheck.example.org/{i}",
            normalized_url=f"factcheck.example.org/{i}",
            batch=rng.choice([*batches, None]),
            **rng.choice(
                [
                    {"state": Article.State.NORMALISED},
                    {"state": Article.State.SKIPPED, "skip_reason": Article.SkipReason.PAYWALL},
                ]
            ),
        )
        created = moment()
        claim = Claim.objects.create(
            article=article,
            text=f"Claim {i}",
            fact_checker_label=rng.choice(VERDICTS),
            claim_date=now.date(),
            state=rng.choice([Claim.State.QUESTIONS, Claim.State.POST_CONTROL]),
        )
        Claim.objects.filter(pk=claim.pk).update(created_at=created)
        people = rng.sample(users, rng.randint(1, 7))
        rounds: dict[int, list[EvidenceRound]] = defaultdict(list)
        for phase in [1, 2, 2, 3, 3, 4, 5][: rng.randint(1, 7)]:
            status = (
                Task.Status.SUBMITTED if rng.random() < handed_in else rng.choice(list(Task.Status))
            )
            annotator = people.pop() if people and status != Task.Status.POOLED else None
            if status == Task.Status.CANCELLED and rng.random() < 0.5:
                annotator = None
            if annotator is None and status != Task.Status.CANCELLED:
                status = Task.Status.POOLED
            opened = moment(70) if rng.random() < 0.8 else None
            submitted = None
            if status == Task.Status.SUBMITTED:
                base = opened or moment(70)
                # Some hand-ins under the speed trap, some far over it.
                submitted = base + timedelta(seconds=rng.choice([5, 23, 24, 25, 300, 4000]))
            task = Task.objects.create(
                phase=phase,
                article=article,
                claim=claim if phase > 1 else None,
                annotator=annotator,
                status=status,
                is_agreement_sample=len(rounds[phase]) == 1,
                created_at=moment(),
                opened_at=opened,
                article_loaded_at=opened if rng.random() < 0.7 else None,
                submitted_at=submitted,
            )
            if phase in (2, 4) and status == Task.Status.SUBMITTED:
                evidence = EvidenceRound.objects.create(
                    claim=claim,
                    task=task,
                    phase=phase,
                    verdict=rng.choice([*VERDICTS, None]),
                    is_agreement_sample=len(rounds[phase]) == 1,
                    submitted_at=submitted,
                )
                for q in range(rng.randint(0, 3)):
                    Question.objects.create(evidence_round=evidence, position=q, text=f"Q{q}?")
                rounds[phase].append(evidence)
            if phase in (3, 5) and status == Task.Status.SUBMITTED and rounds[phase - 1]:
                unreadable = rng.random() < 0.15
                check = QualityCheck.objects.create(
                    claim=claim,
                    task=task,
                    phase=phase,
                    evidence_round=rng.choice(rounds[phase - 1]),
                    verdict=None if unreadable else rng.choice(VERDICTS),
                    unreadable=unreadable,
                    is_agreement_sample=rng.random() < 0.5,
                    submitted_at=submitted,
                )
                for code in rng.sample(list(CLAIM_FLAG_CODES), rng.randint(0, 2)):
                    ProblemFlag.objects.create(quality_check=check, code=code)
    return batches
