"""The rules for question-answer evidence (Phase 2 and the Phase 4 revision).

One function, `evidence_problems`, lists every problem of a set of pairs with where it is
(a path such as "questions.0.answers.1.source_url") and whether it blocks submission.
Blocking problems are errors everywhere (screen, API, workflow); the others are hints the
screen shows without nagging.
"""

from __future__ import annotations

import re

from annotation.models import Claim
from annotation.submissions import AnswerData, EvidenceData, Problem, too_long
from annotation.vocabulary import NO_ANSWER_TEXT, AnswerType, Phase, SourceMedium, Verdict
from search_proxy.flags import fact_check_findings, misinformation_among
from search_proxy.service import source_date_problems
from search_proxy.webaddress import is_web_address

# P2 and P4 alike (the guidelines' dispute resolution keeps the P2 instructions, which allow
# up to three answers). Released dataset files hold a few questions with four: imports are
# stored as they are (annotation/workflow.py) and never pass through this rule.
MAX_ANSWERS_PER_QUESTION = 3
# The original AVeriTeC tool asked for at least five questions before a claim whose
# questions all went unanswered could be handed in.
MIN_QUESTIONS_ALL_UNANSWERABLE = 5
METADATA_URL = "metadata"
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def restates_claim(question: str, claim_text: str) -> bool:
    """A question that is the claim with a question mark adds no evidence."""
    asked, claimed = _words(question), _words(claim_text)
    if len(claimed) < 4:
        return False
    return len(asked & claimed) / len(claimed) >= 0.8


MISINFORMATION_WARNING = (
    "This site is known for misinformation or satire. You may use "
    "it, but add a second source that confirms the answer."
)


def source_site_problems(path: str, url: str, claim: Claim) -> list[Problem]:
    """What is wrong with the site a source address points to: a fact-checker or the claim's
    own article (refused), a page first seen after the claim date, or a misinformation site
    (both allowed with a warning).

    The one home of these checks: the editor runs them as soon as an address is entered
    (annotation:source-check) and again on submit, the API and the workflow on submit.
    """
    return sources_site_problems([(path, url)], claim).get(path, [])


def sources_site_problems(cited: list[tuple[str, str]], claim: Claim) -> dict[str, list[Problem]]:
    """source_site_problems for every (path, address) of a set of pairs at once: one
    query per table (fact-checking and misinformation rules, index, snapshots, sources)
    whatever the number of answers, because autosave runs these on every save.
    Returns path -> its problems, for the paths with some."""
    addresses = {path: url.strip() for path, url in cited}
    web = [url for url in dict.fromkeys(addresses.values()) if is_web_address(url)]
    if not web:
        return {}
    findings = dict(zip(web, fact_check_findings(web, claim.article.url), strict=True))
    usable = [url for url in web if not findings[url].reveals]
    dated = source_date_problems(usable, claim.claim_date) if usable else {}
    marked = misinformation_among(usable) if usable else set()
    problems: dict[str, list[Problem]] = {}
    for path, url in addresses.items():
        if url not in findings:
            continue
        if findings[url].reveals:
            problems[path] = [Problem(path, findings[url].message)]
            continue
        found = []
        if url in dated:
            found.append(Problem(path, dated[url], blocking=False))
        if url in marked:
            found.append(Problem(path, MISINFORMATION_WARNING, blocking=False))
        if found:
            problems[path] = found
    return problems


def cited_addresses(data: EvidenceData) -> list[tuple[str, str]]:
    """(path, address) of every answer's source: what the cited-page checks read."""
    return [
        (f"questions.{qi}.answers.{ai}.source_url", answer.source_url.strip())
        for qi, question in enumerate(data.questions)
        for ai, answer in enumerate(question.answers)
    ]


def is_site_hint(problem: Problem) -> bool:
    """A hint from the cited-page checks: the only problems at a source address that do not
    block (the address's own form and length problems do)."""
    return not problem.blocking and problem.path.endswith(".source_url")


def evidence_problems(
    data: EvidenceData, claim: Claim, *, phase: int = Phase.QUESTIONS
) -> list[Problem]:
    """Every problem of `data`; the cited pages are looked up once per table for all of
    them (sources_site_problems)."""
    problems: list[Problem] = []
    if not data.questions:
        problems.append(Problem("questions", "Add at least one question."))
    elif len(data.questions) < 2:
        problems.append(
            Problem(
                "questions",
                "Most claims need two or more questions to be settled.",
                blocking=False,
            )
        )
    all_unanswerable = bool(data.questions)
    sites = sources_site_problems(cited_addresses(data), claim)
    for qi, question in enumerate(data.questions):
        where = f"questions.{qi}"
        text = question.text.strip()
        if not text:
            problems.append(Problem(f"{where}.text", "Write the question."))
        elif re.match(r"^\s*is\s+it\s+true\s+that\b", text, re.IGNORECASE):
            problems.append(
                Problem(
                    f"{where}.text",
                    "Ask about a fact the claim depends on, not whether the claim is true.",
                    blocking=False,
                )
            )
        elif restates_claim(text, claim.text):
            problems.append(
                Problem(
                    f"{where}.text",
                    "This question restates the whole claim; ask about one fact behind it.",
                    blocking=False,
                )
            )
        problems.extend(too_long(f"{where}.text", "question", question.text))
        if not question.answers:
            problems.append(Problem(f"{where}.answers", "Give at least one answer."))
        if len(question.answers) > MAX_ANSWERS_PER_QUESTION:
            problems.append(
                Problem(f"{where}.answers", f"At most {MAX_ANSWERS_PER_QUESTION} answers.")
            )
        for ai, answer in enumerate(question.answers):
            problems.extend(_answer_problems(f"{where}.answers.{ai}", answer, claim))
            if answer.answer_type != AnswerType.UNANSWERABLE:
                all_unanswerable = False
            problems.extend(sites.get(f"{where}.answers.{ai}.source_url", []))
    if all_unanswerable and len(data.questions) < MIN_QUESTIONS_ALL_UNANSWERABLE:
        problems.append(
            Problem(
                "questions",
                f"No question has an answer yet. Ask at least {MIN_QUESTIONS_ALL_UNANSWERABLE} "
                "questions before concluding nothing can be found, or report the claim.",
            )
        )
    problems.extend(too_long("claim_correction", "claim_correction", data.claim_correction))
    if data.verdict not in Verdict.values:
        problems.append(Problem("verdict", "Choose a verdict."))
    # A rule of P4 taking the phase as its parameter (one home per rule), not a dispatch.
    elif phase == Phase.DISPUTE and data.verdict == Verdict.NOT_ENOUGH_EVIDENCE:
        problems.append(
            Problem(
                "verdict",
                "Before settling on Not Enough Evidence, try to add the missing evidence.",
                blocking=False,
            )
        )
    return problems


def _answer_problems(where: str, answer: AnswerData, claim: Claim) -> list[Problem]:
    problems = [
        *too_long(f"{where}.text", "answer", answer.text),
        *too_long(
            f"{where}.boolean_explanation", "boolean_explanation", answer.boolean_explanation
        ),
        *too_long(f"{where}.source_url", "web_address", answer.source_url),
    ]
    kind = answer.answer_type
    if kind not in AnswerType.values:
        return [*problems, Problem(f"{where}.answer_type", "Choose the kind of answer.")]
    if kind == AnswerType.UNANSWERABLE:
        return problems
    if kind == AnswerType.BOOLEAN:
        if answer.text not in ("Yes", "No"):
            problems.append(Problem(f"{where}.text", "Answer Yes or No."))
        if not (answer.boolean_explanation or "").strip():
            problems.append(
                Problem(f"{where}.boolean_explanation", "Explain the Yes or No in a sentence.")
            )
    elif not answer.text.strip():
        problems.append(Problem(f"{where}.text", "Write the answer."))
    url = answer.source_url.strip()
    if answer.source_medium == SourceMedium.METADATA:
        if url.lower() != METADATA_URL:
            problems.append(
                Problem(f"{where}.source_url", "A Metadata answer has the source 'metadata'.")
            )
    elif not url:
        problems.append(Problem(f"{where}.source_url", "Give the address of the source."))
    elif not is_web_address(url) and url.lower() != METADATA_URL:
        problems.append(
            Problem(f"{where}.source_url", "The source must be a web address (http or https).")
        )
    if answer.source_medium not in SourceMedium.values or not answer.source_medium:
        problems.append(Problem(f"{where}.source_medium", "Choose the kind of source."))
    return problems


def normalise_answers(data: EvidenceData) -> EvidenceData:
    """Fill what the rules imply: unanswerable text, "metadata" URLs, no stray explanations."""
    for question in data.questions:
        question.text = question.text.strip()
        for answer in question.answers:
            if answer.answer_type == AnswerType.UNANSWERABLE:
                answer.text = NO_ANSWER_TEXT
                answer.source_url = ""
                answer.source_medium = ""
                answer.boolean_explanation = None
            else:
                if answer.source_medium == SourceMedium.METADATA:
                    answer.source_url = METADATA_URL
                if answer.answer_type != AnswerType.BOOLEAN:
                    answer.boolean_explanation = None
            answer.text = answer.text.strip()
            answer.source_url = answer.source_url.strip()
    return data


def blocking(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.blocking]
