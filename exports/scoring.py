"""Scoring predictions against a reference file: reading the files, running, reporting.

The numbers come from :mod:`pipeline.scoring`, which reproduces the official AVeriTeC
evaluation (``eval.py``) to the last bit. Both files are read as a JSON list of records, or
as JSON lines (one record per line). What happens with files the official script would
mis-score or crash on:

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
import json
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from django.conf import settings

from annotation.boundary import InputRefused, read_json
from pipeline.scoring import (
    LABELS,
    LEVELS,
    Scores,
    ScoringInputError,
    count_pairs,
    score,
)

__all__ = ["ScoringInputError", "format_report", "read_records", "score_files"]


def read_records(stream: IO[bytes] | IO[str], name: str) -> list[Any]:
    """A JSON list of records, or JSON lines; ScoringInputError with the place of a mistake."""
    raw = stream.read()
    try:
        text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        raise ScoringInputError([f"{name}: not UTF-8 text (byte {exc.start})"]) from exc
    stripped = text.lstrip()
    if not stripped:
        raise ScoringInputError([f"{name}: the file is empty"])
    if stripped[0] == "[":
        try:
            return read_json(text, check=False)
        except InputRefused as exc:
            raise ScoringInputError([f"{name}: {exc.refusal.message}"]) from exc
        except json.JSONDecodeError as exc:
            raise ScoringInputError(
                [f"{name}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"]
            ) from exc
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                records.append(read_json(line, check=False))
            except InputRefused as exc:
                raise ScoringInputError([f"{name}: line {number} {exc.refusal.message}"]) from exc
            except json.JSONDecodeError as exc:
                raise ScoringInputError(
                    [
                        f"{name}: line {number} is not a JSON record ({exc.msg}); expected a JSON "
                        "list of records or one record per line"
                    ]
                ) from exc
    return records


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
    )


def format_report(metrics: dict[str, Any]) -> str:
    """The scores as text, in the order and wording of the official script's output."""
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


def _row(left: str, value: float) -> str:
    return left + " " * max(1, 40 - len(left)) + repr(float(value))
