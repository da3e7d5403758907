"""Quality-control rounds (blind P3 and P5) and the problem flags they raise."""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.vocabulary import CLAIM_TOO_VAGUE, Phase, Verdict

QUALITY_VERDICTS = [*Verdict.choices, (CLAIM_TOO_VAGUE, CLAIM_TOO_VAGUE)]


class QualityCheck(models.Model):
    """One annotator's blind verdict on a claim from its QA pairs alone (P3 or P5)."""

    claim = models.ForeignKey(
        "annotation.Claim", on_delete=models.CASCADE, related_name="quality_checks"
    )
    task = models.OneToOneField(
        "annotation.Task",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="quality_check",
    )
    phase = models.PositiveSmallIntegerField(
        choices=[
            (Phase.QUALITY_CHECK, Phase.QUALITY_CHECK.label),
            (Phase.POST_CONTROL, Phase.POST_CONTROL.label),
        ]
    )
    # The QA set that was shown; a P5 check looks at P4's pairs.
    evidence_round = models.ForeignKey(
        "annotation.EvidenceRound", on_delete=models.PROTECT, related_name="quality_checks"
    )
    verdict = models.CharField(max_length=40, choices=QUALITY_VERDICTS, null=True, blank=True)
    unreadable = models.BooleanField(default=False)
    justification = models.TextField(blank=True)
    is_agreement_sample = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["claim_id", "phase", "created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(phase__in=[3, 5]), name="quality_check_in_p3_or_p5"),
            models.CheckConstraint(
                condition=Q(unreadable=False) | Q(verdict__isnull=True),
                name="unreadable_has_no_verdict",
            ),
            models.CheckConstraint(
                condition=Q(phase=5) | ~Q(verdict=CLAIM_TOO_VAGUE),
                name="too_vague_only_in_post_control",
            ),
        ]

    def __str__(self) -> str:
        return f"P{self.phase} check of claim {self.claim_id}"


CLAIM_FLAG_CODES = ("claim_lacks_context", "claim_ambiguous", "claim_not_understandable")
QUESTION_FLAG_CODES = ("question_not_understandable", "question_unrelated")


class ProblemFlag(models.Model):
    """A problem a quality checker saw in the claim, one question or one answer."""

    class Code(models.TextChoices):
        # On the claim
        CLAIM_LACKS_CONTEXT = "claim_lacks_context", "claim lacks context"
        CLAIM_AMBIGUOUS = "claim_ambiguous", "claim is ambiguous"
        CLAIM_NOT_UNDERSTANDABLE = "claim_not_understandable", "claim is not understandable"
        # On a question
        QUESTION_NOT_UNDERSTANDABLE = "question_not_understandable", "question not understandable"
        QUESTION_UNRELATED = "question_unrelated", "question unrelated to the claim"
        # On an answer
        ANSWER_NOT_UNDERSTANDABLE = "answer_not_understandable", "answer not understandable"
        ANSWER_UNRELATED = "answer_unrelated", "answer unrelated to the question"
        ANSWER_WRONG_BUT_SUPPORTED = (
            "answer_wrong_but_supported",
            "answer seems wrong but the source supports it",
        )
        ANSWER_WRONG_UNSUPPORTED = (
            "answer_wrong_unsupported",
            "answer seems wrong and the source does not support it",
        )
        SOURCE_MAY_BE_BIASED = "source_may_be_biased", "source may be biased"

    quality_check = models.ForeignKey(QualityCheck, on_delete=models.CASCADE, related_name="flags")
    question = models.ForeignKey(
        "annotation.Question", null=True, blank=True, on_delete=models.CASCADE
    )
    answer = models.ForeignKey("annotation.Answer", null=True, blank=True, on_delete=models.CASCADE)
    code = models.CharField(max_length=40, choices=Code.choices)

    class Meta:
        constraints = [
            # Each code belongs to exactly one kind of target.
            models.CheckConstraint(
                condition=(
                    Q(code__in=CLAIM_FLAG_CODES) & Q(question__isnull=True) & Q(answer__isnull=True)
                )
                | (
                    Q(code__in=QUESTION_FLAG_CODES)
                    & Q(question__isnull=False)
                    & Q(answer__isnull=True)
                )
                | (
                    ~Q(code__in=CLAIM_FLAG_CODES + QUESTION_FLAG_CODES)
                    & Q(question__isnull=True)
                    & Q(answer__isnull=False)
                ),
                name="flag_code_matches_target",
            ),
            # Three partial constraints: NULL targets would make one plain constraint useless.
            models.UniqueConstraint(
                fields=["quality_check", "code"],
                condition=Q(question__isnull=True, answer__isnull=True),
                name="one_claim_flag_per_code",
            ),
            models.UniqueConstraint(
                fields=["quality_check", "question", "code"],
                condition=Q(question__isnull=False),
                name="one_question_flag_per_code",
            ),
            models.UniqueConstraint(
                fields=["quality_check", "answer", "code"],
                condition=Q(answer__isnull=False),
                name="one_answer_flag_per_code",
            ),
        ]

    def __str__(self) -> str:
        return self.get_code_display()


class AgreementRating(models.Model):
    """One verdict as a rating in one agreement comparison, stored as the work arrives.

    Derived data: review/stored.py rewrites a claim's rows in the transaction that stores one
    of its verdicts (from review/agreement.py's one definition, `verdict_ratings`), the
    reports aggregate these rows, and `rebuild_agreement` compares them with the raw rows.
    """

    comparison = models.CharField(max_length=20)
    claim = models.ForeignKey(
        "annotation.Claim", on_delete=models.CASCADE, related_name="agreement_ratings"
    )
    item = models.CharField(max_length=40)
    annotator = models.CharField(max_length=150, help_text="Username, or ? for an import.")
    label = models.CharField(max_length=40)

    class Meta:
        indexes = [models.Index(fields=["comparison", "claim"], name="rating_by_comparison")]

    def __str__(self) -> str:
        return f"{self.comparison} {self.item}: {self.annotator} said {self.label}"


class EvidenceScore(models.Model):
    """Hungarian METEOR between the two P2 QA sets of one double-annotated claim.

    Derived data, computed once per pair by a Celery job (review/tasks.py) after the second
    round is stored, and again when either round changes (`signature` is a digest of both QA
    sets as scored). The hand-in that queues the job stores the row without scores (pending),
    so the panel counts pending pairs from this table alone. The panel averages the scores,
    which equals the scorer's figure over the same claims: its q_only and q_and_a are means
    of per-claim scores.
    """

    claim = models.OneToOneField(
        "annotation.Claim", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    sample_round = models.ForeignKey(
        "annotation.EvidenceRound", null=True, on_delete=models.CASCADE, related_name="+"
    )
    own_round = models.ForeignKey(
        "annotation.EvidenceRound", null=True, on_delete=models.CASCADE, related_name="+"
    )
    signature = models.CharField(max_length=64, blank=True)
    q_only = models.FloatField(null=True)
    q_and_a = models.FloatField(null=True)
    scored_at = models.DateTimeField(null=True)

    def __str__(self) -> str:
        if self.q_only is None:
            return f"claim {self.claim_id}: METEOR pending"
        return f"claim {self.claim_id}: METEOR {self.q_only:.3f} / {self.q_and_a:.3f}"


class StoredReport(models.Model):
    """A report's figures for one filter, as computed at one version of their source rows.

    Derived data (review/stored.py): the verdict figures are stamped with a digest of the
    stored ratings (changes with any hand-in that changes one), progress with a time slot.
    A visit reads the row; a stale row is shown while a Celery job computes the new one.
    Kept as JSON text: jsonb would reorder the keys, which are the tables' row order.
    """

    kind = models.CharField(max_length=20)
    key = models.CharField(max_length=80, help_text="The filter: batch|start|end.")
    version = models.CharField(max_length=80)
    queued_version = models.CharField(max_length=80, blank=True)
    figures = models.TextField()
    computed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["kind", "key"], name="one_stored_report_per_filter")
        ]

    def __str__(self) -> str:
        return f"{self.kind} [{self.key}] at {self.version}"
