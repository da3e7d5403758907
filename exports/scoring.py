"""Scoring predictions against a reference file: reading the files, running, reporting.

Each file's form is recognised (``exports.shared_task``: 2023 JSON, 2024 JSON, 2025 CSV) and
the scorer of that year runs: :mod:`pipeline.scoring` (``eval.py``), or
:mod:`pipeline.shared_tasks` (``evaluate_veracity.py``, ``averitec_evaluate.py``, with Ev2R
from :mod:`pipeline.ev2r` when configured), each equal to its official script. JSON files
are read as a list of records, or as JSON lines (one record per line). For the 2023 form,
what happens with files the official script would mis-score or crash on (the 2024 and 2025
scorers refuse the same kinds of input, naming each record or id):

============================================  ============================================
predictions file                              behaviour
============================================  ============================================
fewer or more records than the references     error (the official script silently scores
                                              only the common prefix)
records in another order                      error when a record's ``claim`` text (or its
                                              ``claim_id``) does not match the reference at
                                              the same position; records are scored by
                                              position, as the official script does
label not one of the four                     error naming the record and the four labels
                                              (the official script counts it as wrong)
``label`` on some records only                error; on no record: only the evidence scores
                                              are computed (``q_only``, ``q_and_a``)
more than 10 questions / evidence strings     official behaviour: only the first 10 are
                                              scored; reported as a note
no ``questions`` and no ``string_evidence``   official behaviour: evidence scores 0; a note
``string_evidence`` (list of strings)         accepted, as the official script does
no ``justification``                          official behaviour: the first 10 evidence
                                              strings joined are scored as justification
Boolean answer without its explanation,       error naming the record and field (the
malformed question or answer                  official script crashes)
============================================  ============================================

References must have questions on every record (the score divides by their number) and,
when labels are scored, a ``justification`` string and a ``claim_types`` list.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings

from exports.shared_task import (
    FORM_2023,
    FORM_2024,
    FORM_2025,
    Decoded,
    detect_and_read,
    predictions_for,
    read_records,
    references_for,
    scorer_for,
)
from pipeline.ev2r import ChatClient, Ev2RError, Prompts, ResponseCache, ev2r_scores, load_prompts
from pipeline.reference_cache import content_key
from pipeline.scoring import (
    LABELS,
    LEVELS,
    Scores,
    ScoringInputError,
    count_pairs,
    score,
)
from pipeline.shared_tasks import aligned_2025, score_2024, score_2025

__all__ = [
    "ScoringInputError",
    "format_report",
    "read_records",
    "score_any",
    "score_files",
]


def read_file(path: Path) -> list[Any]:
    try:
        with open(path, "rb") as stream:
            return read_records(stream, str(path))
    except OSError as exc:
        raise ScoringInputError([f"{path}: cannot be read ({exc.strerror or exc})"]) from exc


def default_workers() -> int | None:
    """Worker processes for METEOR: SCORING_PROCESSES, or None for every usable core."""
    return settings.SCORING_PROCESSES or None


def score_files(
    predictions: list[Any],
    references: list[Any],
    *,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    workers: int | None = None,
    reference_key: str | None = None,
) -> Scores:
    """Score decoded files. ``on_total`` learns the number of METEOR pairs first."""
    if on_total is not None:
        # Malformed input fails here too; score() then reports it properly.
        with contextlib.suppress(KeyError, TypeError, AttributeError):
            on_total(count_pairs(predictions, references))
    return score(
        predictions,
        references,
        processes=workers if workers is not None else default_workers(),
        progress=progress or (lambda _: None),
        reference_key=reference_key,
    )


def read_any(path: Path) -> Decoded:
    """A file of any of the three forms, recognised (``exports.shared_task``)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ScoringInputError([f"{path}: cannot be read ({exc.strerror or exc})"]) from exc
    return detect_and_read(raw, str(path))


def score_any(
    predictions: Decoded,
    references: Decoded,
    *,
    scorer: str | None = None,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    workers: int | None = None,
    ev2r: bool | None = None,
    ev2r_progress: Callable[[int], None] | None = None,
    on_ev2r_total: Callable[[int], None] | None = None,
) -> Scores:
    """Score two decoded files with the scorer of their forms (or ``scorer``, any of FORMS).

    The 2025 scorer adds Ev2R when it is configured (EV2R_BASE_URL; ``ev2r=False`` leaves it
    out, ``ev2r=True`` requires it): two LLM prompts per claim, counted by ``ev2r_progress``.
    The metrics of the 2024 and 2025 scorers say so under "form" (no "form": 2023).
    """
    scorer = scorer or scorer_for(predictions, references)
    predicted = predictions_for(scorer, predictions)
    reference = references_for(scorer, references)
    options: dict[str, Any] = {
        "processes": workers if workers is not None else default_workers(),
        "progress": progress or (lambda _: None),
    }
    # The references' prepared text is kept per file and scorer (pipeline.reference_cache).
    key = content_key(f"{scorer}:{references.key}".encode()) if references.key else None
    if scorer == FORM_2023:
        result = score_files(
            predicted,
            reference,
            progress=progress,
            on_total=on_total,
            workers=workers,
            reference_key=key,
        )
    elif scorer == FORM_2024:
        result = score_2024(predicted, reference, on_total=on_total, reference_key=key, **options)
    else:
        if ev2r is None:
            ev2r = bool(settings.EV2R_BASE_URL)
        # A configuration that cannot work is said before any METEOR time is spent.
        llm = ev2r_client() if ev2r else None
        result = score_2025(predicted, reference, on_total=on_total, reference_key=key, **options)
        if llm is not None:
            _add_ev2r(result, llm, predicted, reference, ev2r_progress, on_ev2r_total)
    if scorer != FORM_2023:
        # The 2023 keys stay as they were (the contract); the others say their form.
        result.metrics = {"form": scorer, **result.metrics}
    return result


def ev2r_client() -> tuple[ChatClient, Prompts]:
    """The configured LLM client and the official prompts; Ev2RError when not configured."""
    if not settings.EV2R_BASE_URL:
        raise Ev2RError(
            "Ev2R is not configured: set EV2R_BASE_URL, EV2R_MODEL and EV2R_PROMPTS_FILE"
        )
    prompts = load_prompts(settings.EV2R_PROMPTS_FILE)
    client = ChatClient(
        settings.EV2R_BASE_URL,
        settings.EV2R_MODEL,
        settings.EV2R_API_KEY,
        timeout=settings.EV2R_TIMEOUT,
        retries=settings.EV2R_RETRIES,
        cache=ResponseCache(settings.EV2R_CACHE_FILE),
    )
    return client, prompts


def _add_ev2r(
    result: Scores,
    llm: tuple[ChatClient, Prompts],
    predicted: list[dict],
    reference: list[dict],
    progress: Callable[[int], None] | None,
    on_total: Callable[[int], None] | None,
) -> None:
    client, prompts = llm
    pred, ref, _ = aligned_2025(predicted, reference)
    if on_total is not None:
        on_total(2 * len(ref))
    found = ev2r_scores(
        pred,
        ref,
        client,
        prompts,
        workers=settings.EV2R_CONCURRENCY,
        progress=progress or (lambda _: None),
    )
    seconds = result.metrics.pop("seconds")
    result.metrics.update(found.metrics)
    result.metrics["ev2r_requests"] = {
        "sent": client.stats.sent,
        "from_cache": client.stats.cached,
        "failed": client.stats.failed,
    }
    result.metrics["seconds"] = seconds
    result.notes.extend(found.notes)


def format_report(metrics: dict[str, Any]) -> str:
    """The scores as text, in the order and wording of the official script of their form."""
    form = metrics.get("form", FORM_2023)
    if form == FORM_2024:
        return _report_2024(metrics)
    if form == FORM_2025:
        return _report_2025(metrics)
    lines = [
        "AVeriTeC evaluation:",
        "====================",
        _row("Question-only score (HU-meteor):", metrics["q_only"]),
        _row("Question-answer score (HU-meteor):", metrics["q_and_a"]),
        "====================",
    ]
    if "veracity" in metrics:
        lines.append("Veracity F1 scores:")
        for key in (*LABELS, "macro", "acc"):
            lines.append(_row(f" * {key}:", metrics["veracity"][key]))
        lines += [
            _row("Justification score (meteor):", metrics["justification"]),
            "--------------------",
            "Averitec scores:",
        ]
        for level in LEVELS:
            key = str(level)
            lines.append(_row(f" * Veracity scores (meteor @ {key}):", metrics["averitec"][key]))
            lines.append(
                _row(
                    f" * Justification scores (meteor @ {key}):",
                    metrics["averitec_justification"][key],
                )
            )
        for threshold in ("0.2", "0.3"):
            lines.append(f"-------------------- by claim type, evidence score > {threshold}")
            for claim_type, value in metrics[f"by_type_{threshold}"].items():
                lines.append(_row(f" * Veracity scores ({claim_type}):", value))
        lines.append("====================")
    lines.append(f"Scored in {metrics['seconds']:.2f} s")
    return "\n".join(lines)


def _report_2024(metrics: dict[str, Any]) -> str:
    lines = [
        "AVeriTeC 2024 shared task evaluation (evaluate_veracity.py):",
        _row("Question-only score (HU-meteor):", metrics["q_only"]),
        _row("Question-answer score (HU-meteor):", metrics["q_and_a"]),
        "====================",
        "Veracity F1 scores:",
    ]
    for key in (*LABELS, "macro", "acc"):
        lines.append(_row(f" * {key}:", metrics["veracity"][key]))
    lines += ["--------------------", "AVeriTeC scores:"]
    for level in LEVELS:
        key = str(level)
        lines.append(_row(f" * Veracity scores (meteor @ {key}):", metrics["averitec"][key]))
    lines += ["--------------------", "AVeriTeC scores by type @ 0.25:"]
    for claim_type, value in metrics["by_type_0.25"].items():
        lines.append(_row(f" * Veracity scores ({claim_type}):", value))
    lines += [
        "====================",
        _row("AVeriTeC score (meteor @ 0.25):", metrics["averitec_score"]),
        f"Scored in {metrics['seconds']:.2f} s",
    ]
    return "\n".join(lines)


# The official script's names for the 2025 figures.
NAMES_2025 = {
    "q_only": "Q only (Hungarian meteor)",
    "q_and_a": "Q + A (Hungarian meteor)",
    "old_averitec_score": "old AVeriTeC Score (Hungarian meteor)",
    "ev2r_q_recall": "Q only (Ev2R recall)",
    "ev2r_qa_recall": "Q + A (Ev2R recall)",
    "new_averitec_score": "new AVeriTeC score (Ev2R recall)",
}


def _report_2025(metrics: dict[str, Any]) -> str:
    lines = ["AVeriTeC 2025 shared task evaluation (averitec_evaluate.py):"]
    for key, name in NAMES_2025.items():
        if key in metrics:
            lines.append(_row(f"{name}:", metrics[key]))
    if "new_averitec_score" not in metrics:
        lines.append(
            "Ev2R: not run (set EV2R_BASE_URL, EV2R_MODEL and EV2R_PROMPTS_FILE to score with "
            "an LLM)"
        )
    else:
        requests = metrics.get("ev2r_requests") or {}
        lines.append(
            f"Ev2R requests: {requests.get('sent', 0)} sent, {requests.get('from_cache', 0)} "
            f"answered from the cache, {requests.get('failed', 0)} failed"
        )
    lines.append(f"Scored in {metrics['seconds']:.2f} s")
    return "\n".join(lines)


def _row(left: str, value: float) -> str:
    return left + " " * max(1, 40 - len(left)) + repr(float(value))
