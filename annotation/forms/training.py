"""The training answer of each phase (P1-P3) and the managers' qualification thresholds."""

from django import forms

from annotation.models import QualificationThresholds
from annotation.submissions import TEXT_LIMITS
from annotation.vocabulary import ClaimType, Phase, Strategy, Verdict

# Training answers differ by phase (P1 types and strategies, P2 QA pairs and a verdict, P3 a
# verdict), so this module compares phases to pick the shape; it dispatches no task
# (tests/architecture/test_phase_dispatch.py names it among the places that stay).
# Enough boxes for the shared task's bar of two real pairs, with room for pairs that miss.
TRAINING_PAIRS = 5


class TrainingForm(forms.Form):
    """Fields by phase: P1 types and strategies; P2 QA pairs and a verdict; P3 a verdict."""

    def __init__(self, phase: int, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.phase = phase
        if phase == Phase.NORMALISATION:
            self.fields["claim_types"] = forms.MultipleChoiceField(
                choices=ClaimType.choices, widget=forms.CheckboxSelectMultiple
            )
            self.fields["fact_checking_strategies"] = forms.MultipleChoiceField(
                choices=Strategy.choices, widget=forms.CheckboxSelectMultiple
            )
            return
        if phase == Phase.QUESTIONS:
            for n in range(TRAINING_PAIRS):
                self.fields[f"question_{n}"] = forms.CharField(
                    required=False,
                    label=f"Question {n + 1}",
                    max_length=TEXT_LIMITS["question"],
                )
                self.fields[f"answer_{n}"] = forms.CharField(
                    required=False,
                    label=f"Answer {n + 1}",
                    max_length=TEXT_LIMITS["answer"],
                )
        self.fields["verdict"] = forms.ChoiceField(
            choices=Verdict.choices, widget=forms.RadioSelect
        )

    def clean(self):
        data = super().clean()
        if self.phase == Phase.QUESTIONS:
            for n in range(TRAINING_PAIRS):
                if data.get(f"answer_{n}") and not data.get(f"question_{n}"):
                    self.add_error(f"question_{n}", "An answer needs its question.")
        return data

    def answer(self) -> dict:
        data = self.cleaned_data
        if self.phase == Phase.NORMALISATION:
            return {
                "claim_types": data["claim_types"],
                "fact_checking_strategies": data["fact_checking_strategies"],
            }
        answer = {"verdict": data["verdict"]}
        if self.phase == Phase.QUESTIONS:
            answer["pairs"] = [
                {"question": data[f"question_{n}"], "answer": data[f"answer_{n}"]}
                for n in range(TRAINING_PAIRS)
                if data.get(f"question_{n}")
            ]
        return answer


class ThresholdsForm(forms.ModelForm):
    class Meta:
        model = QualificationThresholds
        fields = [
            "type_strategy_f1",
            "min_qa_pairs",
            "verdict_accuracy",
            "practice_items",
            "items_per_phase",
        ]
        widgets = {
            "type_strategy_f1": forms.NumberInput(attrs={"step": "0.05", "min": 0, "max": 1}),
            "verdict_accuracy": forms.NumberInput(attrs={"step": "0.05", "min": 0, "max": 1}),
        }

    def clean(self):
        # QualificationThresholds' constraints are the rules; they are asked again here only to
        # put the message beside its field (a failed constraint is the whole form's error).
        data = super().clean()
        for name in ("type_strategy_f1", "verdict_accuracy"):
            value = data.get(name)
            if value is not None and not 0 <= value <= 1:
                self.add_error(name, "Give a share between 0 and 1.")
        if data.get("items_per_phase") == 0:
            self.add_error("items_per_phase", "At least one claim.")
        return data
