"""The task API's shapes for the blind checks (P3, P5): what a checker hands in and gets back.

annotation's task API finds them through annotation/phases.py (registered in review/apps.py);
the rules they apply are review/checks.py's.
"""

from __future__ import annotations

from rest_framework import serializers

from annotation.serializers import nested_errors
from annotation.submissions import FlagData, QualityVerdict
from annotation.vocabulary import Phase
from review.checks import check_problems, shown_positions, verdict_choices
from review.models import ProblemFlag, QualityCheck


class FlagResultSerializer(serializers.ModelSerializer):
    question_position = serializers.SerializerMethodField()
    answer_position = serializers.SerializerMethodField()

    class Meta:
        model = ProblemFlag
        fields = ["code", "question_position", "answer_position"]
        read_only_fields = fields

    def get_question_position(self, flag: ProblemFlag) -> int | None:
        question = flag.answer.question if flag.answer is not None else flag.question
        return question.position if question else None

    def get_answer_position(self, flag: ProblemFlag) -> int | None:
        return flag.answer.position if flag.answer is not None else None


class QualityCheckResultSerializer(serializers.ModelSerializer):
    """P3/P5: the checker's own verdict and flags."""

    # The claim's new state stays out: accepted or disputed would reveal the P2 verdict.

    flags = FlagResultSerializer(many=True, read_only=True)

    class Meta:
        model = QualityCheck
        fields = ["id", "verdict", "unreadable", "justification", "flags"]
        read_only_fields = fields


class FlagInputSerializer(serializers.Serializer):
    code = serializers.ChoiceField(choices=ProblemFlag.Code.choices)
    question_position = serializers.IntegerField(min_value=0, allow_null=True, default=None)
    answer_position = serializers.IntegerField(min_value=0, allow_null=True, default=None)


class QualityCheckSubmitSerializer(serializers.Serializer):
    """P3: a blind verdict and justification, or "unreadable"; problem flags.

    A flag names its target by position: none for the claim, question_position for a
    question, both for an answer.
    """

    # The rules are review/checks.py's, checked against the pairs shown (given in the
    # context as "evidence"); their problems become errors at their field path.

    verdict = serializers.ChoiceField(
        choices=verdict_choices(Phase.QUALITY_CHECK), allow_null=True, default=None
    )
    justification = serializers.CharField(allow_blank=True, default="")
    unreadable = serializers.BooleanField(default=False)
    flags = FlagInputSerializer(many=True, default=list)

    def validate(self, attrs: dict) -> dict:
        task = self.context.get("task")
        phase = task.phase if task is not None else Phase.QUALITY_CHECK
        shown = shown_positions(self.context.get("evidence"))
        problems = check_problems(self._verdict(attrs), phase, shown)
        if problems:
            raise serializers.ValidationError(nested_errors(problems))
        return attrs

    def to_workflow(self) -> QualityVerdict:
        return self._verdict(self.validated_data)

    @staticmethod
    def _verdict(data: dict) -> QualityVerdict:
        return QualityVerdict(
            verdict=data["verdict"],
            justification=data["justification"],
            unreadable=data["unreadable"],
            flags=[FlagData(**flag) for flag in data["flags"]],
        )


class PostControlSubmitSerializer(QualityCheckSubmitSerializer):
    """P5: as P3, and "Claim too vague" is also a verdict."""

    verdict = serializers.ChoiceField(
        choices=verdict_choices(Phase.POST_CONTROL), allow_null=True, default=None
    )
