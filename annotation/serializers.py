"""The task API's shapes: what each phase may see, and the payloads each phase hands in.

Output: one serializer per kind of task page, each listing exactly the fields its phase may
see, so a field added to a model never reaches a blind phase (P3, P5) by default.
Input: serializers check the form of a submission (choices, dates, required parts) and turn
it into the workflow's dataclasses; what a submission does is the workflow's business.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer

from annotation.blindness import ADDRESS_FIELDS, BLIND_CLAIM_FIELDS, blind_claim, shown_addresses
from annotation.evidence import blocking, evidence_problems
from annotation.models import (
    Answer,
    Article,
    Claim,
    EvidenceRound,
    Question,
    Task,
)
from annotation.normalisation import normalisation_problems, skip_problems
from annotation.phases import registered
from annotation.submissions import (
    AnswerData,
    EvidenceData,
    NormalisedClaim,
    QuestionData,
)
from annotation.usernames import normalised
from annotation.vocabulary import (
    NO_ANSWER_TEXT,
    AnswerType,
    Phase,
    SourceMedium,
    Verdict,
    canonical_claim_type,
    canonical_strategy,
)


def nested_errors(problems) -> dict:
    """Problems at dotted paths ("flags.0.code") as DRF's nested errors.

    A path may be both a leaf and a parent (a problem with a whole question and another with
    one of its answers): the leaf's messages then sit under the parent's "non_field_errors",
    as DRF itself reports problems of a whole object, so no message is dropped.
    """
    errors: dict = {}
    for problem in problems:
        *parents, leaf = problem.path.split(".")
        node = errors
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {} if child is None else {"non_field_errors": child}
            node = child
        existing = node.setdefault(leaf, [])
        if isinstance(existing, dict):
            existing = existing.setdefault("non_field_errors", [])
        existing.append(problem.message)
    return errors


# --- What a task shows ----------------------------------------------------------------


class TaskSummarySerializer(serializers.ModelSerializer):
    """A line of "my tasks": no article, claim or evidence."""

    class Meta:
        model = Task
        fields = [
            "id",
            "phase",
            "status",
            "draft_version",
            "assigned_at",
            "lease_expires_at",
            "submitted_at",
        ]
        read_only_fields = fields


class AnswerSerializer(serializers.ModelSerializer):
    class Meta:
        model = Answer
        fields = [
            "position",
            "text",
            "answer_type",
            "boolean_explanation",
            "source_url",
            "source_medium",
        ]
        read_only_fields = fields


class QuestionSerializer(serializers.ModelSerializer):
    answers = AnswerSerializer(many=True, read_only=True)

    class Meta:
        model = Question
        fields = ["position", "text", "answers"]
        read_only_fields = fields


def _questions(evidence: EvidenceRound | None) -> list[dict]:
    if evidence is None:
        return []
    questions = evidence.questions.prefetch_related("answers")
    # many=True gives a ReturnList; the stub types .data as a ReturnDict.
    return QuestionSerializer(questions, many=True).data  # type: ignore[return-value]


class ArticleSerializer(serializers.ModelSerializer):
    """The fact-checking article and its ClaimReview metadata, for P1."""

    class Meta:
        model = Article
        fields = [
            "id",
            "url",
            "title",
            "publisher",
            "published_on",
            "claimreview_claim",
            "claimreview_claimant",
            "claimreview_date",
            "claimreview_rating",
        ]
        read_only_fields = fields


class ArticleLinkSerializer(serializers.ModelSerializer):
    class Meta:
        model = Article
        fields = ["url"]
        read_only_fields = fields


class ClaimSerializer(serializers.ModelSerializer):
    """A claim and its metadata as P2 and P4 see it (the fact-checker's label stays out)."""

    class Meta:
        model = Claim
        fields = [
            "id",
            "text",
            "claim_date",
            "speaker",
            "reporting_source",
            "original_claim_url",
            "media_url",
            "image_transcription",
            "location_iso_code",
            "claim_types",
            "fact_checking_strategies",
        ]
        read_only_fields = fields


class BlindClaimSerializer(serializers.ModelSerializer):
    """What the blind phases (P3, P5) may know of a claim: annotation/blindness.py says."""

    class Meta:
        model = Claim
        fields = list(BLIND_CLAIM_FIELDS)
        read_only_fields = fields

    def to_representation(self, claim: Claim) -> dict:
        shown = blind_claim(claim)
        data = super().to_representation(claim)
        return {**data, **{name: shown[name] for name in ADDRESS_FIELDS}}


def phase_field(*phases: Phase) -> serializers.IntegerField:
    """The task page's phase, in the schema as exactly the phases that page is for: the
    pages' oneOf then never fits two shapes (a P4 page is no P2 page with extra fields)."""

    @extend_schema_field(
        {"type": "integer", "enum": [int(p) for p in phases], "readOnly": True},
        component_name=None,
    )
    class PhaseField(serializers.IntegerField):
        pass

    return PhaseField(read_only=True)


class _TaskPageSerializer(serializers.ModelSerializer):
    class Meta:
        model = Task
        fields = ["id", "phase", "status", "draft", "draft_version", "lease_expires_at"]
        read_only_fields = fields


class NormalisationTaskSerializer(_TaskPageSerializer):
    """P1: the article to split into claims."""

    phase = phase_field(Phase.NORMALISATION)
    article = ArticleSerializer(read_only=True)

    class Meta(_TaskPageSerializer.Meta):
        fields = [*_TaskPageSerializer.Meta.fields, "article"]
        read_only_fields = fields


class EvidenceTaskSerializer(_TaskPageSerializer):
    """P2: the claim to find evidence for, and the article it came from."""

    phase = phase_field(Phase.QUESTIONS)
    claim = ClaimSerializer(read_only=True)
    article = ArticleLinkSerializer(read_only=True)

    class Meta(_TaskPageSerializer.Meta):
        fields = [*_TaskPageSerializer.Meta.fields, "claim", "article"]
        read_only_fields = fields


class DisputeTaskSerializer(EvidenceTaskSerializer):
    """P4: as P2, plus the existing question-answer pairs to revise."""

    # The pairs come in the context as "evidence" (the view knows which round is shown).

    phase = phase_field(Phase.DISPUTE)
    questions = serializers.SerializerMethodField()

    class Meta(EvidenceTaskSerializer.Meta):
        fields = [*EvidenceTaskSerializer.Meta.fields, "questions"]
        read_only_fields = fields

    @extend_schema_field(QuestionSerializer(many=True))
    def get_questions(self, task: Task) -> list[dict]:
        return _questions(self.context.get("evidence"))


class QualityCheckTaskSerializer(_TaskPageSerializer):
    """P3 and P5 (blind): the claim, its metadata and the pairs to check, nothing else."""

    # The pairs come in the context as "evidence" (the view knows which round is shown).

    phase = phase_field(Phase.QUALITY_CHECK, Phase.POST_CONTROL)
    claim = BlindClaimSerializer(read_only=True)
    questions = serializers.SerializerMethodField()

    class Meta(_TaskPageSerializer.Meta):
        fields = [*_TaskPageSerializer.Meta.fields, "claim", "questions"]
        read_only_fields = fields

    @extend_schema_field(QuestionSerializer(many=True))
    def get_questions(self, task: Task) -> list[dict]:
        questions = _questions(self.context.get("evidence"))
        # Sources that may reveal the fact-check (canonical test) are hidden, as on the page.
        answers = [answer for question in questions for answer in question["answers"]]
        shown = shown_addresses([a["source_url"] for a in answers], task.article.url)
        for answer, source in zip(answers, shown, strict=True):
            answer["source_url"] = source
        return questions


# --- What a submission produced ---------------------------------------------------------


class NormalisedClaimResultSerializer(serializers.ModelSerializer):
    class Meta:
        model = Claim
        fields = ["id", "position", "text", "state", "exclusion_reason"]
        read_only_fields = fields


class NormalisationResultSerializer(serializers.Serializer):
    """P1: the article's new state and the claims made from it (if any)."""

    article_state = serializers.ChoiceField(choices=Article.State.choices, read_only=True)
    skip_reason = serializers.CharField(read_only=True)
    claims = NormalisedClaimResultSerializer(many=True, read_only=True)


class EvidenceRoundResultSerializer(serializers.ModelSerializer):
    questions = QuestionSerializer(many=True, read_only=True)

    class Meta:
        model = EvidenceRound
        fields = ["id", "verdict", "claim_correction", "pairs_support_verdict", "questions"]
        read_only_fields = fields


def result_serializers() -> list[type[serializers.Serializer]]:
    """Every shape a hand-in's result can take, for the schema (read once every phase is
    registered)."""
    return list(dict.fromkeys(p.result_serializer for p in registered().values()))


class SubmittedTaskSerializer(TaskSummarySerializer):
    """The task after submission, with what it produced."""

    # "result" comes in the context already shaped by one of the result serializers.

    result = serializers.SerializerMethodField()

    class Meta(TaskSummarySerializer.Meta):
        fields = [*TaskSummarySerializer.Meta.fields, "result"]
        read_only_fields = fields

    @extend_schema_field(
        PolymorphicProxySerializer(
            component_name="SubmissionResult",
            serializers=result_serializers,
            resource_type_field_name=None,
        )
    )
    def get_result(self, task: Task) -> dict:
        return self.context["result"]


# --- What a task takes ------------------------------------------------------------------


class NextTaskSerializer(serializers.Serializer):
    phase = serializers.ChoiceField(choices=Phase.choices)


class TaskFilterSerializer(serializers.Serializer):
    phase = serializers.ChoiceField(choices=Phase.choices, required=False)
    status = serializers.ChoiceField(choices=Task.Status.choices, required=False)


class DraftSerializer(serializers.Serializer):
    draft = serializers.DictField(
        help_text="The unsent work, in whatever shape the page keeps. Like every text the "
        "API takes, no NUL, half surrogate pair, control or direction-override character, "
        "text over 100,000 characters or nesting over 32 levels anywhere in it (400)."
    )
    version = serializers.IntegerField(
        min_value=0, help_text="The draft_version this draft was based on."
    )
    tab = serializers.CharField(
        max_length=64,
        required=False,
        default="",
        allow_blank=True,
        help_text="Which client or window sends it, so its revisions can be told apart.",
    )


class SavedDraftSerializer(serializers.Serializer):
    draft_version = serializers.IntegerField()
    revision = serializers.IntegerField(help_text="The stored revision of this draft.")


class StaleDraftSerializer(serializers.Serializer):
    detail = serializers.CharField()
    draft_version = serializers.IntegerField(help_text="The latest saved version.")
    status = serializers.ChoiceField(choices=Task.Status.choices)
    draft = serializers.JSONField(help_text="The content of the latest saved version.")
    saved_at = serializers.DateTimeField(
        allow_null=True, help_text="When the latest version was saved (or handed in)."
    )
    revision = serializers.IntegerField(
        required=False, help_text="The stored revision that keeps what was sent."
    )


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()


class CredentialsSerializer(AuthTokenSerializer):
    """What POST /api/v1/auth/token/ takes. The username is read in NFKC form, as the site's
    sign-in reads it, so a name signs in the same way everywhere (annotation/usernames.py)."""

    # Not blank, and not only spaces: the schema says so too (minLength and pattern).
    username = serializers.CharField(
        write_only=True,
        min_length=1,
        max_length=150,
        validators=[RegexValidator(r"\S", message="Give a username.")],
    )
    password = serializers.CharField(
        write_only=True,
        trim_whitespace=False,
        min_length=1,
        max_length=4096,
        style={"input_type": "password"},
    )
    # the answer's field (TokenSerializer), not the request's; DRF removes a field set to None
    token = None  # type: ignore[assignment]

    def validate_username(self, username: str) -> str:
        return normalised(username)


class TokenSerializer(serializers.Serializer):
    """What POST /api/v1/auth/token/ answers: send the token as "Authorization: Token <token>"."""

    token = serializers.CharField()
    expiry = serializers.DateTimeField(help_text="When the token stops working if unused.")


class IsoDateField(serializers.DateField):
    """A date written exactly YYYY-MM-DD (the dataset's form), nothing looser."""

    default_error_messages = {"invalid": "Write the date as YYYY-MM-DD."}
    _form = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(input_formats=["%Y-%m-%d"], **kwargs)

    def to_internal_value(self, value: Any) -> date:
        if not isinstance(value, str) or not self._form.fullmatch(value):
            self.fail("invalid")
        return super().to_internal_value(value)


def _optional_text(**kwargs: Any) -> serializers.CharField:
    # The dataset tells a missing value (null) from an empty one (""), so both are kept.
    return serializers.CharField(allow_null=True, allow_blank=True, default=None, **kwargs)


def _canonical_list(
    values: list[str], canonical: Callable[[str], str | None], kind: str
) -> list[str]:
    found, unknown = [], []
    for value in values:
        name = canonical(value)
        if name is None:
            unknown.append(value)
        elif name not in found:
            found.append(name)
    if unknown:
        raise serializers.ValidationError(
            [f"{value!r} is not a {kind}." for value in unknown], code="invalid_choice"
        )
    return found


class NormalisedClaimSerializer(serializers.Serializer):
    text = serializers.CharField()
    fact_checker_label = serializers.ChoiceField(choices=Verdict.choices)
    claim_date = IsoDateField()
    claim_types = serializers.ListField(child=serializers.CharField(), allow_empty=False)
    fact_checking_strategies = serializers.ListField(
        child=serializers.CharField(), allow_empty=False
    )
    speaker = _optional_text()
    reporting_source = _optional_text()
    original_claim_url = _optional_text()
    media_url = serializers.CharField(allow_blank=True, default="")
    image_transcription = serializers.CharField(allow_blank=True, default="")
    location_iso_code = serializers.CharField(
        allow_null=True, allow_blank=True, default=None, help_text="ISO 3166-1 alpha-2, e.g. GB."
    )

    def validate_claim_types(self, values: list[str]) -> list[str]:
        return _canonical_list(values, canonical_claim_type, "claim type")

    def validate_fact_checking_strategies(self, values: list[str]) -> list[str]:
        return _canonical_list(values, canonical_strategy, "fact-checking strategy")

    def validate_location_iso_code(self, value: str | None) -> str | None:
        return value.strip().upper() or None if value else None


class SkipSerializer(serializers.Serializer):
    reason = serializers.ChoiceField(choices=Article.SkipReason.choices)
    note = serializers.CharField(allow_blank=True, default="")

    def validate(self, attrs: dict) -> dict:
        if problems := skip_problems(attrs["reason"], attrs["note"]):
            raise serializers.ValidationError({p.path: p.message for p in problems})
        return attrs


class NormalisationSubmitSerializer(serializers.Serializer):
    """P1: the claims split from the article, or a report that the article is unusable."""

    claims = NormalisedClaimSerializer(many=True, required=False, allow_empty=False)
    skip = SkipSerializer(required=False)

    def validate(self, attrs: dict) -> dict:
        if ("claims" in attrs) == ("skip" in attrs):
            raise serializers.ValidationError(
                "Send either the claims or a skip report, not both.", code="claims_or_skip"
            )
        task = self.context.get("task")
        if "claims" in attrs and task is not None:
            # The P1 rules (annotation/normalisation.py) are the same as on the screen.
            claims = [NormalisedClaim(**claim) for claim in attrs["claims"]]
            problems = normalisation_problems(claims, task.article.url)
            if problems:
                raise serializers.ValidationError(nested_errors(problems))
        return attrs

    def to_workflow(self) -> list[NormalisedClaim]:
        return [NormalisedClaim(**claim) for claim in self.validated_data["claims"]]


class AnswerInputSerializer(serializers.Serializer):
    text = serializers.CharField(
        allow_blank=True, default="", help_text=f"Unanswerable: left empty, {NO_ANSWER_TEXT!r}."
    )
    answer_type = serializers.ChoiceField(choices=AnswerType.choices)
    source_url = serializers.CharField(allow_blank=True, default="")
    source_medium = serializers.ChoiceField(choices=SourceMedium.choices, default="")
    boolean_explanation = _optional_text(help_text="Required for Boolean answers.")


class QuestionInputSerializer(serializers.Serializer):
    text = serializers.CharField()
    answers = AnswerInputSerializer(many=True, allow_empty=False)


class EvidenceSubmitSerializer(serializers.Serializer):
    """P2 and P4: the question-answer pairs and the verdict they lead to."""

    questions = QuestionInputSerializer(many=True, allow_empty=False)
    verdict = serializers.ChoiceField(choices=Verdict.choices)
    claim_correction = serializers.CharField(allow_blank=True, default="")
    pairs_support_verdict = serializers.BooleanField(allow_null=True, default=None)

    def validate(self, attrs: dict) -> dict:
        # The evidence rules (annotation/evidence.py) are the same as on the screen; their
        # blocking problems become field errors at their path.
        task = self.context.get("task")
        if task is not None and task.claim_id:
            problems = blocking(
                evidence_problems(self._evidence(attrs), task.claim, phase=task.phase)
            )
            if problems:
                raise serializers.ValidationError(nested_errors(problems))
        return attrs

    def to_workflow(self) -> EvidenceData:
        return self._evidence(self.validated_data)

    @staticmethod
    def _evidence(data: dict) -> EvidenceData:
        return EvidenceData(
            questions=[
                QuestionData(text=q["text"], answers=[AnswerData(**a) for a in q["answers"]])
                for q in data["questions"]
            ],
            verdict=data["verdict"],
            claim_correction=data["claim_correction"],
            pairs_support_verdict=data["pairs_support_verdict"],
        )
