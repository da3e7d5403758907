"""Reading and writing the AVeriTeC JSON format (the format of the released dev.json).

Reading validates every record before anything touches the database and reports each problem
with the record's index and the field's path. Writing reproduces imported records exactly
(key order, nulls, missing keys) and gives platform-made claims the release's key order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import IO, Any

from annotation.boundary import InputRefused, read_json, value_refusal
from annotation.vocabulary import (
    AnswerType,
    SourceMedium,
    Verdict,
    canonical_claim_type,
    canonical_strategy,
)
from pipeline.scoring import MAX_REPORTED_PROBLEMS, ScoringInputError

# The key order of a record, question and answer in the public release.
CLAIM_KEYS = (
    "claim",
    "required_reannotation",
    "label",
    "justification",
    "claim_date",
    "speaker",
    "original_claim_url",
    "fact_checking_article",
    "reporting_source",
    "location_ISO_code",
    "claim_types",
    "fact_checking_strategies",
    "questions",
    "cached_original_claim_url",
)
QUESTION_KEYS = ("question", "answers")
ANSWER_KEYS = (
    "answer",
    "answer_type",
    "source_url",
    "source_medium",
    "boolean_explanation",
    "cached_source_url",
)

_DATE = re.compile(r"^([0-9]{1,2})-([0-9]{1,2})-([0-9]{4})\Z")
_ISO_CODE = re.compile(r"^[A-Z]{2}\Z")
# Longer addresses are almost surely broken, and would not fit the database's URL keys.
MAX_URL_LENGTH = 2000


class DatasetFormatError(ScoringInputError):
    """A dataset file that does not follow the AVeriTeC format; nothing was imported."""

    heading = "in the dataset file"


def format_claim_date(value: date) -> str:
    """The release writes dates as day-month-year without zero padding (1-9-2020)."""
    return f"{value.day}-{value.month}-{value.year}"


def parse_claim_date(text: str) -> date:
    match = _DATE.match(text)
    if not match:
        raise ValueError(f"expected a date as D-M-YYYY (e.g. 31-10-2020), got {text!r}")
    day, month, year = (int(g) for g in match.groups())
    return date(year, month, day)  # raises ValueError for 31-2-2020


# --- Parsed records --------------------------------------------------------------------


@dataclass
class ParsedAnswer:
    text: str
    answer_type: str
    source_url: str
    source_medium: str
    boolean_explanation: str | None
    cached_source_url: str | None
    keys: list[str]


@dataclass
class ParsedQuestion:
    text: str
    answers: list[ParsedAnswer]
    keys: list[str]


@dataclass
class ParsedClaim:
    index: int
    text: str
    required_reannotation: bool
    label: str
    justification: str | None
    claim_date: date
    speaker: str | None
    original_claim_url: str | None
    fact_checking_article: str
    reporting_source: str | None
    location_iso_code: str | None
    claim_types: list[str]
    fact_checking_strategies: list[str]
    questions: list[ParsedQuestion]
    cached_original_claim_url: str | None
    keys: list[str]
    extra: dict[str, Any] = field(default_factory=dict)


class _Problems:
    """Collects problems while validating, so one run reports all of them."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.total = 0

    def add(self, where: str, message: str) -> None:
        self.total += 1
        if len(self.items) < MAX_REPORTED_PROBLEMS:
            self.items.append(f"{where}: {message}")


_TYPE_NAMES = {str: "a string", bool: "true or false", list: "a list", dict: "an object"}


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), _TYPE_NAMES.get(type(value), type(value).__name__)
    )


class _Reader:
    """Typed access to one JSON object, recording problems under a location prefix."""

    def __init__(self, obj: dict, where: str, problems: _Problems):
        self.obj, self.where, self.problems = obj, where, problems
        self.ok = True

    def _fail(self, key: str, message: str) -> None:
        self.ok = False
        self.problems.add(f"{self.where}, field '{key}'", message)

    def get(self, key: str, kind: type, *, required: bool = True, nullable: bool = False):
        if key not in self.obj:
            if required:
                self._fail(key, "is missing")
            return None
        value = self.obj[key]
        if value is None:
            if not nullable:
                self._fail(key, f"must be {_TYPE_NAMES[kind]}, not null")
            return None
        # bool is a subclass of int in Python; JSON keeps them apart and so do we.
        if type(value) is not kind:
            self._fail(key, f"must be {_TYPE_NAMES[kind]}, not {_type_name(value)}")
            return None
        return value

    def url(self, key: str, *, required: bool = True, nullable: bool = False) -> str | None:
        value = self.get(key, str, required=required, nullable=nullable)
        if value is not None and len(value) > MAX_URL_LENGTH:
            self._fail(key, f"is {len(value)} characters long; at most {MAX_URL_LENGTH} allowed")
            return None
        return value

    def choice(self, key: str, allowed: Iterable[str], *, required: bool = True):
        value = self.get(key, str, required=required)
        if value is not None and value not in allowed:
            options = ", ".join(repr(a) for a in allowed)
            self._fail(key, f"unknown value {value!r}; expected one of {options}")
            return None
        return value


def parse_dataset(data: Any, *, require_label: bool = True) -> list[ParsedClaim]:
    """Validate a decoded AVeriTeC JSON value and return its records.

    Raises DatasetFormatError listing every problem (up to a limit) with its location.
    """
    problems = _Problems()
    if not isinstance(data, list):
        raise DatasetFormatError(
            [f"the file must hold a JSON list of claim records, not {_type_name(data)}"]
        )
    parsed = []
    for index, record in enumerate(data):
        # The input boundary first (annotation/boundary.py): NUL, half surrogate pairs,
        # control and direction-override characters, over-long text and deep nesting
        # anywhere in the record, unknown fields included (they are kept and exported).
        if refusal := value_refusal(record):
            field = f", field '{refusal.path}'" if refusal.path else ""
            problems.add(f"record {index}{field}", refusal.message)
            continue
        claim = _parse_claim(index, record, problems, require_label=require_label)
        if claim is not None:
            parsed.append(claim)
    if problems.total:
        raise DatasetFormatError(problems.items, problems.total)
    return parsed


def load_dataset(stream: IO[str], *, require_label: bool = True) -> list[ParsedClaim]:
    """Decode and validate a dataset file; a file that is not JSON gets the line and column."""
    try:
        data = read_json(stream.read(), check=False)
    except InputRefused as exc:
        raise DatasetFormatError([f"the file {exc.refusal.message}"]) from exc
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(
            [f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"]
        ) from exc
    except UnicodeDecodeError as exc:
        raise DatasetFormatError([f"not UTF-8 text (byte {exc.start})"]) from exc
    return parse_dataset(data, require_label=require_label)


def _parse_claim(
    index: int, record: Any, problems: _Problems, *, require_label: bool
) -> ParsedClaim | None:
    where = f"record {index}"
    if not isinstance(record, dict):
        problems.add(where, f"must be an object, not {_type_name(record)}")
        return None
    r = _Reader(record, where, problems)
    text = r.get("claim", str)
    if text is not None and not text.strip():
        r._fail("claim", "is empty")
    required_reannotation = r.get("required_reannotation", bool, required=False)
    label = r.choice("label", Verdict.values, required=require_label)
    justification = r.get("justification", str, required=False, nullable=True)
    raw_date = r.get("claim_date", str)
    claim_date = None
    if raw_date is not None:
        try:
            claim_date = parse_claim_date(raw_date)
        except ValueError as exc:
            r._fail("claim_date", str(exc))
    speaker = r.get("speaker", str, required=False, nullable=True)
    original_claim_url = r.url("original_claim_url", required=False, nullable=True)
    article = r.url("fact_checking_article")
    if article is not None and not article.strip():
        r._fail("fact_checking_article", "is empty")
    reporting_source = r.get("reporting_source", str, required=False, nullable=True)
    location = r.get("location_ISO_code", str, required=False, nullable=True)
    if location is not None and not _ISO_CODE.match(location):
        r._fail(
            "location_ISO_code", f"must be a two-letter country code like 'US', not {location!r}"
        )
    claim_types = _vocabulary_list(r, "claim_types", canonical_claim_type)
    strategies = _vocabulary_list(r, "fact_checking_strategies", canonical_strategy)
    cached_original = r.get("cached_original_claim_url", str, required=False, nullable=True)
    raw_questions = r.get("questions", list)
    questions = []
    for q_index, raw_question in enumerate(raw_questions or []):
        question = _parse_question(f"{where}, questions[{q_index}]", raw_question, problems)
        if question is None:
            r.ok = False
        else:
            questions.append(question)

    extra = {k: v for k, v in record.items() if k not in CLAIM_KEYS}
    if not r.ok:
        return None
    assert claim_date is not None and article is not None  # required: read when r.ok
    return ParsedClaim(
        index=index,
        text=text,
        required_reannotation=bool(required_reannotation),
        label=label,
        justification=justification,
        claim_date=claim_date,
        speaker=speaker,
        original_claim_url=original_claim_url,
        fact_checking_article=article,
        reporting_source=reporting_source,
        location_iso_code=location,
        claim_types=claim_types,
        fact_checking_strategies=strategies,
        questions=questions,
        cached_original_claim_url=cached_original,
        keys=list(record.keys()),
        extra=extra,
    )


def _vocabulary_list(r: _Reader, key: str, canonical) -> list[str]:
    values = r.get(key, list, required=False)
    if values is None:
        return []
    for position, value in enumerate(values):
        if not isinstance(value, str):
            r._fail(f"{key}[{position}]", f"must be a string, not {_type_name(value)}")
        elif canonical(value) is None:
            r._fail(f"{key}[{position}]", f"unknown value {value!r}")
    return values


def _parse_question(where: str, raw: Any, problems: _Problems) -> ParsedQuestion | None:
    if not isinstance(raw, dict):
        problems.add(where, f"must be an object, not {_type_name(raw)}")
        return None
    r = _Reader(raw, where, problems)
    for key in raw:
        if key not in QUESTION_KEYS:
            r._fail(key, "is not a field of a question")
    text = r.get("question", str)
    raw_answers = r.get("answers", list)
    answers = []
    for a_index, raw_answer in enumerate(raw_answers or []):
        answer = _parse_answer(f"{where}, answers[{a_index}]", raw_answer, problems)
        if answer is None:
            r.ok = False
        else:
            answers.append(answer)
    if not r.ok:
        return None
    return ParsedQuestion(text=text, answers=answers, keys=list(raw.keys()))


def _parse_answer(where: str, raw: Any, problems: _Problems) -> ParsedAnswer | None:
    if not isinstance(raw, dict):
        problems.add(where, f"must be an object, not {_type_name(raw)}")
        return None
    r = _Reader(raw, where, problems)
    for key in raw:
        if key not in ANSWER_KEYS:
            r._fail(key, "is not a field of an answer")
    text = r.get("answer", str)
    answer_type = r.choice("answer_type", AnswerType.values)
    source_url = r.url("source_url", required=False)
    source_medium = r.choice("source_medium", SourceMedium.values, required=False)
    explanation = r.get("boolean_explanation", str, required=False, nullable=True)
    cached = r.get("cached_source_url", str, required=False, nullable=True)
    if not r.ok:
        return None
    return ParsedAnswer(
        text=text,
        answer_type=answer_type,
        source_url=source_url or "",
        source_medium=source_medium or "",
        boolean_explanation=explanation,
        cached_source_url=cached,
        keys=list(raw.keys()),
    )


# --- Writing ---------------------------------------------------------------------------


def ordered(values: dict[str, Any], keys: list[str] | None, default_keys: Iterable[str]) -> dict:
    """The values in the recorded key order; keys absent from the record stay absent."""
    return {key: values[key] for key in (keys if keys is not None else default_keys)}


def write_json_array(records: Iterable[dict], out: IO[str]) -> int:
    """Stream records as the release formats them (4-space indent, ASCII escapes).

    Writes record by record, so memory stays flat however large the export; for a list of
    records the bytes equal json.dumps(records, indent=4) + newline.
    """
    count = 0
    out.write("[")
    for record in records:
        body = json.dumps(record, indent=4)
        out.write(",\n" if count else "\n")
        out.write("\n".join("    " + line for line in body.splitlines()))
        count += 1
    out.write("\n]\n" if count else "]\n")
    return count


def write_json_lines(records: Iterable[dict], out: IO[str]) -> int:
    count = 0
    for record in records:
        out.write(json.dumps(record, ensure_ascii=False))
        out.write("\n")
        count += 1
    return count


def iter_json_lines(lines: Iterable[str]) -> Iterator[tuple[int, Any]]:
    """Decoded objects of a JSON-lines stream with their 1-based line numbers."""
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                yield number, read_json(line, f"line {number}", check=False)
            except InputRefused as exc:
                raise DatasetFormatError([str(exc)]) from exc
            except json.JSONDecodeError as exc:
                raise DatasetFormatError([f"line {number}: not valid JSON ({exc.msg})"]) from exc
