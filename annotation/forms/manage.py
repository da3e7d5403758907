import io

from django import forms

from annotation.accounts import AccountError, parse_usernames
from annotation.assignment import assignable_annotators
from annotation.intake import COLUMNS, IntakeError, read_stream
from annotation.models import Batch, Task, User
from annotation.vocabulary import Phase

PHASE_CHOICES = [(p.value, p.label) for p in Phase]


class BulkAccountsForm(forms.Form):
    usernames = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 6, "placeholder": "username\nana\nbasil"}),
        help_text="One username per line, or a CSV whose first column is the username.",
    )
    csv_file = forms.FileField(required=False, label="…or upload a CSV file")
    phases = forms.TypedMultipleChoiceField(
        choices=PHASE_CHOICES,
        coerce=int,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=(
            "Leave empty: new annotators qualify for P1-P3 by passing training. Ticking P1-P3 "
            "skips their training and needs a reason below."
        ),
    )
    waiver_reason = forms.CharField(
        required=False,
        max_length=500,
        label="Reason for skipping training",
        help_text="Kept in the audit log for each account, e.g. 'trained in the 2024 round'.",
    )

    def clean(self):
        data = super().clean()
        text = data.get("usernames") or ""
        upload = data.get("csv_file")
        if upload:
            try:
                text += "\n" + upload.read().decode("utf-8")
            except UnicodeDecodeError:
                raise forms.ValidationError("The CSV file must be UTF-8 text.") from None
        try:
            data["names"] = parse_usernames(text)
        except AccountError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return data


class ArticleIntakeForm(forms.Form):
    """A file of fact-checking articles for Phase 1, the same files `import_articles` takes."""

    file = forms.FileField(
        label="Articles file",
        help_text=f"CSV or JSON lines with the columns {', '.join(COLUMNS)}; only url is required.",
    )
    batch = forms.CharField(
        required=False, max_length=200, help_text="Name of the batch (default: file name + time)."
    )

    def clean_batch(self) -> str:
        name = self.cleaned_data["batch"].strip()
        if name and (taken := Batch.name_taken(name)):
            raise forms.ValidationError(taken, code="batch_name_taken")
        return name

    def clean(self):
        data = super().clean()
        upload = data.get("file")
        if upload is None:
            return data
        try:
            text = upload.read().decode("utf-8-sig")
        except UnicodeDecodeError:
            self.add_error("file", "The file must be UTF-8 text.")
            return data
        try:
            data["rows"] = read_stream(io.StringIO(text, newline=""), upload.name)
        except IntakeError as exc:
            for problem in exc.problems[:20]:
                self.add_error("file", problem)
            if len(exc.problems) > 20:
                self.add_error("file", f"… and {len(exc.problems) - 20} more problems.")
        return data


class AccountForm(forms.Form):
    role = forms.ChoiceField(choices=User.Role.choices)
    phases = forms.TypedMultipleChoiceField(
        choices=PHASE_CHOICES, coerce=int, required=False, widget=forms.CheckboxSelectMultiple
    )
    active = forms.BooleanField(required=False, help_text="Inactive accounts cannot sign in.")
    waiver_reason = forms.CharField(
        required=False,
        max_length=500,
        label="Reason for skipping training",
        help_text="Needed to tick P1-P3 for someone who has not passed that phase's training.",
    )
    researcher_annotates = forms.BooleanField(
        required=False,
        label="Let this researcher take annotation tasks",
        help_text="Researchers hold no phases unless this is ticked. A researcher who "
        "annotates sees the claims they may check blind only as a blind checker does.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for phase in Phase:
            # The column holds a 32-bit number; no one hands in a million tasks of a phase.
            self.fields[f"quota_{phase.value}"] = forms.IntegerField(
                required=False,
                min_value=0,
                max_value=1_000_000,
                label=f"Quota P{phase.value}",
                help_text="Empty for no limit.",
            )

    @classmethod
    def for_user(cls, user: User, data=None) -> "AccountForm":
        quotas = {q.phase: q.limit for q in user.quotas.all()}
        initial = {
            "role": user.role,
            "phases": user.qualified_phases,
            "active": user.is_active,
            "researcher_annotates": user.role == User.Role.RESEARCHER
            and bool(user.qualified_phases),
            **{f"quota_{p}": quotas.get(p) for p in Phase.values},
        }
        return cls(data, initial=initial)

    def quotas(self) -> dict[int, int | None]:
        return {p: self.cleaned_data.get(f"quota_{p}") for p in Phase.values}


class AssignForm(forms.Form):
    phase = forms.TypedChoiceField(choices=PHASE_CHOICES, coerce=int)
    annotators = forms.ModelMultipleChoiceField(
        queryset=assignable_annotators(),
        widget=forms.CheckboxSelectMultiple,
    )
    count = forms.IntegerField(min_value=1, max_value=10_000, label="Number of tasks")
    fill_evenly = forms.BooleanField(
        required=False,
        initial=True,
        help_text="Give each task to whoever holds the fewest, so everyone ends up level.",
    )


class ReassignForm(forms.Form):
    annotator = forms.ModelChoiceField(queryset=assignable_annotators())


class TaskFilterForm(forms.Form):
    phase = forms.TypedChoiceField(
        choices=[("", "any phase"), *PHASE_CHOICES], coerce=int, required=False, empty_value=None
    )
    status = forms.ChoiceField(
        choices=[("open", "open (waiting, assigned, in progress)"), *Task.Status.choices],
        required=False,
    )
