"""What the no-lost-work tests share: a text field per phase, the posts of its editor, and
where a text can be found afterwards (handed in, or in a revision the annotator can open)."""

from __future__ import annotations

from django.urls import reverse

from annotation.models import Claim, DraftRevision, Task
from annotation.views.revisions import texts_of
from annotation.vocabulary import Phase

# The free-text field each phase's editor posts, as the form names it.
FIELD = {
    Phase.NORMALISATION: "claims-0-text",
    Phase.QUESTIONS: "q-0-text",
    Phase.QUALITY_CHECK: "justification",
    Phase.DISPUTE: "q-0-text",
    Phase.POST_CONTROL: "justification",
}


def _claim_fields(text: str) -> dict:
    fields = {
        "text": text,
        "fact_checker_label": "Refuted",
        "claim_date": "2020-10-30",
        "date_as_written": "",
        "speaker": "A councillor",
        "reporting_source": "Facebook",
        "original_claim_url": "https://facebook.com/post/1",
        "media_url": "",
        "image_transcription": "",
        "location_iso_code": "gb",
        "claim_types": ["Numerical Claim"],
        "fact_checking_strategies": ["Written Evidence"],
    }
    return {f"claims-0-{key}": value for key, value in fields.items()}


def _answer_fields() -> dict:
    values = {
        "answer_type": "Extractive",
        "text": "The 2019 budget lists 2.1 million pounds for parks.",
        "boolean": "",
        "boolean_explanation": "",
        "source_url": "https://council.example.gov/budget-2019",
        "source_medium": "Web text",
    }
    return {f"q-0-a-0-{k}": v for k, v in values.items()}


def editor_post(phase: int, text: str, *, version: int, tab: str, complete: bool = False) -> dict:
    """What a tab of the phase's editor posts with `text` in its free-text field; complete
    posts fill every field a hand-in needs."""
    data = {"draft_version": str(version), "tab_id": tab}
    if phase == Phase.NORMALISATION:
        data.update({"claims-TOTAL_FORMS": "1", "claims-INITIAL_FORMS": "0"})
        data.update(_claim_fields(text) if complete else {FIELD[phase]: text})
    elif phase in (Phase.QUESTIONS, Phase.DISPUTE):
        data[FIELD[phase]] = text
        if complete:
            data.update({"verdict": "Refuted", "claim_correction": "", **_answer_fields()})
    else:
        data[FIELD[phase]] = text
        if complete:
            data["verdict"] = "Refuted"
    return data


def autosave(client, task: Task, text: str, *, version: int, tab: str, **extra):
    url = reverse("annotation:save-draft", args=[task.pk])
    return client.post(url, {**editor_post(task.phase, text, version=version, tab=tab), **extra})


def submit(client, task: Task, text: str, *, version: int, tab: str):
    """Press Submit in a tab (and confirm, where the phase asks): the last response."""
    data = editor_post(task.phase, text, version=version, tab=tab, complete=True)
    if task.phase == Phase.NORMALISATION:
        return client.post(reverse("annotation:submit-normalisation", args=[task.pk]), data)
    if task.phase in (Phase.QUALITY_CHECK, Phase.POST_CONTROL):
        return client.post(reverse("review:submit-check", args=[task.pk]), data)
    checked = client.post(reverse("annotation:check-evidence", args=[task.pk]), data)
    if checked.status_code != 200:
        return checked
    confirmed = Task.objects.get(pk=task.pk).draft_version
    return client.post(
        reverse("annotation:confirm-evidence", args=[task.pk]),
        {"draft_version": str(confirmed), "tab_id": tab},
    )


def restorable_texts(task: Task) -> set[str]:
    """Every text in a revision of the task its annotator can still open."""
    revisions = DraftRevision.objects.filter(task=task).kept_for_annotator()
    return {text for r in revisions for _, text in texts_of(r.content)}


def discarded_texts(task: Task) -> set[str]:
    revisions = DraftRevision.objects.filter(task=task, discarded_at__isnull=False)
    return {text for r in revisions for _, text in texts_of(r.content)}


def handed_in_texts(task: Task) -> set[str]:
    """The texts of what the task handed in (the phase's stored work)."""
    task = Task.objects.get(pk=task.pk)
    if task.status != Task.Status.SUBMITTED:
        return set()
    if task.phase == Phase.NORMALISATION:
        return set(Claim.objects.filter(article_id=task.article_id).values_list("text", flat=True))
    if task.phase in (Phase.QUESTIONS, Phase.DISPUTE):
        evidence = getattr(task, "evidence_round", None)
        if evidence is None:
            return set()
        return {
            text
            for q in evidence.questions.prefetch_related("answers")
            for text in (q.text, *(a.text for a in q.answers.all()))
        }
    check = getattr(task, "quality_check", None)
    return {check.justification} if check is not None else set()
