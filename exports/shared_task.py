"""The AVeriTeC shared tasks' file forms: 2023 JSON, 2024 JSON and 2025 CSV, both ways.

One home for what each form looks like, how one becomes another, and how a file's form is
recognised; the export command, the exports page, the API and ``score`` all call it.

* ``averitec-2023``: the released dev.json (``exports.averitec_json`` reads and writes it);
  a prediction has ``questions`` with ``answers`` and a ``label``.
* ``averitec-2024`` (FEVER-7): ``{claim_id, claim, pred_label, evidence: [{question, answer,
  url, scraped_text}]}`` per claim, one evidence item per answer. Exported from gold records
  it is the gold evidence in the submission's shape (an oracle system's predictions); the
  2024 scorer reads its references as the 2023 form.
* ``averitec-2025-csv`` (FEVER-8): columns ``id, claim, evi, label, split``; ``evi`` is every
  question-answer pair as ``question\\t\\t\\nanswer\\t\\t\\n\\n``, one pair per answer, so a
  question with several answers is repeated. Gold files say ``gold`` in ``split``; a
  submission made from 2024 predictions says ``pred``, as the organisers' converter does.

The conversions are the organisers' own rules, so a 2025 gold CSV built from dev.json equals
their ``solution_dev.csv`` byte for byte: a Boolean answer is followed by ``". "`` and its
explanation (as the 2023 and 2024 scorers read it); a question without answers, which the
release does not have, becomes one pair with the answer "No answer could be found." (the
string those scorers compare). ``id`` is the claim's position.

Order is the contract: the official scorers match a prediction to a reference by its
position (2023, 2024) or its ``id`` (2025), so every export keeps dataset order and says so
(:data:`ORDER_NOTE`).

The 2025 CSV is written with ``annotation.csvfiles.data_csv_writer``: its cells are the data
the official scorer reads, and are not made safe for spreadsheets.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from annotation.boundary import InputRefused, check_value, read_json
from annotation.csvfiles import data_csv_writer
from exports.averitec_json import write_json_array
from pipeline.reference_cache import content_key
from pipeline.scoring import ScoringInputError
from pipeline.shared_tasks import (
    CSV_COLUMNS,
    PAIR_END,
    QUESTION_END,
    parse_evi,
    read_csv_rows,
)

FORM_2023 = "averitec-2023"
FORM_2024 = "averitec-2024"
FORM_2025 = "averitec-2025-csv"
FORMS = (FORM_2023, FORM_2024, FORM_2025)
FORM_CHOICES = [
    (FORM_2023, "AVeriTeC 2023 JSON (like dev.json)"),
    (FORM_2024, "AVeriTeC 2024 shared task JSON (claim_id, pred_label, evidence)"),
    (FORM_2025, "AVeriTeC 2025 shared task CSV (id, claim, evi, label, split)"),
]
EXTENSIONS = {FORM_2023: "json", FORM_2024: "json", FORM_2025: "csv"}

ORDER_NOTE = (
    "Claims are in dataset order, and must stay so: the official scorers match each "
    "prediction to the reference at the same position (2023 and 2024 JSON) or with the same "
    "id, which is that position (2025 CSV)."
)
NO_ANSWER = "No answer could be found."
GOLD_SPLIT = "gold"
PRED_SPLIT = "pred"

__all__ = [
    "FORMS",
    "ORDER_NOTE",
    "Decoded",
    "detect_and_read",
    "evi",
    "qa_pairs",
    "record_2024",
    "records_as_2023_predictions",
    "records_as_2024",
    "rows_2025",
    "write_form",
]


# --------------------------------------------------------------------------------------
# From the 2023 form
# --------------------------------------------------------------------------------------


def answer_text(answer: dict[str, Any]) -> str:
    """An answer as the 2024 and 2025 forms hold it: a Boolean one with its explanation."""
    text: str = answer["answer"]
    if answer.get("answer_type") == "Boolean" and isinstance(
        answer.get("boolean_explanation"), str
    ):
        text += ". " + answer["boolean_explanation"]
    return text


def qa_pairs(record: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(question, answer, source URL) per answer of a 2023 record, in order."""
    pairs = []
    for question in record.get("questions") or ():
        answers = question.get("answers") or []
        if isinstance(answers, dict):  # the official scorers accept a lone answer object
            answers = [answers]
        for answer in answers:
            pairs.append(
                (question["question"], answer_text(answer), answer.get("source_url") or "")
            )
        if not answers:
            pairs.append((question["question"], NO_ANSWER, ""))
    return pairs


def evi(pairs: Iterable[tuple[str, str]]) -> str:
    """The 2025 ``evi`` cell of (question, answer) pairs."""
    return "".join(question + QUESTION_END + answer + PAIR_END for question, answer in pairs)


def record_2024(record: dict[str, Any], claim_id: int) -> dict[str, Any]:
    """A 2023 record (gold or prediction) as a 2024 prediction."""
    return {
        "claim_id": claim_id,
        "claim": record.get("claim", ""),
        "pred_label": record.get("label"),
        "evidence": [
            {"question": q, "answer": a, "url": url, "scraped_text": ""}
            for q, a, url in qa_pairs(record)
        ],
    }


def row_2025(record: dict[str, Any], row_id: int, split: str = GOLD_SPLIT) -> dict[str, Any]:
    """A 2023 record as a 2025 CSV row."""
    return {
        "id": row_id,
        "claim": record.get("claim", ""),
        "evi": evi((q, a) for q, a, _ in qa_pairs(record)),
        "label": record.get("label"),
        "split": split,
    }


def row_2025_from_2024(record: dict[str, Any], row_id: int) -> dict[str, Any]:
    """A 2024 prediction as the organisers' ``prepare_leaderboard_submission.py`` writes it."""
    return {
        "id": row_id,
        "claim": record.get("claim", ""),
        "evi": evi((e["question"], e["answer"]) for e in record.get("evidence") or ()),
        "label": record.get("pred_label"),
        "split": PRED_SPLIT,
    }


# --------------------------------------------------------------------------------------
# Back towards the 2023 form
# --------------------------------------------------------------------------------------


def record_2024_from_row(row: dict[str, Any]) -> dict[str, Any]:
    """A 2025 row as a 2024 prediction (the CSV keeps no URLs)."""
    return {
        "claim_id": row["id"],
        "claim": row["claim"],
        "pred_label": row["label"],
        "evidence": [
            {"question": q, "answer": a, "url": "", "scraped_text": ""}
            for q, a in parse_evi(row["evi"])
        ],
    }


def record_2023_from_2024(record: dict[str, Any]) -> dict[str, Any]:
    """A 2024 prediction as a 2023 one: consecutive items of one question become its answers.

    The 2023 scorer then compares the same strings the 2024 one does.
    """
    questions: list[dict[str, Any]] = []
    for item in record.get("evidence") or ():
        answer = {"answer": item["answer"]}
        if item.get("url"):
            answer["source_url"] = item["url"]
        if questions and questions[-1]["question"] == item["question"]:
            questions[-1]["answers"].append(answer)
        else:
            questions.append({"question": item["question"], "answers": [answer]})
    out = {
        "claim": record.get("claim", ""),
        "label": record.get("pred_label"),
        "questions": questions,
    }
    if "claim_id" in record:
        out["claim_id"] = record["claim_id"]
    return out


# --------------------------------------------------------------------------------------
# Whole files
# --------------------------------------------------------------------------------------


def records_as_2024(records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for position, record in enumerate(records):
        yield record_2024(record, position)


def rows_2025(
    records: Iterable[dict[str, Any]], split: str = GOLD_SPLIT
) -> Iterator[dict[str, Any]]:
    for position, record in enumerate(records):
        yield row_2025(record, position, split)


def records_as_2023_predictions(form: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Any form's records as 2023 predictions (2025 rows in id order)."""
    if form == FORM_2023:
        return records
    if form == FORM_2025:
        records = [record_2024_from_row(r) for r in sorted(records, key=lambda r: r["id"])]
    return [record_2023_from_2024(r) for r in records]


def write_csv_rows(rows: Iterable[dict[str, Any]], out: IO[str]) -> int:
    """The 2025 CSV: header, then rows, as Python's csv module writes by default (CRLF),
    which is how the organisers wrote theirs. ``out`` must be opened with newline=""."""
    writer = data_csv_writer(out)
    writer.writerow(CSV_COLUMNS)
    count = 0
    for row in rows:
        writer.writerow([row[column] for column in CSV_COLUMNS])
        count += 1
    return count


def write_form(form: str, records: Iterable[dict[str, Any]], out: IO[str]) -> int:
    """Write 2023 records (gold, in dataset order) in ``form``; returns how many."""
    if form == FORM_2023:
        return write_json_array(records, out)
    if form == FORM_2024:
        return write_json_array(records_as_2024(records), out)
    if form == FORM_2025:
        return write_csv_rows(rows_2025(records), out)
    raise ValueError(f"unknown form {form!r}; expected one of {', '.join(FORMS)}")


# --------------------------------------------------------------------------------------
# Recognising and reading a file
# --------------------------------------------------------------------------------------


@dataclass
class Decoded:
    """A file's records and the form they were recognised as."""

    form: str
    records: list[Any]
    notes: list[str] = field(default_factory=list)
    key: str = ""  # the SHA-256 of the file's bytes: the references' cache key


def form_of_records(records: list[Any]) -> str:
    """2024 when the records carry the 2024 keys (and not the 2023 ones), else 2023."""
    dicts = [r for r in records if isinstance(r, dict)]
    is_2024 = any("pred_label" in r or "evidence" in r for r in dicts)
    is_2023 = any("questions" in r or "label" in r for r in dicts)
    return FORM_2024 if is_2024 and not is_2023 else FORM_2023


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
            whole: list[Any] = read_json(text, check=False)
            return whole
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


def detect_and_read(raw: bytes | str, name: str) -> Decoded:
    """A file's form and records: JSON (a list or lines; 2023 or 2024 by its keys) or CSV.

    Every value passes the input boundary; ScoringInputError names the place of a mistake.
    """
    try:
        text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        raise ScoringInputError([f"{name}: not UTF-8 text (byte {exc.start})"]) from exc
    key = content_key(raw if isinstance(raw, bytes) else raw.encode())
    stripped = text.lstrip()
    if not stripped:
        raise ScoringInputError([f"{name}: the file is empty"])
    if stripped[0] in "[{":
        records = read_records(io.StringIO(text), name)
        return Decoded(form_of_records(records), records, key=key)
    first_line = stripped.split("\n", 1)[0].strip("\r")
    header = next(csv.reader([first_line]), [])
    if "evi" in header and "id" in header:
        rows = read_csv_rows(text, name)
        for number, row in enumerate(rows, start=1):
            try:
                check_value(row)
            except InputRefused as exc:
                raise ScoringInputError([f"{name}: row {number}, {exc}"]) from exc
        return Decoded(FORM_2025, rows, key=key)
    raise ScoringInputError(
        [
            f"{name}: neither JSON nor a CSV with the columns {', '.join(CSV_COLUMNS)}; "
            f"the forms read are {', '.join(FORMS)}"
        ]
    )


# --------------------------------------------------------------------------------------
# What each scorer reads
# --------------------------------------------------------------------------------------


def scorer_for(predictions: Decoded, references: Decoded) -> str:
    """The scorer a pair of files calls for: 2025 when either is a CSV, else the
    predictions' form (2024 predictions are scored against 2023 references)."""
    if FORM_2025 in (predictions.form, references.form):
        return FORM_2025
    return predictions.form


def predictions_for(scorer: str, decoded: Decoded) -> list[Any]:
    """The predictions in the form ``scorer`` reads; ScoringInputError naming a bad record."""
    if decoded.form == scorer:
        return decoded.records
    convert = {
        FORM_2023: lambda records: records_as_2023_predictions(decoded.form, records),
        FORM_2024: lambda records: (
            list(records_as_2024(records))
            if decoded.form == FORM_2023
            else [record_2024_from_row(r) for r in sorted(records, key=lambda r: r["id"])]
        ),
        FORM_2025: lambda records: (
            list(rows_2025(records, PRED_SPLIT))
            if decoded.form == FORM_2023
            else [row_2025_from_2024(r, i) for i, r in enumerate(records)]
        ),
    }[scorer]
    return _converted(convert, decoded, "predictions", scorer)


def references_for(scorer: str, decoded: Decoded) -> list[Any]:
    """The references in the form ``scorer`` reads: the 2023 and 2024 scorers need the
    2023 form (questions, answers, labels, claim types); the 2025 one any form."""
    if scorer == FORM_2025:
        if decoded.form == FORM_2025:
            return decoded.records
        if decoded.form == FORM_2023:
            return _converted(lambda r: list(rows_2025(r)), decoded, "references", scorer)
        return _converted(
            lambda records: [
                {**row_2025_from_2024(r, i), "split": GOLD_SPLIT} for i, r in enumerate(records)
            ],
            decoded,
            "references",
            scorer,
        )
    if decoded.form != FORM_2023:
        raise ScoringInputError(
            [
                f"the {scorer} scorer reads its references in the {FORM_2023} form (like "
                f"dev.json, with claim types and labels), and this file is {decoded.form}: "
                f"export the gold data with --format {FORM_2023}"
            ]
        )
    return decoded.records


def _converted(
    convert: Callable[[list[Any]], list[Any]], decoded: Decoded, name: str, scorer: str
) -> list[Any]:
    if not isinstance(decoded.records, list):
        raise ScoringInputError([f"the {name} must be a list of records"])
    for index, record in enumerate(decoded.records):
        try:
            convert([record])
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise ScoringInputError(
                [
                    f"{name} record {index} ({decoded.form}) cannot be read as {scorer}: "
                    f"{exc.__class__.__name__} {exc}"
                ]
            ) from exc
    return convert(decoded.records)
