from django import forms
from django.conf import settings

from annotation.models import Batch
from exports.models import ExportJob, ScoringJob
from exports.splits import SPLIT_CHOICES


class ExportJobForm(forms.ModelForm):
    class Meta:
        model = ExportJob
        fields = ["split", "fmt", "batch", "since", "until"]
        labels = {"split": "Split", "since": "Claims dated from", "until": "to"}
        help_texts = {
            "split": "Temporal split by claim date; empty for every accepted claim.",
            "since": "Inclusive. Leave empty to start from the earliest claim.",
            "until": "Inclusive. Leave empty to include the latest claim.",
        }
        widgets = {
            "since": forms.DateInput(attrs={"type": "date"}),
            "until": forms.DateInput(attrs={"type": "date"}),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["batch"].queryset = Batch.objects.order_by("-created_at")
        self.fields["batch"].required = False
        self.fields["split"].required = False
        self.fields["split"].choices = [("", "all accepted claims"), *SPLIT_CHOICES]
        self.fields["batch"].empty_label = "any batch"

    def clean(self):
        data = super().clean()
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            raise forms.ValidationError("The first claim date is after the last.", code="range")
        return data


class ScoringForm(forms.Form):
    predictions = forms.FileField(
        help_text="One prediction per reference claim, in order: 2023 JSON (like dev.json), "
        "2024 shared-task JSON (claim_id, pred_label, evidence) or 2025 shared-task CSV (id, "
        "claim, evi, label, split). The form is recognised and scored by its official rules."
    )
    references = forms.FileField(
        required=False,
        help_text="The gold file: 2023 JSON such as dev.json (JSON or JSON lines), or a 2025 "
        "gold CSV.",
    )
    reference_export = forms.ModelChoiceField(
        queryset=ExportJob.objects.none(),
        required=False,
        label="…or a finished export",
        empty_label="(none)",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reference_export"].queryset = ExportJob.objects.filter(
            status=ExportJob.Status.DONE
        ).order_by("-created_at")

    def clean(self):
        data = super().clean()
        if bool(data.get("references")) == bool(data.get("reference_export")):
            raise forms.ValidationError(
                "Give the references as a file or as a finished export (one of the two).",
                code="references",
            )
        limit = settings.SCORING_MAX_UPLOAD_MB * 1024 * 1024
        for name in ("predictions", "references"):
            upload = data.get(name)
            if upload is not None and upload.size > limit:
                self.add_error(
                    name, f"The file is larger than {settings.SCORING_MAX_UPLOAD_MB} MB."
                )
        return data

    def create_job(self, user) -> ScoringJob:
        data = self.cleaned_data
        job = ScoringJob(
            requested_by=user,
            predictions_name=data["predictions"].name[:255],
            reference_export=data.get("reference_export"),
        )
        job.predictions.save(data["predictions"].name, data["predictions"], save=False)
        if data.get("references"):
            job.references_name = data["references"].name[:255]
            job.references.save(data["references"].name, data["references"], save=False)
        job.save()
        return job


class StatisticsForm(forms.Form):
    export = forms.ModelChoiceField(
        queryset=ExportJob.objects.none(),
        required=False,
        label="Dataset",
        empty_label="Accepted claims now (live)",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["export"].queryset = ExportJob.objects.filter(
            status=ExportJob.Status.DONE, fmt__in=ExportJob.DATASET_FORMATS
        ).order_by("-created_at")
