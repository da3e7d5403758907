"""Forms of the Phase 1 screen: one form per claim split from the article, plus the skip report."""

from __future__ import annotations

from django import forms
from django.urls import reverse_lazy
from django_countries import countries

from annotation.dates import DateNotUnderstood, earliest_date
from annotation.guidelines import CLAIM_TYPE_HELP, P1_FIELD_HELP, STRATEGY_HELP
from annotation.models import Article
from annotation.normalisation import (
    LIMITED_FIELDS,
    MAX_CLAIMS_PER_ARTICLE,
    normalisation_problems,
    skip_problems,
)
from annotation.submissions import TEXT_LIMITS, NormalisedClaim
from annotation.vocabulary import ClaimType, Strategy, Verdict

CLAIM_PREFIX = "claims"


def _choices_with_help(choices, help_texts) -> list[tuple[str, str]]:
    return [(value, label) for value, label in choices if value in help_texts]


class ClaimForm(forms.Form):
    text = forms.CharField(
        label="Normalised claim",
        # Wording hints follow the typing, not the next autosave.
        widget=forms.Textarea(
            attrs={
                "rows": 3,
                "hx-get": reverse_lazy("annotation:wording-hints"),
                "hx-trigger": "input changed delay:600ms",
                "hx-include": "closest [data-claim-card]",
                "hx-target": "next .warnings",
                "hx-swap": "innerHTML",
                "hx-sync": "this:replace",
            }
        ),
        error_messages={"required": "Write the claim."},
    )
    fact_checker_label = forms.ChoiceField(
        label="Fact-checker's verdict",
        choices=Verdict.choices,
        widget=forms.RadioSelect,
        error_messages={"required": "Choose the fact-checker's verdict."},
    )
    date_as_written = forms.CharField(label="Date as written", required=False)
    # Required, but may come from "date as written" instead (see clean()).
    claim_date = forms.DateField(
        label="Claim date", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    speaker = forms.CharField(required=False)
    reporting_source = forms.CharField(label="Reporting source", required=False)
    original_claim_url = forms.URLField(
        label="Original claim URL", required=False, assume_scheme="https"
    )
    media_url = forms.URLField(label="Media URL", required=False, assume_scheme="https")
    image_transcription = forms.CharField(
        label="Text in the image or video",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
    )
    # A picker by country name: a two-letter box silently cut "United" to "Un".
    location_iso_code = forms.CharField(
        label="Location",
        required=False,
        help_text="The country the claim is about or was made in; leave empty if none.",
        widget=forms.Select(choices=[("", "no particular country"), *countries]),
    )
    claim_types = forms.MultipleChoiceField(
        label="Claim types",
        choices=_choices_with_help(ClaimType.choices, CLAIM_TYPE_HELP),
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one claim type."},
    )
    fact_checking_strategies = forms.MultipleChoiceField(
        label="Fact-checking strategies",
        choices=_choices_with_help(Strategy.choices, STRATEGY_HELP),
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one strategy."},
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, field in self.fields.items():
            field.help_text = P1_FIELD_HELP.get(name, "")
        # The screen shows the rules' limits; normalisation_problems enforces them.
        for name, limit in LIMITED_FIELDS:
            self.fields[name].widget.attrs["maxlength"] = TEXT_LIMITS[limit]

    def clean_location_iso_code(self) -> str | None:
        return self.cleaned_data["location_iso_code"].strip().upper() or None

    def clean(self):
        data = super().clean()
        if data.get("claim_date") or "claim_date" in self.errors:
            return data
        written = (data.get("date_as_written") or "").strip()
        if not written:
            self.add_error("claim_date", "Give the date the claim was made.")
            return data
        try:
            data["claim_date"] = earliest_date(written)
        except DateNotUnderstood:
            self.add_error("date_as_written", "Could not read this date; pick it in the calendar.")
        return data

    def normalised_claim(self) -> NormalisedClaim:
        d = self.cleaned_data
        return NormalisedClaim(
            text=d["text"].strip(),
            fact_checker_label=d["fact_checker_label"],
            claim_date=d["claim_date"],
            claim_types=list(d["claim_types"]),
            fact_checking_strategies=list(d["fact_checking_strategies"]),
            speaker=d["speaker"].strip() or None,
            reporting_source=d["reporting_source"].strip() or None,
            original_claim_url=d["original_claim_url"] or None,
            media_url=d["media_url"],
            image_transcription=d["image_transcription"].strip(),
            location_iso_code=d["location_iso_code"],
        )


class BaseClaimFormSet(forms.BaseFormSet):
    """The claims of one article; what is allowed is annotation/normalisation.py's."""

    article_url = ""

    def clean(self) -> None:
        super().clean()
        if any(self.errors):
            return
        claims = [form.normalised_claim() for form in self.forms]
        for problem in normalisation_problems(claims, self.article_url):
            match problem.path.split("."):
                case ["claims", index, field]:
                    self.forms[int(index)].add_error(field, problem.message)
                case _:
                    raise forms.ValidationError(problem.message)


ClaimFormSet = forms.formset_factory(
    ClaimForm,
    formset=BaseClaimFormSet,
    extra=0,
    min_num=1,
    validate_min=True,
    max_num=MAX_CLAIMS_PER_ARTICLE,
    validate_max=True,
)


def claim_formset(
    data=None, initial: list[dict] | None = None, *, article_url: str = ""
) -> forms.BaseFormSet:
    formset = ClaimFormSet(data, initial=initial or [{}], prefix=CLAIM_PREFIX)
    formset.article_url = article_url  # type: ignore[attr-defined]  # read by the template
    return formset


def draft_from_post(post) -> dict:
    """The claims as typed so far, unvalidated, in screen order: what autosave keeps."""
    try:
        total = min(int(post.get(f"{CLAIM_PREFIX}-TOTAL_FORMS", 0)), MAX_CLAIMS_PER_ARTICLE)
    except ValueError:
        total = 0
    claims = []
    for index in range(total):
        prefix = f"{CLAIM_PREFIX}-{index}-"
        claim = {}
        for name, field in ClaimForm.base_fields.items():
            if isinstance(field, forms.MultipleChoiceField):
                claim[name] = post.getlist(prefix + name)
            else:
                claim[name] = post.get(prefix + name, "")
        claims.append(claim)
    return {"claims": claims}


def draft_summary(draft: dict) -> list[tuple[str, str, str]]:
    """A P1 draft as (label, value, form field) rows, for the conflict screen."""
    rows: list[tuple[str, str, str]] = []
    for i, claim in enumerate(draft.get("claims", [])):
        rows.append((f"Claim {i + 1}", claim.get("text", ""), f"claims-{i}-text"))
        if claim.get("fact_checker_label"):
            rows.append((f"Claim {i + 1} verdict", claim["fact_checker_label"], ""))
    return rows


class SkipForm(forms.Form):
    reason = forms.ChoiceField(choices=Article.SkipReason.choices, widget=forms.RadioSelect)
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def clean(self):
        data = super().clean()
        for problem in skip_problems(data.get("reason", ""), data.get("note")):
            self.add_error(problem.path, problem.message)
        return data
