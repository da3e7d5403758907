"""Shapes of the researchers' API: claims as AVeriTeC records, export jobs, webhooks."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.models import Batch, Claim
from exports.dataset import claim_record
from exports.models import ExportJob, Webhook
from exports.splits import SplitBoundaries
from search_proxy.serializers import WebAddressField


class ClaimFilterSerializer(serializers.Serializer):
    """Query parameters of GET /api/v1/claims/."""

    state = serializers.ChoiceField(choices=Claim.State.choices, required=False)
    updated_since = serializers.DateTimeField(
        required=False, help_text="Only claims changed at or after this time (ISO 8601)."
    )


class ClaimRecordSerializer(serializers.ModelSerializer):
    """A claim with its AVeriTeC record, exactly as an export would write it."""

    split = serializers.SerializerMethodField()
    record = serializers.SerializerMethodField()

    class Meta:
        model = Claim
        fields = [
            "id",
            "state",
            "label",
            "claim_date",
            "split",
            "accepted_at",
            "updated_at",
            "record",
        ]

    def get_split(self, claim: Claim) -> str:
        # The context is the dict the view passes; the stub types it as a read-only Mapping.
        boundaries = self.context.setdefault("boundaries", SplitBoundaries.from_settings())  # type: ignore[attr-defined]
        return boundaries.split_of(claim.claim_date)

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_record(self, claim: Claim) -> dict[str, Any]:
        return claim_record(claim)


class ExportJobSerializer(serializers.ModelSerializer):
    format = serializers.ChoiceField(
        source="fmt", choices=ExportJob.Format.choices, default=ExportJob.Format.JSON
    )
    batch = serializers.PrimaryKeyRelatedField(
        queryset=Batch.objects.all(),
        required=False,
        allow_null=True,
        help_text="The id of an existing batch; an unknown one is refused (400).",
    )
    percent = serializers.IntegerField(read_only=True)
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = ExportJob
        fields = [
            "id",
            "split",
            "batch",
            "since",
            "until",
            "format",
            "status",
            "progress_done",
            "progress_total",
            "percent",
            "claims",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "download_url",
        ]
        extra_kwargs = {
            "since": {"help_text": "First claim date (inclusive); not after until (400)."},
            "until": {"help_text": "Last claim date (inclusive); not before since (400)."},
        }
        read_only_fields = [
            "status",
            "progress_done",
            "progress_total",
            "claims",
            "error",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def validate(self, data):
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            raise serializers.ValidationError({"until": "must not be before 'since'"})
        return data

    def get_download_url(self, job: ExportJob) -> str | None:
        if job.status != ExportJob.Status.DONE or not job.file_name:
            return None
        url = reverse("exports_api:export-job-download", args=[job.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request else url


class WebhookSerializer(serializers.ModelSerializer):
    url = WebAddressField(
        max_length=2000, help_text="A public http or https address that takes the POSTs."
    )
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=Webhook.Event.choices),
        allow_empty=False,
        min_length=1,
    )

    class Meta:
        model = Webhook
        fields = ["id", "url", "events", "is_active", "secret", "created_at"]
        read_only_fields = ["secret", "created_at"]

    def validate_url(self, url: str) -> str:
        from exports.webhooks import receiver_problem

        problem = receiver_problem(url)
        if problem:
            raise serializers.ValidationError(problem)
        return url

    def validate_events(self, events: list[str]) -> list[str]:
        return list(dict.fromkeys(events))

    def to_representation(self, webhook: Webhook) -> dict[str, Any]:
        data = super().to_representation(webhook)
        # The secret is shown when the webhook is created; afterwards only its end.
        if not self.context.get("show_secret"):
            data["secret"] = "…" + webhook.secret[-4:]
        return data
