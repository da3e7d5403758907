"""Forms of the pre-suggestion log and the managers' suggestion switches."""

from django import forms

from annotation.models import Suggestion
from annotation.vocabulary import SuggestionKind


class SuggestionOutcomeForm(forms.Form):
    outcome = forms.ChoiceField(
        choices=[
            (Suggestion.Outcome.ACCEPTED, "accepted"),
            (Suggestion.Outcome.EDITED, "edited"),
            (Suggestion.Outcome.IGNORED, "ignored"),
        ]
    )
    final_text = forms.CharField(required=False, max_length=5000, strip=True)


class ClaimBeingWrittenForm(forms.Form):
    """What P1's Suggest sends of the claim card being written (all optional)."""

    text = forms.CharField(required=False, max_length=2000, strip=True)
    claim_date = forms.DateField(required=False)
    speaker = forms.CharField(required=False, max_length=300, strip=True)
    reporting_source = forms.CharField(required=False, max_length=300, strip=True)


class SentencesForm(forms.Form):
    url = forms.CharField(max_length=2048)
    question = forms.CharField(max_length=2000, strip=True)


class BatchSuggestionsForm(forms.Form):
    kinds_off = forms.MultipleChoiceField(
        choices=SuggestionKind.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Switched off",
    )
    ab_split = forms.BooleanField(
        required=False,
        label="A/B split: each task created from now on draws an arm, half without suggestions",
    )
