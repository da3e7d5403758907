"""Reading the quality-check screen (P3 and P5) from a form post."""

from __future__ import annotations

import re

from django import forms
from django.http import QueryDict

from annotation.models import Batch
from annotation.submissions import FlagData, QualityVerdict
from annotation.vocabulary import Phase
from review.agreement import ReportFilter
from review.checks import check_problems, flag_fits

# "Unreadable" is one of the verdict choices on the screen: a claim that makes no sense gets
# no verdict, so the two can never be chosen together.
UNREADABLE = "unreadable"
_TARGET = re.compile(r"^flag-(claim|q-(\d+)(?:-a-(\d+))?)$")


def draft_from_post(post: QueryDict) -> dict:
    flags = {}
    for key in post:
        if _TARGET.match(key):
            flags[key.removeprefix("flag-")] = sorted(set(post.getlist(key)))
    verdict = post.get("verdict", "")
    return {
        "verdict": "" if verdict == UNREADABLE else verdict,
        # The older separate box is still read, so a post with both is refused, not guessed.
        "unreadable": verdict == UNREADABLE or post.get("unreadable") == "on",
        "justification": post.get("justification", "").strip(),
        "flags": flags,
    }


def draft_summary(draft: dict) -> list[tuple[str, str, str]]:
    """A check's draft as (label, value, form field) rows, for the conflict screen."""
    verdict = "Unreadable" if draft.get("unreadable") else draft.get("verdict", "")
    rows = [
        ("Verdict", verdict, ""),
        ("Justification", draft.get("justification", ""), "justification"),
    ]
    flags = draft.get("flags", {})
    if flags.get("claim"):
        words = ", ".join(code.replace("_", " ") for code in flags["claim"])
        rows.append(("Problems with the claim", words, ""))
    marked = sum(len(codes) for target, codes in flags.items() if target != "claim")
    rows.append(("Flags on questions and answers", str(marked), ""))
    return rows


def check_errors(draft: dict, phase: int) -> dict[str, str]:
    """What blocks submission, by field (the rules are review/checks.py's)."""
    errors: dict[str, str] = {}
    for problem in check_problems(verdict_from_draft(draft), phase):
        errors.setdefault(problem.path.split(".")[0], problem.message)
    return errors


def verdict_from_draft(draft: dict) -> QualityVerdict:
    """The check a draft holds; ticks that do not fit their target are dropped, as the
    screen never offers them."""
    flags: list[FlagData] = []
    for target, codes in draft.get("flags", {}).items():
        match = _TARGET.match(f"flag-{target}")
        if not match:
            continue
        question = int(match[2]) if match[2] is not None else None
        answer = int(match[3]) if match[3] is not None else None
        flags.extend(flag for code in codes if flag_fits(flag := FlagData(code, question, answer)))
    return QualityVerdict(
        verdict=draft["verdict"] or None,
        justification=draft["justification"],
        unreadable=draft["unreadable"],
        flags=flags,
    )


class ReportFilterForm(forms.Form):
    """The dashboard's filters; every field optional, the empty form means everything."""

    batch = forms.ModelChoiceField(queryset=Batch.objects.all(), required=False)
    start = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def clean(self):
        data = super().clean()
        if data.get("start") and data.get("end") and data["start"] > data["end"]:
            raise forms.ValidationError("The start date is after the end date.", code="order")
        return data

    def report_filter(self) -> ReportFilter:
        data = self.cleaned_data
        return ReportFilter(
            batch_id=data["batch"].pk if data.get("batch") else None,
            start=data.get("start"),
            end=data.get("end"),
        )


class StuckFixForm(forms.Form):
    """The stuck-work list's way out: a new account for a phase. Nobody is qualified here
    with one click; a training phase is earned by training, or waived with a reason on the
    account's page."""

    phase = forms.TypedChoiceField(choices=Phase.choices, coerce=int)
    create = forms.CharField(max_length=150)
